"""The environment each side of a benchmark runs in, and where the original is installed.

PRODUCT.md §6: the original runs with embeddings off (its only offline mode, and it needs its LLM
switched off too); ours runs with its default embedder on, so `MEMHTML_EMBED` is removed from our
environment (unset means the static model shipped in the package) whatever the caller exported.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ORIGINAL = os.environ.get("MEMHTML_ORIGINAL", str(Path.home() / ".cache/memhtml-original/bin/memhtml-original"))
ORIGINAL_OFFLINE = {"MEMHTML_EMBED": "off", "MEMHTML_LLM": "off"}
OURS_DEFAULTED = ("MEMHTML_EMBED",)  # unset: our default embedder


def original_installed() -> bool:
    return Path(ORIGINAL).exists()


def ours_env(base: Mapping[str, str]) -> dict[str, str]:
    """`base` with every setting that would move ours off its defaults removed."""
    return {name: value for name, value in base.items() if name not in OURS_DEFAULTED}


def original_env(base: Mapping[str, str]) -> dict[str, str]:
    """`base` with the original's offline mode: embeddings and LLM off."""
    return {**base, **ORIGINAL_OFFLINE}


def side_env(side: str, base: Mapping[str, str]) -> dict[str, str]:
    """The environment of side `ours` or `original`."""
    if side not in ("ours", "original"):
        raise ValueError(f"no such side: {side!r}")
    return ours_env(base) if side == "ours" else original_env(base)
