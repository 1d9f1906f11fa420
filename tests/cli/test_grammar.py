"""The argument grammar: each rule of cli-contract §1.5-§1.6, with the original's observed messages.

Expected messages and suggestion lists marked "observed" were captured from memhtml 0.15.1.
"""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.cli.grammar import Invocation, parse_command_line
from memhtml.contracts.errors import USAGE_ERROR_CODES, UsageError
from memhtml.domain.nearest import (
    distance_budget,
    family_members,
    levenshtein,
    nearest,
    nearest_command_names,
)
from memhtml.surface.commands import ADDED_COMMANDS, COMMANDS, GLOBAL_FLAGS, NOT_YET_BUILT, command_named

TYPES = "episodic, semantic, procedural, agent_insight, user_preference, error_pattern, verdict, precedent, arc, task"
# The original's 47 command names, frozen so the suggestion rule is checked against its real table.
ORIGINAL_COMMANDS = [
    "manifest", "help", "init", "write", "apply", "read", "search", "recall", "correct", "link",
    "neighbors", "resolve", "archive", "reinforce", "list", "entity activity", "task add",
    "task status", "task list", "index rebuild", "index update", "index embed", "index status",
    "trace index", "trace search", "trace links", "sleep run", "sleep resume", "sleep review",
    "sleep merge", "sleep status", "sleep plan", "status", "publish", "doctor", "eval discriminate",
    "exec", "state export", "state import", "agents-doc", "serve mcp", "integrations install",
    "integrations uninstall", "integrations list", "integrations doctor", "integrations shell", "hook",
]  # fmt: skip
WRITE_OK = ["write", "--title", "t", "--type", "semantic", "--claim", "c"]


def parse(*argv: str, refuse_env_root: bool = False) -> Invocation:
    return parse_command_line(list(argv), refuse_env_root=refuse_env_root, stdout_is_tty=False)


def refusal(*argv: str, refuse_env_root: bool = False) -> tuple[str, str, list[str]]:
    with pytest.raises(UsageError) as caught:
        parse(*argv, refuse_env_root=refuse_env_root)
    error = caught.value
    assert error.usage, "every grammar refusal is a usage error (exit 2)"
    return error.envelope_code, error.message, error.suggestions


# --- help short-circuit and the manifest --------------------------------------------------------


def test_help_flag_beats_an_invalid_closed_vocabulary_value() -> None:
    invocation = parse("write", "--type", "bogus", "--help")
    assert invocation.help and invocation.help_target() is command_named("write")


def test_short_help_beats_unknown_flags_and_surplus_arguments() -> None:
    assert parse("write", "--titel", "x", "-h").help_target() is command_named("write")
    assert parse("read", "a", "b", "--help").help_target() is command_named("read")


def test_help_false_does_not_short_circuit() -> None:
    assert refusal("write", "--help=false")[0] == "ERR_MISSING_ARGUMENT"
    assert refusal("write", "--no-help")[0] == "ERR_MISSING_ARGUMENT"


def test_help_command_describes_its_argument() -> None:
    invocation = parse("help", "write")
    assert invocation.command is command_named("help")
    assert invocation.help_target() is command_named("write")
    assert parse("help", "-h", "write").help_target() is command_named("write")
    assert parse("help", "--help").help_target() is command_named("help")


def test_help_alone_and_bare_invocation_answer_with_the_manifest() -> None:
    assert parse("help").help_target() is None
    bare = parse()
    assert bare.command is None and bare.help_target() is None and not bare.help
    assert parse("--help").command is None and parse("-h").help
    assert parse("--dense", "--repo", "/tmp/x").dense
    # Unlike the original, which answers a bare line's typo with the manifest, a flag that is no
    # global flag is refused, with the nearest ones.
    assert refusal("--titel") == ("ERR_INVALID_FLAG", "unknown flag: --titel", ["memhtml help manifest"])
    assert refusal("--verison") == (
        "ERR_INVALID_FLAG",
        "unknown flag: --verison",
        ["memhtml --version", "memhtml --json", "memhtml help manifest"],
    )


def test_version_and_its_two_flags_name_the_version_command() -> None:
    for argv in (["version"], ["--version"], ["-V"], ["--json", "--version"], ["-V", "--dense"]):
        assert parse(*argv).command is command_named("version"), argv
    assert parse("-V", "--dense").dense
    assert parse("search", "-V").text("query") == "-V"  # anywhere else it is a word, as before
    # Not a global flag: beside a command it is that command's unknown flag.
    assert refusal("write", "--version", "--title", "t")[0] == "ERR_INVALID_FLAG"


def test_help_on_an_unknown_command_is_an_unknown_command() -> None:
    assert refusal("writ", "-h") == ("ERR_UNKNOWN_COMMAND", "unknown command: writ", ["write", "init"])


def test_help_errors_observed() -> None:
    assert refusal("help", "writ") == ("ERR_UNKNOWN_COMMAND", "unknown command: writ", ["write", "init"])
    assert refusal("help", "write", "foo", "bar") == (
        "ERR_UNEXPECTED_ARGUMENT",
        'unexpected argument: "foo", "bar". help describes one command: write',
        ["memhtml help write"],
    )
    assert refusal("help", "write", "--titel") == (
        "ERR_INVALID_FLAG",
        "unknown flag: --titel",
        ["memhtml help help"],
    )


# --- unknown commands and nearest names ---------------------------------------------------------


def test_unknown_command_observed() -> None:
    assert refusal("writ") == ("ERR_UNKNOWN_COMMAND", "unknown command: writ", ["write", "init"])
    assert refusal("x") == ("ERR_UNKNOWN_COMMAND", "unknown command: x", [])
    # The message names every positional typed; suggestions come from the first one or two.
    assert refusal("wirte", "foo", "bar")[1] == "unknown command: wirte foo bar"


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("writ", ["write", "init"]),
        ("wirte", ["write", "list"]),
        ("index", ["init"]),
        ("index rebiuld", ["index rebuild", "index embed", "index status"]),
        ("indx status", ["index status", "task status", "sleep status"]),
        ("sleep statsu", ["sleep status", "sleep plan", "index status"]),
        ("writ foo", ["write", "init"]),
        ("exe run", ["sleep run", "exec"]),  # the phrase is compared first, the word fills in
        ("stat foo", ["status"]),
        ("task", []),
    ],
)
def test_command_suggestions_match_the_original_table(typed: str, expected: list[str]) -> None:
    assert nearest_command_names(typed.split(), ORIGINAL_COMMANDS) == expected


def test_a_family_noun_names_its_members() -> None:
    assert family_members("index", ORIGINAL_COMMANDS) == [
        "index rebuild",
        "index update",
        "index embed",
        "index status",
    ]
    assert family_members("write", ORIGINAL_COMMANDS) == []


def test_nearest_rule() -> None:
    assert distance_budget("ab") == 2 and distance_budget("abcde") == 3
    assert nearest("titel", ["title", "claim", "type", "tag"]) == ["title", "type"]
    assert nearest("aaaa", ["aaab", "aaac", "aabb", "aaad"]) == ["aaab", "aaac", "aaad"]  # ties keep order
    assert levenshtein("kitten", "sitting") == 3


@given(st.text(max_size=8), st.text(max_size=8), st.text(max_size=8))
def test_levenshtein_is_a_metric(a: str, b: str, c: str) -> None:
    assert levenshtein(a, b) == levenshtein(b, a)
    assert (levenshtein(a, b) == 0) == (a == b)
    assert levenshtein(a, c) <= levenshtein(a, b) + levenshtein(b, c)


# --- flag membership ----------------------------------------------------------------------------


def test_unknown_flag_observed() -> None:
    assert refusal("write", "--titel", "x") == (
        "ERR_INVALID_FLAG",
        "unknown flag: --titel",
        ["title", "type", "memhtml help write"],
    )
    assert refusal("write", "--dens") == (
        "ERR_INVALID_FLAG",
        "unknown flag: --dens",
        ["dense", "memhtml help write"],
    )


# --- `--` ends the options (the original refuses it as `unknown flag: --`) ----------------------


def test_double_dash_makes_every_later_word_a_positional() -> None:
    assert parse("search", "--", "--force-with-lease").positionals == ("--force-with-lease",)
    assert parse("search", "--", "-h").positionals == ("-h",)
    assert not parse("search", "--", "-h").help
    assert parse("--", "search", "pool size").positionals == ("pool size",)
    with_limit = parse("search", "--limit", "3", "--", "--limit")
    assert with_limit.positionals == ("--limit",)
    assert with_limit.values == {"limit": ["3"]}


def test_words_after_double_dash_meet_the_arity_rules() -> None:
    assert refusal("status", "--", "foo")[:2] == (
        "ERR_UNEXPECTED_ARGUMENT",
        'unexpected argument: "foo". status takes no arguments',
    )
    assert refusal("search", "--")[1] == "search requires: query"
    assert refusal("write", "--title", "--", "x")[1] == "--title needs a value"


def test_flag_of_another_command() -> None:
    assert refusal("read", "a", "--title", "x") == (
        "ERR_INVALID_FLAG",
        "--title is not a flag of read",
        ["memhtml write --title", "memhtml correct --title", "memhtml task add --title", "memhtml help read"],
    )


def test_membership_is_checked_in_command_line_order_before_values() -> None:
    assert refusal("write", "--type", "bogus", "--titel", "x")[1] == "unknown flag: --titel"
    assert refusal("write", "--strict-path", "true", "--titel", "x")[1] == "unknown flag: --titel"


def test_json_is_a_global_flag_in_ours() -> None:
    invocation = parse("status", "--json")
    assert invocation.json and invocation.command is command_named("status")


def test_flags_may_precede_the_command() -> None:
    invocation = parse("--repo", "/tmp/gx", "--dense", "status")
    assert invocation.command is command_named("status") and invocation.repo == "/tmp/gx" and invocation.dense


# --- spellings, booleans and stray values -------------------------------------------------------


def test_equals_and_separate_value_forms_are_equivalent() -> None:
    spaced = parse("write", "--title", "t", "--type", "semantic", "--claim", "c")
    joined = parse("write", "--title=t", "--type=semantic", "--claim=c")
    assert spaced.values == joined.values
    assert parse("write", "--title=a=b", "--type", "semantic", "--claim", "c").text("title") == "a=b"


def test_last_value_wins_and_repeatable_flags_keep_every_value() -> None:
    invocation = parse(*WRITE_OK, "--title", "u", "--tag", "a", "--tag", "b", "--body", "x", "--body", "y")
    assert invocation.text("title") == "u"
    assert invocation.texts("title") == ["t", "u"]
    assert invocation.texts("tag") == ["a", "b"]
    assert invocation.texts("body") == ["x", "y"]


def test_boolean_spellings() -> None:
    assert parse(*WRITE_OK, "--strict-path").flag("strict-path") is True
    assert parse(*WRITE_OK).flag("strict-path") is False
    assert parse(*WRITE_OK, "--strict-path", "--no-strict-path").flag("strict-path") is False
    for false_word in ("false", "0", "no", "off", "FALSE"):
        assert parse(*WRITE_OK, f"--strict-path={false_word}").flag("strict-path") is False
    for true_word in ("true", "1", "yes", "on"):
        assert parse(*WRITE_OK, f"--strict-path={true_word}").flag("strict-path") is True


def test_unreadable_boolean_value_is_refused() -> None:
    code, message, _ = refusal(*WRITE_OK, "--strict-path=maybe")
    assert code == "ERR_INVALID_FLAG" and message.startswith("--strict-path is a boolean flag")


def test_negation_is_only_for_known_boolean_flags() -> None:
    assert refusal("write", "--no-title", "x")[:2] == (
        "ERR_INVALID_FLAG",
        "--no-title: --title takes a value, so it cannot be negated",
    )
    assert refusal("write", "--no-bogus")[:2] == ("ERR_INVALID_FLAG", "unknown flag: --no-bogus")


def test_stray_boolean_value_observed() -> None:
    assert refusal("write", "--strict-path", "true", "--title", "t") == (
        "ERR_INVALID_FLAG",
        "--strict-path is a boolean flag and takes no separate value, so `--strict-path true` reads as "
        '--strict-path with a stray "true" argument',
        ["memhtml write --strict-path=true", "memhtml write --no-strict-path", "memhtml help write"],
    )
    assert refusal("write", "--dense", "TRUE")[2][:2] == [
        "memhtml write --dense=TRUE",
        "memhtml write --no-dense",
    ]


def test_a_non_boolean_word_after_a_boolean_is_a_positional() -> None:
    assert refusal("write", "--strict-path", "maybe")[:2] == (
        "ERR_UNEXPECTED_ARGUMENT",
        'unexpected argument: "maybe". write takes no arguments',
    )


def test_value_flags_consume_the_next_token_unless_it_starts_with_two_dashes() -> None:
    assert parse("write", "--title", "-h", "--type", "semantic", "--claim", "c").text("title") == "-h"
    assert parse("write", "--title", "-5", "--type", "semantic", "--claim", "c").text("title") == "-5"
    assert refusal("write", "--title", "--type", "semantic") == (
        "ERR_INVALID_FLAG",
        "--title needs a value",
        ["memhtml write --title <value>", "memhtml help write"],
    )


# --- positionals --------------------------------------------------------------------------------


def test_surplus_positionals_observed() -> None:
    assert refusal("read", "a", "b") == (
        "ERR_UNEXPECTED_ARGUMENT",
        'unexpected argument: "b". read takes 1: path',
        ["memhtml read <path>", "memhtml manifest", "memhtml help read"],
    )
    assert refusal("write", "x", "y")[1] == 'unexpected argument: "x", "y". write takes no arguments'
    assert refusal("status", "-x")[1] == 'unexpected argument: "-x". status takes no arguments'


def test_positionals_after_the_command_reach_the_invocation() -> None:
    invocation = parse("read", "areas/inbox/x.html", "--session-id", "s")
    assert invocation.positionals == ("areas/inbox/x.html",)
    assert invocation.text("session-id") == "s"


# --- required arguments and flags ---------------------------------------------------------------


def test_missing_required_flags_observed() -> None:
    assert refusal("write") == (
        "ERR_MISSING_ARGUMENT",
        "write requires: --title, --type",
        ["memhtml write --title <value>", "memhtml write --type <value>", "memhtml help write"],
    )
    assert refusal("write", "--type", "semantic", "--claim", "c") == (
        "ERR_MISSING_ARGUMENT",
        "write requires: --title",
        ["memhtml write --title <value>", "memhtml help write"],
    )


def test_missing_required_argument_observed() -> None:
    assert refusal("read") == (
        "ERR_MISSING_ARGUMENT",
        "read requires: path",
        ["memhtml read <path>", "memhtml help read"],
    )


def test_whitespace_only_required_text_counts_as_missing() -> None:
    assert refusal("write", "--title", "  ", "--type", "semantic", "--claim", "c")[1] == "write requires: --title"
    assert refusal("read", " ")[1] == "read requires: path"


def test_surplus_comes_before_missing_and_missing_before_the_claim_choice() -> None:
    assert refusal("write", "x")[0] == "ERR_UNEXPECTED_ARGUMENT"
    assert refusal("write", "--claim", "c")[1] == "write requires: --title, --type"


# --- claim / article-html -----------------------------------------------------------------------

CLAIM_SUGGESTIONS = [
    "memhtml write --claim <sentence>",
    "memhtml write --article-html '<p>…</p>'",
    "memhtml help write",
]


def test_claim_and_article_together_observed() -> None:
    assert refusal(*WRITE_OK, "--article-html", "<p><mark>x</mark></p>") == (
        "ERR_INVALID_FLAG",
        "write takes exactly one of --claim or --article-html, not both: --article-html is the whole "
        "article, so a --claim beside it would be silently discarded",
        CLAIM_SUGGESTIONS,
    )


def test_neither_claim_nor_article_observed() -> None:
    assert refusal("write", "--title", "t", "--type", "semantic") == (
        "ERR_MISSING_ARGUMENT",
        "write requires exactly one of --claim or --article-html",
        CLAIM_SUGGESTIONS,
    )


def test_a_blank_claim_or_article_counts_as_absent() -> None:
    assert refusal("write", "--title", "t", "--type", "semantic", "--claim", " ")[0] == "ERR_MISSING_ARGUMENT"
    invocation = parse(*WRITE_OK, "--article-html", "")
    assert invocation.text("claim") == "c" and invocation.text("article-html") is None


# --- values: vocabularies, numbers, entities ----------------------------------------------------


def test_closed_vocabulary_observed_and_every_value_checked() -> None:
    expected = ("ERR_INVALID_FLAG", f"--type must be one of: {TYPES}", ["memhtml help write"])
    assert refusal("write", "--type", "bogus", "--title", "t", "--claim", "c") == expected
    # The last value would be valid; the earlier one still fails the call.
    assert refusal("write", "--type", "bogus", "--type", "semantic", "--title", "t", "--claim", "c") == expected


@pytest.mark.parametrize("value", ["11", "0", "abc", "1.0", "", "1_0", "9" * 5000])
def test_importance_must_be_an_integer_from_1_to_10(value: str) -> None:
    assert refusal(*WRITE_OK, "--importance", value) == (
        "ERR_INVALID_FLAG",
        f'--importance must be an integer from 1 to 10, not "{value}"',
        ["memhtml write --importance <1-10>", "memhtml help write"],
    )


def test_importance_in_range_is_typed() -> None:
    assert parse(*WRITE_OK, "--importance", "10").integer("importance") == 10
    assert parse(*WRITE_OK).integer("importance") is None


@pytest.mark.parametrize("value", ["abc", "1.5", "-0.1", "nan", "inf", "NaN", "1e400", ""])
def test_confidence_must_be_a_number_from_0_to_1(value: str) -> None:
    code, message, suggestions = refusal(*WRITE_OK, "--confidence", value)
    assert code == "ERR_INVALID_FLAG"
    assert message == f'--confidence must be a number from 0 to 1, not "{value}"'
    assert suggestions == ["memhtml write --confidence <0-1>", "memhtml help write"]


@pytest.mark.parametrize(("value", "number"), [("0", 0.0), ("1", 1.0), (".5", 0.5), ("0.125", 0.125), ("1e-1", 0.1)])
def test_confidence_in_range_is_typed(value: str, number: float) -> None:
    assert parse(*WRITE_OK, "--confidence", value).number("confidence") == number


@pytest.mark.parametrize("value", ["nocolon", ":name", "type:", " :name", "type: "])
def test_entity_needs_a_type_and_a_name(value: str) -> None:
    code, message, suggestions = refusal(*WRITE_OK, "--entity", "service:ok", "--entity", value)
    assert code == "ERR_INVALID_FLAG" and message.startswith("--entity must be a `type:name` entity reference")
    assert suggestions == ["memhtml write --entity <type>:<name>", "memhtml help write"]


def test_entities_are_kept_in_order() -> None:
    invocation = parse(*WRITE_OK, "--entity", "service:checkout", "--entity", "url:http://x")
    assert invocation.texts("entity") == ["service:checkout", "url:http://x"]


# --- retrieval, index and state commands: typical lines ------------------------------------------

RETRIEVAL_TYPES = (
    "episodic, semantic, procedural, agent_insight, user_preference, error_pattern, verdict, precedent, task"
)
AS_OF_MESSAGE = (
    "--as-of must be an ISO date or datetime (YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ) or a commit sha "
    '(4 to 40 hex digits), not "{}": the point-in-time window compares it as a string, so a value '
    "outside that grammar selects a different window rather than failing"
)


@pytest.mark.parametrize("example", [example for command in COMMANDS for example in command.examples])
def test_every_published_example_parses(example: str) -> None:
    words = shlex.split(example)
    assert words[0] == "memhtml"
    invocation = parse(*words[1:])
    assert invocation.command is not None


def test_search_example_is_typed() -> None:
    invocation = parse("search", "why the VIP drain was reverted", "--limit", "5")
    assert invocation.command is command_named("search")
    assert invocation.positionals == ("why the VIP drain was reverted",)
    assert invocation.integer("limit") == 5
    scoped = parse("search", "rollback", "--type", "semantic", "--type", "procedural", "--tag", "infra")
    assert scoped.texts("type") == ["semantic", "procedural"] and scoped.texts("tag") == ["infra"]
    assert scoped.integer("limit") == 10 and scoped.flag("include-archived") is False
    faceted = parse("search", "deploy", "--facet", "doc-type=runbook", "--include-archived", "--dense")
    assert faceted.texts("facet") == ["doc-type=runbook"] and faceted.flag("include-archived")
    assert faceted.dense


def test_recall_example_is_typed() -> None:
    assert parse("recall", "checkout", "--budget", "8000").integer("budget") == 8000
    assert parse("recall", "checkout").integer("budget") == 16000
    scoped = parse("recall", "incident", "--workspace", "payments", "--as-of", "2026-08-01T00:00:00Z")
    assert scoped.text("workspace") == "payments" and scoped.text("as-of") == "2026-08-01T00:00:00Z"


def test_list_neighbors_resolve_reinforce_are_typed() -> None:
    listed = parse("list", "--type", "episodic", "--limit", "20", "--cursor", "areas/inbox/a.html")
    assert (listed.text("type"), listed.integer("limit"), listed.text("cursor")) == (
        "episodic",
        20,
        "areas/inbox/a.html",
    )
    assert parse("list").integer("limit") == 50 and parse("list").text("cursor") is None
    graph = parse("neighbors", "areas/inbox/a.html")
    assert graph.positionals == ("areas/inbox/a.html",)
    assert (graph.integer("depth"), graph.integer("limit"), graph.texts("rel")) == (1, 200, [])
    assert parse("neighbors", "a", "--depth", "2", "--rel", "supersedes").integer("depth") == 2
    assert parse("resolve", "resources/x.html").positionals == ("resources/x.html",)
    bumped = parse("reinforce", "a.html", "b.html", "c.html")
    assert bumped.positionals == ("a.html", "b.html", "c.html") and bumped.text("signal") == "neutral"
    assert parse("reinforce", "a.html", "--signal", "positive").text("signal") == "positive"


def test_index_and_state_commands_resolve_greedily() -> None:
    rebuild = parse("index", "rebuild", "--no-embed", "--force")
    assert rebuild.command is command_named("index rebuild") and rebuild.positionals == ()
    assert rebuild.flag("embed") is False and rebuild.flag("force") is True
    assert parse("index", "rebuild").flag("embed") is True
    assert parse("index", "update").flag("embed") is True
    assert parse("--dense", "index", "status").command is command_named("index status")
    assert parse("state", "export").command is command_named("state export")
    assert parse("state", "import").command is command_named("state import")
    assert parse("help", "index", "rebuild").help_target() is command_named("index rebuild")
    assert parse("index", "status", "--help").help_target() is command_named("index status")


def test_two_word_commands_take_no_arguments_observed() -> None:
    assert refusal("index", "rebuild", "x") == (
        "ERR_UNEXPECTED_ARGUMENT",
        'unexpected argument: "x". index rebuild takes no arguments',
        ["memhtml index rebuild", "memhtml manifest", "memhtml help index rebuild"],
    )
    assert refusal("state", "export", "x")[2] == [
        "memhtml state export",
        "memhtml manifest",
        "memhtml help state export",
    ]


def test_embed_false_is_a_stray_boolean_observed() -> None:
    assert refusal("index", "rebuild", "--embed", "false") == (
        "ERR_INVALID_FLAG",
        "--embed is a boolean flag and takes no separate value, so `--embed false` reads as --embed "
        'with a stray "false" argument',
        [
            "memhtml index rebuild --embed=false",
            "memhtml index rebuild --no-embed",
            "memhtml help index rebuild",
        ],
    )


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["search"], ("search requires: query", ["memhtml search <query>", "memhtml help search"])),
        (["recall"], ("recall requires: query", ["memhtml recall <query>", "memhtml help recall"])),
        (["neighbors"], ("neighbors requires: path", ["memhtml neighbors <path>", "memhtml help neighbors"])),
        (["resolve"], ("resolve requires: path", ["memhtml resolve <path>", "memhtml help resolve"])),
        (["reinforce"], ("reinforce requires: path", ["memhtml reinforce <path>", "memhtml help reinforce"])),
        # Ours only: the original runs a blank query and ranks the corpus by recency.
        (["search", " "], ("search requires: query", ["memhtml search <query>", "memhtml help search"])),
    ],
)
def test_missing_query_or_path_observed(argv: list[str], expected: tuple[str, list[str]]) -> None:
    assert refusal(*argv) == ("ERR_MISSING_ARGUMENT", *expected)


def test_surplus_arguments_of_the_new_commands_observed() -> None:
    assert refusal("search", "q", "r") == (
        "ERR_UNEXPECTED_ARGUMENT",
        'unexpected argument: "r". search takes 1: query',
        ["memhtml search <query>", "memhtml manifest", "memhtml help search"],
    )
    assert refusal("resolve", "a", "b")[1] == 'unexpected argument: "b". resolve takes 1: path'
    assert refusal("list", "x")[1] == 'unexpected argument: "x". list takes no arguments'


def test_unknown_flag_on_search_observed() -> None:
    assert refusal("search", "q", "--limt", "3") == (
        "ERR_INVALID_FLAG",
        "unknown flag: --limt",
        ["limit", "memhtml help search"],
    )


# --- the family noun alone, and commands not built yet -------------------------------------------


def test_a_family_noun_alone_names_the_members_we_have() -> None:
    # Ours: the original answers `memhtml index` with the typo rule (["init"]) and only `help index`
    # with the family; both name the family here, and only members that exist.
    members = ["index rebuild", "index update", "index embed", "index status"]
    assert refusal("index") == ("ERR_UNKNOWN_COMMAND", "unknown command: index", members)
    assert refusal("help", "index") == ("ERR_UNKNOWN_COMMAND", "unknown command: index", members)
    assert refusal("index", "--help") == ("ERR_UNKNOWN_COMMAND", "unknown command: index", members)
    assert refusal("state") == (
        "ERR_UNKNOWN_COMMAND",
        "unknown command: state",
        ["state export", "state import"],
    )


def test_commands_not_built_yet_say_so_on_every_door() -> None:
    not_yet = (
        "ERR_UNKNOWN_COMMAND",
        "unknown command: sleep plan is a command of memhtml 0.15.1 that this version does not have yet",
        ["memhtml manifest"],
    )
    assert refusal("sleep", "plan", "--dry-run") == not_yet
    assert refusal("help", "sleep", "plan") == not_yet
    assert refusal("help", "publish")[1].endswith(
        "publish is a command of memhtml 0.15.1 that this version does not have yet"
    )
    code, message, suggestions = refusal("sleep")
    assert code == "ERR_UNKNOWN_COMMAND" and suggestions == ["memhtml manifest"]
    assert message.startswith("unknown command: sleep: sleep run, sleep resume")


def test_the_table_and_the_not_yet_built_list_are_the_originals_commands() -> None:
    ours = [command.name for command in COMMANDS if command.name not in ADDED_COMMANDS]
    assert not set(ours) & set(NOT_YET_BUILT)
    assert sorted(ours + list(NOT_YET_BUILT)) == sorted(ORIGINAL_COMMANDS)
    # Table order is the original's order, which decides the order of flag-owner suggestions.
    assert ours == [name for name in ORIGINAL_COMMANDS if name in ours]


# --- a flag of another command: the owners, in the original's order -------------------------------


@pytest.mark.parametrize(
    ("line", "owners"),
    [
        ("write --limit 5", ["search", "neighbors", "list"]),
        ("status --limit 5", ["search", "neighbors", "list"]),
        ("state import --limit 3", ["search", "neighbors", "list"]),
        ("index rebuild --limit 5", ["search", "neighbors", "list"]),
        ("read x --depth 2", ["neighbors"]),
        ("write --as-of 2026-01-01", ["search", "recall"]),
        ("list --as-of x", ["search", "recall"]),
        ("write --facet a=b", ["search", "recall", "list"]),
        ("write --para areas", ["list"]),
        ("write --signal positive", ["reinforce"]),
        ("write --rel supersedes", ["neighbors"]),
        ("write --embed", ["index rebuild", "index update"]),
        ("index status --embed", ["index rebuild", "index update"]),
        ("write --include-archived", ["search", "recall", "list"]),
        ("read x --entity a:b", ["write", "search", "recall"]),
        ("status --type semantic", ["write", "search", "recall"]),
        ("status --workspace a", ["write", "search", "recall"]),
        ("status --tag x", ["write", "search", "recall"]),
        # The original also names commands not built yet: `hook`, `task list`, `integrations install`.
        ("write --budget 5", ["recall"]),
        ("write --cursor x", ["list", "task list"]),
        ("write --force", ["index rebuild", "hooks install"]),
        ("index update --force", ["index rebuild", "hooks install"]),
    ],
)
def test_a_flag_of_another_command_names_its_owners_observed(line: str, owners: list[str]) -> None:
    argv = line.split()
    flag = next(word for word in argv if word.startswith("--"))
    command = parse(*argv, "--help").help_target()
    assert command is not None
    assert refusal(*argv) == (
        "ERR_INVALID_FLAG",
        f"{flag} is not a flag of {command.name}",
        [*(f"memhtml {owner} {flag}" for owner in owners), f"memhtml help {command.name}"],
    )


# --- our range checks: refused at exit 2, never clamped or defaulted -----------------------------


@pytest.mark.parametrize(
    ("argv", "flag", "value", "words", "hint"),
    [
        (["search", "q"], "limit", "abc", "an integer from 1 to 200", "<1-200>"),
        (["search", "q"], "limit", "0", "an integer from 1 to 200", "<1-200>"),
        (["search", "q"], "limit", "201", "an integer from 1 to 200", "<1-200>"),
        (["search", "q"], "limit", "-1", "an integer from 1 to 200", "<1-200>"),
        (["search", "q"], "limit", "", "an integer from 1 to 200", "<1-200>"),
        (["list"], "limit", "0", "an integer from 1 to 1000", "<1-1000>"),
        (["list"], "limit", "abc", "an integer from 1 to 1000", "<1-1000>"),
        (["list"], "limit", "1001", "an integer from 1 to 1000", "<1-1000>"),
        (["neighbors", "a"], "limit", "0", "an integer from 1 to 200", "<1-200>"),
        (["neighbors", "a"], "limit", "201", "an integer from 1 to 200", "<1-200>"),
        (["neighbors", "a"], "depth", "3", "an integer from 1 to 2", "<1-2>"),
        (["neighbors", "a"], "depth", "0", "an integer from 1 to 2", "<1-2>"),
        (["neighbors", "a"], "depth", "1.5", "an integer from 1 to 2", "<1-2>"),
        (["recall", "q"], "budget", "-5", "an integer from 0 to 1000000", "<0-1000000>"),
        (["recall", "q"], "budget", "abc", "an integer from 0 to 1000000", "<0-1000000>"),
        (["recall", "q"], "budget", "1000001", "an integer from 0 to 1000000", "<0-1000000>"),
        (["recall", "q"], "budget", "16k", "an integer from 0 to 1000000", "<0-1000000>"),
    ],
)
def test_int_flags_are_range_checked(argv: list[str], flag: str, value: str, words: str, hint: str) -> None:
    command = argv[0]
    assert refusal(*argv, f"--{flag}", value) == (
        "ERR_INVALID_FLAG",
        f'--{flag} must be {words}, not "{value}"',
        [f"memhtml {command} --{flag} {hint}", f"memhtml help {command}"],
    )


@pytest.mark.parametrize(
    ("argv", "flag", "value"),
    [
        (["search", "q"], "limit", "1"),
        (["search", "q"], "limit", "200"),
        (["list"], "limit", "1000"),
        (["neighbors", "a"], "depth", "2"),
        (["neighbors", "a"], "limit", "200"),
        (["recall", "q"], "budget", "0"),
        (["recall", "q"], "budget", "1000000"),
    ],
)
def test_int_flag_bounds_are_inclusive(argv: list[str], flag: str, value: str) -> None:
    assert parse(*argv, f"--{flag}", value).integer(flag) == int(value)


def test_every_value_of_a_repeated_int_flag_is_checked() -> None:
    assert (
        refusal("search", "q", "--limit", "abc", "--limit", "5")[1]
        == '--limit must be an integer from 1 to 200, not "abc"'
    )


# --- --as-of: a date, an instant, or a commit sha --------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "2026-08-24",
        "2026-08-24T13:00:00Z",
        "2026-08-24T23:59:60Z",
        "abcd",
        "9fffa3b",
        "ABC1234",
        "2644cc8147a6f4012edb247a3259c2140428d71f",
        "2026",  # all-digit hex is a sha, not a year
    ],
)
@pytest.mark.parametrize("command", ["search", "recall"])
def test_as_of_accepts_a_date_an_instant_or_a_commit_sha(command: str, value: str) -> None:
    assert parse(command, "q", "--as-of", value).text("as-of") == value


@pytest.mark.parametrize(
    "value",
    [
        "2026-08-24 13:00",
        "2026-13-45",
        "2026-02-30",
        "2026-08-24T24:00:00Z",
        "2026-08-24T13:00:00",
        "2026-08-24T13:00:00.000Z",
        "2026-08-24T13:00:00+02:00",
        "abc",
        "g1234",
        "HEAD",
        "a" * 41,
        "",
    ],
)
@pytest.mark.parametrize("command", ["search", "recall"])
def test_as_of_refuses_everything_else_with_the_originals_message(command: str, value: str) -> None:
    assert refusal(command, "q", "--as-of", value) == (
        "ERR_INVALID_FLAG",
        AS_OF_MESSAGE.format(value),
        [
            f"memhtml {command} --as-of 2026-08-24",
            f"memhtml {command} --as-of 2026-08-24T13:00:00Z",
            f"memhtml {command} --as-of <commit-sha>",
            f"memhtml help {command}",
        ],
    )


def test_as_of_is_checked_before_vocabularies_observed() -> None:
    assert refusal("search", "q", "--type", "bogus", "--as-of", "x")[1] == AS_OF_MESSAGE.format("x")


# --- closed vocabularies and value formats of the new flags ---------------------------------------


@pytest.mark.parametrize("command", ["search", "recall"])
def test_search_and_recall_cannot_select_arcs_observed(command: str) -> None:
    assert refusal(command, "q", "--type", "arc") == (
        "ERR_INVALID_FLAG",
        f"--type must be one of: {RETRIEVAL_TYPES}",
        [f"memhtml help {command}"],
    )
    assert refusal(command, "q", "--type", "semantic", "--type", "arc")[1].startswith("--type must be one of")


def test_list_pages_arcs() -> None:
    assert parse("list", "--type", "arc").text("type") == "arc"
    assert refusal("list", "--type", "bogus")[1] == f"--type must be one of: {TYPES}"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["reinforce", "a", "--signal", "bogus"], "--signal must be one of: positive, negative, neutral"),
        (["list", "--para", "bogus"], "--para must be one of: projects, areas, resources, archive"),
        (
            ["neighbors", "a", "--rel", "bogus"],
            "--rel must be one of: supersedes, contradicts, caused_by, leads_to, part_of, relates_to, "
            "example_of, supports, laterally_related",
        ),
        (["neighbors", "a", "--rel", "blocks"], None),  # task rels are not walked
    ],
)
def test_closed_vocabularies_of_the_new_flags_observed(argv: list[str], message: str | None) -> None:
    code, said, suggestions = refusal(*argv)
    assert code == "ERR_INVALID_FLAG" and suggestions == [f"memhtml help {argv[0]}"]
    if message is not None:
        assert said == message


@pytest.mark.parametrize("value", ["x", "=x", " =x", "", "novalue"])
@pytest.mark.parametrize("argv", [["search", "q"], ["recall", "q"], ["list"]])
def test_facet_must_be_name_equals_value(argv: list[str], value: str) -> None:
    command = argv[0]
    assert refusal(*argv, "--facet", "tier=1", "--facet", value) == (
        "ERR_INVALID_FLAG",
        "--facet must be a `name=value` facet (a non-empty name, an `=`, then the value, which may "
        f'itself contain `=`), not "{value}"',
        [f"memhtml {command} --facet <name>=<value>", f"memhtml help {command}"],
    )


@pytest.mark.parametrize("value", ["doc-type=runbook", "expr=a=b", "tier="])
def test_facet_values_may_contain_equals_or_be_empty(value: str) -> None:
    assert parse("list", "--facet", value).texts("facet") == [value]


@pytest.mark.parametrize("argv", [["search", "q"], ["recall", "q"], ["list"]])
@pytest.mark.parametrize("value", ["nocolon", ":name", "type:", ""])
def test_entity_scope_must_be_type_colon_name(argv: list[str], value: str) -> None:
    code, message, suggestions = refusal(*argv, "--entity", value)
    assert code == "ERR_INVALID_FLAG"
    assert message.startswith("--entity must be a `type:name` entity reference")
    assert suggestions == [f"memhtml {argv[0]} --entity <type>:<name>", f"memhtml help {argv[0]}"]
    assert parse(*argv, "--entity", "service:checkout").text("entity") == "service:checkout"


@pytest.mark.parametrize("value", ["", " ", "\t", "/areas/inbox/x.html"])
def test_any_cursor_text_is_accepted_by_the_grammar(value: str) -> None:
    # An empty or blank cursor is the first page and a leading `/` is allowed (`page_cursor`).
    assert parse("list", "--cursor", value).text("cursor") == value


# --- MEMHTML_REFUSE_ENV_ROOT --------------------------------------------------------------------


def test_refuse_env_root_requires_repo_on_repo_opening_commands() -> None:
    assert refusal(*WRITE_OK, refuse_env_root=True) == (
        "ERR_REPO_REQUIRED",
        "write opens a repo and MEMHTML_REFUSE_ENV_ROOT is set, so the root is not read from "
        "MEMHTML_ROOT or ~/memhtml: name it with --repo",
        ["memhtml write --repo <path>", "memhtml help write"],
    )
    assert refusal("status", refuse_env_root=True)[2] == [
        "memhtml status --repo <path>",
        "memhtml help status",
    ]
    assert refusal(*WRITE_OK, "--repo=", refuse_env_root=True)[0] == "ERR_REPO_REQUIRED"


def test_refuse_env_root_accepts_an_explicit_repo_and_spares_meta_commands() -> None:
    assert parse(*WRITE_OK, "--repo", "/tmp/gx", refuse_env_root=True).repo == "/tmp/gx"
    assert parse("manifest", refuse_env_root=True).command is command_named("manifest")
    assert parse("help", "write", refuse_env_root=True).help_target() is command_named("write")
    assert parse("write", "--help", refuse_env_root=True).help


def test_value_errors_come_before_the_repo_guard() -> None:
    code, message, _ = refusal("write", "--type", "bogus", "--title", "t", "--claim", "c", refuse_env_root=True)
    assert (code, message) == ("ERR_INVALID_FLAG", f"--type must be one of: {TYPES}")


# --- table invariants the grammar relies on and a property over arbitrary lines ------------------


def test_flag_names_have_one_type_across_the_table() -> None:
    # Tokenizing happens before the command is known, so a name must mean one type everywhere.
    types: dict[str, set[str]] = {}
    for flag in GLOBAL_FLAGS + tuple(flag for command in COMMANDS for flag in command.flags):
        types.setdefault(flag.name, set()).add(flag.type)
    assert all(len(kinds) == 1 for kinds in types.values())
    for command in COMMANDS:
        own = [flag.name for flag in command.flags]
        assert len(own) == len(set(own)) and not set(own) & {flag.name for flag in GLOBAL_FLAGS}


TOKENS = st.sampled_from(
    [
        "write", "read", "status", "help", "init", "manifest", "writ", "x", "a", "",
        "--title", "--type", "semantic", "bogus", "--claim", "c", "--article-html", "--strict-path",
        "true", "--no-strict-path", "--no-title", "--importance", "11", "5", "--confidence", "0.5",
        "--entity", "a:b", "--titel", "--limit", "--repo", "/tmp/r", "--dense", "--json", "-h", "--",
        "--help=false", "--tag", "-5", "--title=", "search", "recall", "list", "neighbors", "index",
        "rebuild", "state", "export", "--as-of", "2026-08-24", "abcd", "--depth", "3", "--budget",
        "--facet", "a=b", "--embed", "--no-embed", "false", "--cursor", "--signal", "reinforce",
    ]
)  # fmt: skip


@settings(max_examples=400)
@given(st.lists(TOKENS, max_size=8), st.booleans())
def test_every_refusal_is_a_usage_code_with_runnable_help_last(argv: list[str], refuse: bool) -> None:
    try:
        parse_command_line(argv, refuse_env_root=refuse, stdout_is_tty=False)
    except UsageError as error:
        assert error.envelope_code in USAGE_ERROR_CODES
        assert len(error.suggestions) == len(set(error.suggestions))
        if error.envelope_code != "ERR_UNKNOWN_COMMAND":
            assert error.suggestions[-1].startswith("memhtml help ")
