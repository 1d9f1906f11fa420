"""The command-line grammar: turns argv into an `Invocation` or refuses it with a `UsageError`.

Owns the original's argument rules and validation order (cli-contract §1.5-§1.6) plus our stricter
value checks (spelled out in `grammar_values`), all before any I/O. Standard library only and
nothing heavy imported, because `manifest` and `--help` must answer fast.
"""

from __future__ import annotations

import json
import re
from typing import Final, NamedTuple

from memhtml.cli.grammar_values import value_problem
from memhtml.contracts.errors import UsageError
from memhtml.contracts.limits import MAX_MEMORY_BYTES, size_words
from memhtml.domain.nearest import SUGGESTION_LIMIT, family_members, nearest, nearest_command_names
from memhtml.surface.commands import (
    COMMANDS,
    COMPAT_VERSION,
    GLOBAL_FLAGS,
    NOT_YET_BUILT,
    CommandSpec,
    FlagSpec,
    FlagType,
    command_named,
)

UNKNOWN_COMMAND: Final = "ERR_UNKNOWN_COMMAND"
MISSING_ARGUMENT: Final = "ERR_MISSING_ARGUMENT"
INVALID_FLAG: Final = "ERR_INVALID_FLAG"
VERSION_FLAG: Final = "version"  # `memhtml --version`: the `version` command, on a bare line only
SHORT_VERSION: Final = "-V"
UNEXPECTED_ARGUMENT: Final = "ERR_UNEXPECTED_ARGUMENT"
REPO_REQUIRED: Final = "ERR_REPO_REQUIRED"

# A bare boolean flag followed by one of these reads as a mistaken `--flag value` (case-insensitive).
_STRAY_BOOLEAN_WORDS: Final = frozenset({"true", "false", "yes", "no", "0", "1"})
_FALSE_WORDS: Final = frozenset({"false", "0", "no", "off"})
_TRUE_WORDS: Final = frozenset({"true", "1", "yes", "on"})

# Every flag name known anywhere, with its type: a value-taking flag consumes the next token even
# before we know which command it belongs to (flags may precede the command words).
_FLAG_TYPES: Final[dict[str, FlagType]] = {flag.name: flag.type for flag in GLOBAL_FLAGS} | {
    flag.name: flag.type for command in COMMANDS for flag in command.flags
}
_GLOBAL_NAMES: Final = tuple(flag.name for flag in GLOBAL_FLAGS)
_NAMES: Final = [command.name for command in COMMANDS]


class _FlagToken(NamedTuple):
    """One flag as typed. `name` drops the dashes, and the `no-` of a negated known flag."""

    name: str
    spelling: str
    value: str | None = None
    negated: bool = False
    inline: bool = False
    stray: str | None = None


class _Tokens(NamedTuple):
    """The command line split into words and flags, in order (the lists fill while it is read)."""

    positionals: list[str]
    flags: list[_FlagToken]


class Invocation(NamedTuple):
    """A command line that passed the grammar. `values` holds this command's flags' raw values.

    `command` is None for a bare invocation (answered with the manifest). `help_topic` is the command
    to describe when a help answer is due (`help <cmd>`, `<cmd> --help`). Booleans are stored as
    `"true"`/`"false"`; blank values of an exactly-one pair are dropped because they count as absent.
    """

    command: CommandSpec | None
    positionals: tuple[str, ...]
    values: dict[str, list[str]]
    dense: bool = False
    repo: str | None = None
    json: bool = False
    help: bool = False
    help_topic: CommandSpec | None = None
    stdout_is_tty: bool = False

    def help_target(self) -> CommandSpec | None:
        """The command to describe; None means the whole manifest."""
        return self.help_topic

    def text(self, name: str) -> str | None:
        """The positional argument `name`, or the last value of string flag `name` (last wins), or its
        default, or None."""
        positional = self._positional(name)
        if positional is not None:
            return positional[0] if positional else None
        values = self._values_of(name)
        if values:
            return values[-1]
        default = self._spec(name).default
        return default if isinstance(default, str) else None

    def texts(self, name: str) -> list[str]:
        """Every value of flag `name`, or of a repeatable positional `name`, in command-line order."""
        positional = self._positional(name)
        return list(positional if positional is not None else self._values_of(name))

    def integer(self, name: str) -> int | None:
        """The last value of int flag `name`, already range-checked, or its default."""
        values = self._values_of(name)
        if values:
            return int(values[-1])
        default = self._spec(name).default
        return default if isinstance(default, int) and not isinstance(default, bool) else None

    def number(self, name: str) -> float | None:
        """The last value of number flag `name` as a float, already range-checked, or None."""
        values = self._values_of(name)
        return float(values[-1]) if values else None

    def flag(self, name: str) -> bool:
        """Boolean flag `name`: its last spelling wins; absent means its default."""
        values = self._values_of(name)
        if values:
            return values[-1] == "true"
        return self._spec(name).default is True

    def _spec(self, name: str) -> FlagSpec:
        spec = self.command.flag(name) if self.command else None
        if spec is None:
            raise KeyError(f"{name} is not a flag of {self.command.name if self.command else 'memhtml'}")
        return spec

    def _values_of(self, name: str) -> list[str]:
        self._spec(name)
        return self.values.get(name, [])

    def _positional(self, name: str) -> tuple[str, ...] | None:
        """The words the command's positional argument `name` took (the last, if repeatable, takes the
        rest); None when the command has no positional of that name."""
        arguments = self.command.args if self.command else ()
        for position, argument in enumerate(arguments):
            if argument.name == name:
                if argument.repeatable:
                    return self.positionals[position:]
                return self.positionals[position : position + 1]
        return None


def parse_command_line(argv: list[str], *, refuse_env_root: bool, stdout_is_tty: bool) -> Invocation:
    """Apply the grammar in the original's order; raise `UsageError` for the first violation found."""
    tokens = _tokenize(argv)
    words = _drop_leading_blanks(tokens.positionals)
    if not words or words == [SHORT_VERSION]:
        return _bare(tokens, stdout_is_tty, version_asked=bool(words))
    command, word_count = _resolve_command(words)
    positionals = tuple(words[word_count:])
    if _help_requested(tokens.flags):
        topic = _help_topic(positionals, lenient=True) if command.name == "help" else command
        return _invocation(command, positionals, _lenient_globals(tokens), stdout_is_tty, topic or command)
    _check_membership(command, tokens.flags)
    _check_flag_syntax(command, tokens.flags)
    values = _collect_values(command, tokens.flags)
    # First among the value checks: a later one would quote the bytes back in an answer that must be UTF-8.
    _check_text(command, positionals, values)
    if command.name == "help":
        topic = _help_topic(positionals, lenient=False)
        return _invocation(command, positionals, values, stdout_is_tty, help_topic=topic)
    _check_arity(command, positionals)
    _check_required(command, positionals, values)
    _check_exactly_one(command, values)
    _check_positional_values(command, positionals)
    _check_values(command, values, instants=True)
    _check_values(command, values, instants=False)
    _check_size(command, positionals, values)
    invocation = _invocation(command, positionals, values, stdout_is_tty, help_topic=None)
    if refuse_env_root and command.opens_repo and invocation.repo is None:
        raise _usage(
            command,
            REPO_REQUIRED,
            f"{command.name} opens a repo and MEMHTML_REFUSE_ENV_ROOT is set, so the root is not read "
            "from MEMHTML_ROOT or ~/memhtml: name it with --repo",
            [f"memhtml {command.name} --repo <path>"],
        )
    return invocation


def _tokenize(argv: list[str]) -> _Tokens:
    tokens = _Tokens([], [])
    index = 0
    while index < len(argv):
        token = argv[index]
        index += 1
        if token == "--":
            # The usual end of options: every later word is a positional, so a query such as
            # `--force-with-lease` can be searched for (the original refuses `--` as an unknown flag).
            tokens.positionals.extend(argv[index:])
            break
        if token == "-h":
            tokens.flags.append(_FlagToken("help", token))
            continue
        if not token.startswith("--"):
            tokens.positionals.append(token)
            continue
        name, equals, inline_value = token[2:].partition("=")
        negated = False
        if name not in _FLAG_TYPES and name.startswith("no-") and name[3:] in _FLAG_TYPES:
            name, negated = name[3:], True
        flag_type = _FLAG_TYPES.get(name)
        if equals:
            tokens.flags.append(_FlagToken(name, token, inline_value, negated, inline=True))
        elif negated or flag_type is None:
            tokens.flags.append(_FlagToken(name, token, negated=negated))
        elif flag_type == "boolean":
            follower = argv[index] if index < len(argv) else None
            stray = follower if follower is not None and follower.lower() in _STRAY_BOOLEAN_WORDS else None
            tokens.flags.append(_FlagToken(name, token, stray=stray))
        elif index < len(argv) and not argv[index].startswith("--"):
            # Only a `--` prefix stops consumption, so `--budget -5` and `--title -h` take a value.
            tokens.flags.append(_FlagToken(name, token, argv[index]))
            index += 1
        else:
            tokens.flags.append(_FlagToken(name, token))
    return tokens


def _bare(tokens: _Tokens, stdout_is_tty: bool, *, version_asked: bool) -> Invocation:
    """`memhtml` with flags only: the manifest, or the version for `--version` (or a lone `-V`, which
    stays a word anywhere else: `search -V` looks for it). Global flags are read as leniently as the
    original reads them; a flag that is none of them is refused (the original answers the manifest
    whatever it was given, so a typo went unnoticed)."""
    known = {*_GLOBAL_NAMES, VERSION_FLAG}
    for token in tokens.flags:
        if token.name not in known:
            typed = token.spelling.partition("=")[0]
            names = nearest(typed.lstrip("-"), sorted(known))
            # A bare line answers the manifest, so its help is the manifest's.
            suggestions = [f"memhtml --{name}" for name in names] + ["memhtml help manifest"]
            raise UsageError(INVALID_FLAG, f"unknown flag: {typed}", suggestions)
    if version_asked or any(token.name == VERSION_FLAG for token in tokens.flags):
        return _invocation(command_named("version"), (), _lenient_globals(tokens), stdout_is_tty, help_topic=None)
    return _invocation(None, (), _lenient_globals(tokens), stdout_is_tty, help_topic=None)


def _drop_leading_blanks(words: list[str]) -> list[str]:
    start = 0
    while start < len(words) and not words[start].strip():
        start += 1
    return words[start:]


def _resolve_command(words: list[str]) -> tuple[CommandSpec, int]:
    """Greedy: a two-word command beats a one-word one. Unknown names get the nearest known names."""
    found = _match(words)
    if found is None:
        raise _unknown_command(words)
    return found


def _unknown_command(words: list[str]) -> UsageError:
    """The refusal of command words that name no command we have (also for `help <words>`).

    A command of the original not built yet says so; a bare family noun (`index`) names the
    family's members, which the typo rule would not find; anything else gets the nearest names.
    """
    for count in (2, 1):
        phrase = " ".join(words[:count])
        if len(words) >= count and phrase in NOT_YET_BUILT:
            return UsageError(
                UNKNOWN_COMMAND,
                f"unknown command: {phrase} is a command of memhtml {COMPAT_VERSION} that this version "
                "does not have yet",
                ["memhtml manifest"],
                command=phrase,
            )
    if len(words) == 1:
        family = family_members(words[0], _NAMES)
        if family:
            return UsageError(UNKNOWN_COMMAND, f"unknown command: {words[0]}", family)
        unbuilt = family_members(words[0], list(NOT_YET_BUILT))
        if unbuilt:
            return UsageError(
                UNKNOWN_COMMAND,
                f"unknown command: {words[0]}: {', '.join(unbuilt)} are commands of memhtml "
                f"{COMPAT_VERSION} that this version does not have yet",
                ["memhtml manifest"],
            )
    return UsageError(UNKNOWN_COMMAND, f"unknown command: {' '.join(words)}", nearest_command_names(words, _NAMES))


def _match(words: list[str]) -> tuple[CommandSpec, int] | None:
    for count in (2, 1):
        if len(words) >= count:
            command = command_named(" ".join(words[:count]))
            if command is not None:
                return command, count
    return None


def _help_topic(words: tuple[str, ...], *, lenient: bool) -> CommandSpec | None:
    """The command `help <words>` describes; None for no words. Surplus words are refused."""
    topic_words = _drop_leading_blanks(list(words))
    if not topic_words:
        return None
    found = _match(topic_words)
    if found is None:
        raise _unknown_command(topic_words)
    topic, count = found
    surplus = topic_words[count:]
    if surplus and not lenient:
        raise UsageError(
            UNEXPECTED_ARGUMENT,
            f"unexpected argument: {_quoted(surplus)}. help describes one command: {topic.name}",
            [f"memhtml help {topic.name}"],
        )
    return topic


def _help_requested(flags: list[_FlagToken]) -> bool:
    # Help wins over everything, so any value but an explicit false word asks for it.
    spellings = [token for token in flags if token.name == "help"]
    if not spellings:
        return False
    last = spellings[-1]
    return not (last.negated or (last.value is not None and last.value.lower() in _FALSE_WORDS))


def _check_membership(command: CommandSpec, flags: list[_FlagToken]) -> None:
    own = {flag.name for flag in command.flags} | set(_GLOBAL_NAMES)
    for token in flags:
        if token.name in own:
            continue
        typed = token.spelling.partition("=")[0]
        owners = [other.name for other in COMMANDS if _accepts(other, token)]
        if owners:
            raise _usage(
                command,
                INVALID_FLAG,
                f"{typed} is not a flag of {command.name}",
                [f"memhtml {owner} {typed}" for owner in owners[:SUGGESTION_LIMIT]],
            )
        candidates = [flag.name for flag in command.flags] + list(_GLOBAL_NAMES)
        unknown = typed[2:]
        raise _usage(command, INVALID_FLAG, f"unknown flag: {typed}", nearest(unknown, candidates))


def _accepts(command: CommandSpec, token: _FlagToken) -> bool:
    spec = command.flag(token.name)
    return spec is not None and (not token.negated or spec.type == "boolean")


def _check_flag_syntax(command: CommandSpec, flags: list[_FlagToken]) -> None:
    for token in flags:
        spec = _flag_spec(command, token.name)
        name = f"--{spec.name}"
        if token.negated and not spec.takes_value and token.inline:
            raise _usage(
                command,
                INVALID_FLAG,
                f"--no-{spec.name} takes no value",
                [f"memhtml {command.name} --no-{spec.name}"],
            )
        if token.negated and spec.takes_value:
            raise _usage(
                command,
                INVALID_FLAG,
                f"--no-{spec.name}: {name} takes a value, so it cannot be negated",
                [f"memhtml {command.name} {name} <value>"],
            )
        if token.stray is not None:
            raise _usage(
                command,
                INVALID_FLAG,
                f"{name} is a boolean flag and takes no separate value, so `{name} {token.stray}` reads "
                f'as {name} with a stray "{token.stray}" argument',
                [f"memhtml {command.name} {name}={token.stray}", f"memhtml {command.name} --no-{spec.name}"],
            )
        if not spec.takes_value and token.inline and _boolean_word(token.value) is None:
            raise _usage(
                command,
                INVALID_FLAG,
                f"{name} is a boolean flag: {name}=true|false|yes|no|1|0|on|off, not {_quoted([token.value or ''])}",
                [f"memhtml {command.name} {name}", f"memhtml {command.name} --no-{spec.name}"],
            )
        if spec.takes_value and token.value is None:
            raise _usage(command, INVALID_FLAG, f"{name} needs a value", [f"memhtml {command.name} {name} <value>"])


def _flag_spec(command: CommandSpec, name: str) -> FlagSpec:
    spec = command.flag(name) or next((flag for flag in GLOBAL_FLAGS if flag.name == name), None)
    if spec is None:  # membership was checked first, so this is a defect
        raise AssertionError(f"--{name} passed membership for {command.name} without a spec")
    return spec


def _boolean_word(value: str | None) -> bool | None:
    if value is None:
        return True
    lowered = value.lower()
    if lowered in _TRUE_WORDS:
        return True
    if lowered in _FALSE_WORDS:
        return False
    return None


def _collect_values(command: CommandSpec, flags: list[_FlagToken]) -> dict[str, list[str]]:
    """Values of every flag, booleans normalized to "true"/"false"; globals included."""
    values: dict[str, list[str]] = {}
    for token in flags:
        spec = _flag_spec(command, token.name)
        if spec.takes_value:
            value = token.value or ""
        else:
            value = "false" if token.negated or _boolean_word(token.value) is False else "true"
        values.setdefault(spec.name, []).append(value)
    return values


def _check_arity(command: CommandSpec, positionals: tuple[str, ...]) -> None:
    if command.args and command.args[-1].repeatable:
        return
    surplus = positionals[len(command.args) :]
    if command.reads_stdin and surplus == ("-",):
        return
    if not surplus:
        return
    if command.args:
        takes = f"takes {len(command.args)}: {', '.join(arg.name for arg in command.args)}"
    else:
        takes = "takes no arguments"
    usage = " ".join(["memhtml", command.name, *(f"<{arg.name}>" for arg in command.args)])
    raise _usage(
        command,
        UNEXPECTED_ARGUMENT,
        f"unexpected argument: {_quoted(surplus)}. {command.name} {takes}",
        [usage, "memhtml manifest"],
    )


def _check_required(command: CommandSpec, positionals: tuple[str, ...], values: dict[str, list[str]]) -> None:
    # Whitespace-only text counts as missing: it would only fail later, after I/O, as a bad memory.
    missing_args = [
        arg.name
        for index, arg in enumerate(command.args)
        if arg.required and (index >= len(positionals) or not positionals[index].strip())
    ]
    if missing_args:
        raise _usage(
            command,
            MISSING_ARGUMENT,
            f"{command.name} requires: {', '.join(missing_args)}",
            [f"memhtml {command.name} <{missing_args[0]}>"],
        )
    missing_flags = [
        flag.name for flag in command.flags if flag.required and not _last_is_filled(values.get(flag.name))
    ]
    if missing_flags:
        raise _usage(
            command,
            MISSING_ARGUMENT,
            f"{command.name} requires: {', '.join('--' + name for name in missing_flags)}",
            [f"memhtml {command.name} --{name} <value>" for name in missing_flags],
        )


def _last_is_filled(values: list[str] | None) -> bool:
    if not values:
        return False
    return bool(values[-1].strip())


def _check_exactly_one(command: CommandSpec, values: dict[str, list[str]]) -> None:
    for choice in command.exactly_one_of:
        first, second = choice.flags
        given = [name for name in choice.flags if _last_is_filled(values.get(name))]
        suggestions = [
            f"memhtml {command.name} --{name} {hint}"
            for name, hint in zip(choice.flags, choice.placeholders, strict=True)
        ]
        if len(given) == 2:
            raise _usage(
                command,
                INVALID_FLAG,
                f"{command.name} takes exactly one of --{first} or --{second}, not both: {choice.conflict}",
                suggestions,
            )
        if not given:
            raise _usage(
                command,
                MISSING_ARGUMENT,
                f"{command.name} requires exactly one of --{first} or --{second}",
                suggestions,
            )
        # The blank one counts as absent, so the operation never sees it.
        for name in choice.flags:
            if name not in given:
                values.pop(name, None)


def _check_values(command: CommandSpec, values: dict[str, list[str]], *, instants: bool) -> None:
    """Every value of every flag, repeated ones included: instants first (the original checks
    `--as-of` before vocabularies), then closed vocabularies, integers and the other formats."""
    for spec in command.flags:
        if spec.instant != instants:
            continue
        for value in values.get(spec.name, []):
            problem = value_problem(spec, value)
            if problem is not None:
                message, hints = problem
                raise _usage(
                    command,
                    INVALID_FLAG,
                    message,
                    [f"memhtml {command.name} --{spec.name} {hint}" for hint in hints],
                )


def _check_size(command: CommandSpec, positionals: tuple[str, ...], values: dict[str, list[str]]) -> None:
    """A command line carrying more bytes of values than a whole memory file may hold is refused here,
    before any I/O (no command needs more; a write of it could only be refused later)."""
    texts = [*positionals, *(value for listed in values.values() for value in listed)]
    size = sum(len(text.encode("utf-8", "surrogatepass")) for text in texts)
    if size > MAX_MEMORY_BYTES:
        raise _usage(
            command,
            INVALID_FLAG,
            f"{command.name}: the command line carries {size} bytes of values; at most {MAX_MEMORY_BYTES} "
            f"({size_words(MAX_MEMORY_BYTES)}, the largest memory file) are accepted",
            ["split the text into several memories (one fact each)"],
        )


# Bytes of an argument that were not UTF-8 reach Python as lone surrogates (POSIX decodes argv with
# `surrogateescape`). No query, tag, path or text can hold them: git, DuckDB and the files are UTF-8.
_NOT_UTF8: Final = re.compile("[\ud800-\udfff]")


def _check_text(command: CommandSpec, positionals: tuple[str, ...], values: dict[str, list[str]]) -> None:
    """Every value must be UTF-8 text; refused here, at exit 2, before any I/O (later it would fail as a
    storage or tokenizer error at exit 1, and advise a retry that cannot help)."""
    named = [(f"the argument {_shown(value)}", value) for value in positionals]
    named += [(f"--{name} {_shown(value)}", value) for name, listed in values.items() for value in listed]
    for where, value in named:
        if _NOT_UTF8.search(value):
            raise _usage(
                command,
                INVALID_FLAG,
                f"{command.name}: {where} is not valid UTF-8 text",
                ["pass the text as UTF-8 (check the encoding of the terminal or the script that called memhtml)"],
            )


def _shown(value: str) -> str:
    """`value` printable in a UTF-8 answer, each byte that was not UTF-8 as a `\\xff` escape."""
    try:
        raw = value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no byte decoded to (a caller passing a str of its own)
        raw = value.encode("utf-8", "backslashreplace")
    return f"`{raw.decode('utf-8', 'backslashreplace')}`"


def _check_positional_values(command: CommandSpec, positionals: tuple[str, ...]) -> None:
    """A positional with a closed vocabulary (`link`'s rel, `task status`'s status) is a usage error
    at exit 2 when outside it, like a flag's value (the original finds these late, at exit 1)."""
    for arg, value in zip(command.args, positionals, strict=False):
        if arg.values is None or value in arg.values:
            continue
        shown = [*positionals]
        hints = nearest(value, list(arg.values)) or list(arg.values[:SUGGESTION_LIMIT])
        suggestions = []
        for hint in hints:
            shown[command.args.index(arg)] = hint
            suggestions.append(" ".join(["memhtml", command.name, *shown]))
        raise _usage(
            command,
            INVALID_FLAG,
            f"unknown {arg.name}: {value}. One of: {', '.join(arg.values)}",
            suggestions,
        )


def _lenient_globals(tokens: _Tokens) -> dict[str, list[str]]:
    """Global flag values of a line that is not checked (bare, help): any boolean word but a false
    one reads as true, and every other flag is ignored, as in the original."""
    values: dict[str, list[str]] = {}
    for token in tokens.flags:
        if token.name not in _GLOBAL_NAMES:
            continue
        if _FLAG_TYPES[token.name] != "boolean":
            value = token.value or ""
        else:
            value = "false" if token.negated or _boolean_word(token.value) is False else "true"
        values.setdefault(token.name, []).append(value)
    return values


def _invocation(
    command: CommandSpec | None,
    positionals: tuple[str, ...],
    values: dict[str, list[str]],
    stdout_is_tty: bool,
    help_topic: CommandSpec | None,
) -> Invocation:
    """Split the global flags out of `values` into the Invocation's own fields."""
    repo_values = values.pop("repo", [])
    dense = values.pop("dense", ["false"])[-1] == "true"
    wants_json = values.pop("json", ["false"])[-1] == "true"
    asked_help = values.pop("help", ["false"])[-1] == "true"
    return Invocation(
        command=command,
        positionals=positionals,
        values=values,
        dense=dense,
        # A blank --repo names nothing, so the usual fallbacks (or the refusal guard) apply.
        repo=repo_values[-1] if repo_values and repo_values[-1].strip() else None,
        json=wants_json,
        help=asked_help,
        help_topic=help_topic,
        stdout_is_tty=stdout_is_tty,
    )


def _usage(command: CommandSpec, code: str, message: str, suggestions: list[str]) -> UsageError:
    """A usage error on a known command: `memhtml help <cmd>` always comes last; no duplicates."""
    unique = list(dict.fromkeys([*suggestions, f"memhtml help {command.name}"]))
    return UsageError(code, message, unique, command=command.name)


def _quoted(words: list[str] | tuple[str, ...]) -> str:
    # JSON string quoting, as the original prints surplus arguments (`"b", "c"`).
    return ", ".join(json.dumps(word, ensure_ascii=False) for word in words)
