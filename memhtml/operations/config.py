"""Configuration: the one module that reads the process environment (and sets the few defaults the
executables give it).

Everything else receives a `Config` value, so tests and servers can state configuration explicitly.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Final, NamedTuple

from memhtml.contracts.errors import UsageError
from memhtml.index.embedders import checked_setting

_FALSE_WORDS: Final[frozenset[str]] = frozenset({"", "0", "false", "no", "off"})
DEFAULT_ROOT: Final[str] = "~/memhtml"
# Below this share of embedded memory texts search drops the vector arm (MEMHTML_VECTOR_COVERAGE_FLOOR).
DEFAULT_VECTOR_COVERAGE_FLOOR: Final[float] = 0.95
# A plain decimal in ASCII digits (`0.5`, `.5`, `1`, `1e-1`): not `nan`, `inf`, `0x1`, `1_0` or `٠.٥`, which
# `float` also takes.
_DECIMAL: Final = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


class Config(NamedTuple):
    """What the environment says: where the store is, whether that must be explicit, how to answer."""

    env_root: str | None
    refuse_env_root: bool
    force_json: bool
    embed_value: str | None = None  # MEMHTML_EMBED as given; `embed_setting` checks it
    floor_value: str | None = None  # MEMHTML_VECTOR_COVERAGE_FLOOR as given; `coverage_floor` checks it

    def embed_setting(self) -> str:
        """on | off | hash | minilm; any other value is refused (exit 2) before the command runs."""
        return checked_setting(self.embed_value)

    def coverage_floor(self) -> float:
        """The share of memory texts that must have a vector before search trusts the vector arm: a
        decimal above 0 and at most 1 (unset or blank: `DEFAULT_VECTOR_COVERAGE_FLOOR`); any other value is
        refused (exit 2) before the command runs."""
        given = (self.floor_value or "").strip()
        if not given:
            return DEFAULT_VECTOR_COVERAGE_FLOOR
        # 0 would trust a plane with no vector at all; above 1 no plane could ever be trusted.
        floor = float(given) if _DECIMAL.fullmatch(given) else None
        if floor is None or not 0 < floor <= 1:
            raise UsageError(
                "ERR_INVALID_FLAG",
                f"MEMHTML_VECTOR_COVERAGE_FLOOR={self.floor_value} is not a decimal above 0 and at most 1",
                [
                    f"unset MEMHTML_VECTOR_COVERAGE_FLOOR (the default, {DEFAULT_VECTOR_COVERAGE_FLOOR})",
                    "MEMHTML_VECTOR_COVERAGE_FLOOR=0.5",
                ],
            )
        return floor

    def resolve_root(self, repo_flag: str | None) -> Path:
        """`--repo`, else `$MEMHTML_ROOT`, else `~/memhtml`; `~` expanded, made absolute."""
        chosen = repo_flag if repo_flag else (self.env_root or DEFAULT_ROOT)
        return Path(os.path.expanduser(chosen)).absolute()


def load_config(environ: Mapping[str, str] | None = None) -> Config:
    source = os.environ if environ is None else environ
    return Config(
        env_root=source.get("MEMHTML_ROOT") or None,
        refuse_env_root=source.get("MEMHTML_REFUSE_ENV_ROOT", "").strip().lower() not in _FALSE_WORDS,
        force_json=source.get("MEMHTML_OUTPUT", "").strip().lower() == "json",
        embed_value=source.get("MEMHTML_EMBED"),
        floor_value=source.get("MEMHTML_VECTOR_COVERAGE_FLOOR"),
    )


@contextmanager
def isolated_git(name: str, email: str) -> Iterator[None]:
    """Git children started inside this block use a fixed identity and no global or system
    configuration: a store the process makes for itself (the discrimination gate's) must not depend on
    the caller's signing, hooks or identity."""
    isolation = {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    saved = {key: os.environ.get(key) for key in isolation}
    os.environ.update(isolation)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def calm_blas_threads() -> None:
    """Have OpenBLAS's idle threads sleep at once instead of spinning, in this process and those it
    starts; a setting the user made wins. Call it before anything imports NumPy.

    NumPy's OpenBLAS starts a thread per core as NumPy loads, and each spins for a while before it
    sleeps: CPU a rebuild's projection workers need (a rebuild is faster without the spin). Matrix
    products lose nothing by it (a block of the near-duplicate check, 1,024 × 100k vectors, is no
    slower without it).
    """
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # 2**4 cycles: the minimum OpenBLAS takes
