"""`eval locomo`: answer-free retrieval quality on LoCoMo, through the real write path and the real search.

The release (`locomo10.json`) and, when it sits beside it, the audit (`errors.json`) are read from the
caller's `--data` path; nothing of them is kept. Each conversation gets its own fresh store in a
temporary directory: every turn becomes one episodic memory (its speaker as a `person:` entity, the
session date as its event time) written with one `apply`, then every question of categories 1–4 goes
through `search`, and the hits, mapped back to turn ids, are scored against the gold evidence and
against the audit-corrected evidence (`memhtml.evaluation.retrieval_metrics`). It never opens the user's
store.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NamedTuple

from memhtml.contracts.errors import PathNotFound, UsageError
from memhtml.evaluation.locomo import (
    CATEGORY_NAMES,
    SCORED_CATEGORIES,
    Conversation,
    CorrectionSet,
    TurnForm,
    applied_corrections,
    corrected_evidence,
    parse_corrections,
    parse_release,
    speaker_entity,
    turn_body,
    turn_title,
)
from memhtml.evaluation.retrieval_metrics import MetricRow, QuestionScore, metric_table, score_question
from memhtml.index.database import open_database
from memhtml.index.vectors import recorded_space
from memhtml.operations.apply import ApplyOptions, apply
from memhtml.operations.config import isolated_git
from memhtml.operations.embedding import embedding_override
from memhtml.operations.init import init
from memhtml.operations.retrieval import RetrievalRequest, search

MODES: Final[dict[str, str]] = {"fake": "hash", "live": "on"}
RELEASE_FILE: Final[str] = "locomo10.json"
AUDIT_FILE: Final[str] = "errors.json"
DEFAULT_SEARCH_LIMIT: Final[int] = 20
# The goal the issue states, reported against (never a gate): recall@10 on corrected evidence.
GOAL_RECALL_AT_10: Final[float] = 0.75
# How a turn is written: "<speaker> said: <words>", plus the caption of an image the turn shared. Naming
# the speaker in the body (not only the title) lets the vector arm see who said it: recall@10 0.557 ->
# 0.575 on the corrected evidence; the caption adds 0.001 (it is what the turn showed, so it stays).
DEFAULT_TURN_FORM: Final[TurnForm] = TurnForm(speaker_in_body=True, image_caption=True)
_GROUPS: Final[tuple[str, ...]] = tuple(CATEGORY_NAMES[category] for category in SCORED_CATEGORIES)


class LocomoData(NamedTuple):
    conversations: list[Conversation]
    corrections: CorrectionSet | None  # None: no audit file beside the release
    release_path: Path


@dataclass
class _Tally:
    """What the run accumulates across conversations."""

    turns: int = 0
    memories: int = 0
    asked: int = 0
    category5: int = 0
    ingest_seconds: float = 0.0
    search_seconds: float = 0.0
    dropped_evidence: int = 0
    unscorable_original: int = 0
    unscorable_corrected: int = 0


def load_locomo(data: Path) -> LocomoData:
    """The release at `data` (the file, or a folder holding `locomo10.json`) and the audit beside it."""
    release = data / RELEASE_FILE if data.is_dir() else data
    if not release.is_file():
        raise PathNotFound(
            f"no LoCoMo release at {release}: --data names {RELEASE_FILE} or the folder that holds it",
            [f"memhtml eval locomo --data <folder with {RELEASE_FILE}>"],
        )
    records = _json(release)
    if not isinstance(records, list):
        raise UsageError("ERR_INVALID_FLAG", f"{release} is not the LoCoMo release (a JSON list of conversations)")
    audit = release.parent / AUDIT_FILE
    corrections = None
    if audit.is_file():
        entries = _json(audit)
        if not isinstance(entries, list):
            raise UsageError("ERR_INVALID_FLAG", f"{audit} is not the LoCoMo audit (a JSON list of entries)")
        corrections = parse_corrections(entries)
    try:
        conversations = parse_release(records)
    except (KeyError, TypeError, ValueError) as problem:
        raise UsageError("ERR_INVALID_FLAG", f"{release} does not have LoCoMo's shape: {problem!r}") from problem
    return LocomoData(conversations, corrections, release)


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as problem:
        raise UsageError("ERR_INVALID_FLAG", f"{path} is not readable JSON: {problem}") from problem


def eval_locomo(
    data: Path,
    *,
    mode: str = "live",
    conversations: int | None = None,
    limit: int = DEFAULT_SEARCH_LIMIT,
    form: TurnForm = DEFAULT_TURN_FORM,
) -> dict[str, Any]:
    """The `eval.locomo` data: metric tables per category and overall, original and corrected evidence."""
    started = time.perf_counter()
    loaded = load_locomo(data)
    chosen = loaded.conversations[:conversations] if conversations is not None else loaded.conversations
    tally = _Tally()
    original: list[QuestionScore] = []
    corrected: list[QuestionScore] = []
    space: str | None = None
    with (
        isolated_git("memhtml eval", "eval@memhtml.invalid"),
        tempfile.TemporaryDirectory(prefix="memhtml-locomo-") as directory,
        embedding_override(MODES[mode]),
    ):
        for conversation in chosen:
            root = Path(directory) / f"conversation-{conversation.position}"
            init(root)
            turns_of_path = _ingest(root, conversation, form, tally)
            if space is None:
                with open_database(root, read_only=True) as database:
                    space = recorded_space(database)
            _ask(
                root,
                conversation,
                corrections=loaded.corrections,
                turns_of_path=turns_of_path,
                limit=limit,
                tally=tally,
                original=original,
                corrected=corrected,
            )
            shutil.rmtree(root, ignore_errors=True)  # a conversation's store is not needed once it is scored
    return _report(
        loaded,
        chosen,
        tally,
        original,
        corrected if loaded.corrections is not None else None,
        mode=mode,
        space=space,
        limit=limit,
        form=form,
        seconds=time.perf_counter() - started,
    )


def _ingest(root: Path, conversation: Conversation, form: TurnForm, tally: _Tally) -> dict[str, list[str]]:
    """Write every turn with one `apply`; the turn ids each stored path holds (identical turns share one)."""
    lines = [
        json.dumps(
            {
                "op": "write",
                "title": turn_title(turn),
                "type": "episodic",
                "body": turn_body(turn, form),
                "entities": [speaker_entity(turn.speaker)],
                "event_at": turn.session_at,
            }
        )
        for turn in conversation.turns
    ]
    began = time.perf_counter()
    answer = apply(root, "\n".join(lines) + "\n", ApplyOptions())
    tally.ingest_seconds += time.perf_counter() - began
    turns_of_path: dict[str, list[str]] = {}
    for turn, result in zip(conversation.turns, answer.data["results"], strict=True):
        if result["path"] is None:
            raise RuntimeError(f"turn {turn.dia_id} of {conversation.sample_id} was not stored: {result.get('error')}")
        turns_of_path.setdefault(str(result["path"]), []).append(turn.dia_id)
    tally.turns += len(conversation.turns)
    tally.memories += len(turns_of_path)
    return turns_of_path


def _ask(
    root: Path,
    conversation: Conversation,
    *,
    corrections: CorrectionSet | None,
    turns_of_path: dict[str, list[str]],
    limit: int,
    tally: _Tally,
    original: list[QuestionScore],
    corrected: list[QuestionScore],
) -> None:
    """Search every question of categories 1–4 and score its ranking against both evidence sets."""
    for question in conversation.questions:
        if question.category not in SCORED_CATEGORIES:
            tally.category5 += 1
            continue
        tally.dropped_evidence += question.dropped_evidence
        audited = corrected_evidence(conversation, question, corrections) if corrections else question.evidence
        if not question.evidence:
            tally.unscorable_original += 1
        if not audited:
            tally.unscorable_corrected += 1
        if not question.evidence and not audited:
            continue
        began = time.perf_counter()
        answer = search(root, RetrievalRequest(question.question, limit=limit))
        tally.search_seconds += time.perf_counter() - began
        tally.asked += 1
        ranking = [turn for hit in answer["hits"] for turn in turns_of_path.get(hit["path"], [])]
        group = CATEGORY_NAMES[question.category]
        if question.evidence:
            original.append(score_question(group, ranking, question.evidence))
        if audited:
            corrected.append(score_question(group, ranking, audited))


def _table(scores: Sequence[QuestionScore]) -> dict[str, dict[str, float | int]]:
    rows: dict[str, MetricRow] = metric_table(scores, _GROUPS)
    return {name: row.as_data() for name, row in rows.items()}


def _report(
    loaded: LocomoData,
    chosen: Sequence[Conversation],
    tally: _Tally,
    original: Sequence[QuestionScore],
    corrected: Sequence[QuestionScore] | None,
    *,
    mode: str,
    space: str | None,
    limit: int,
    form: TurnForm,
    seconds: float,
) -> dict[str, Any]:
    corrected_table = _table(corrected) if corrected is not None else None
    headline = corrected_table or _table(original)
    return {
        "mode": mode,
        "embedModel": space,
        "searchLimit": limit,
        "turnForm": form._asdict(),
        "release": loaded.release_path.name,
        "audit": loaded.corrections is not None,
        "conversations": len(chosen),
        "turns": tally.turns,
        "memories": tally.memories,
        "questions": {
            "asked": tally.asked,
            "skippedCategory5": tally.category5,
            "withoutEvidence": {"original": tally.unscorable_original, "corrected": tally.unscorable_corrected},
            "droppedEvidenceIds": tally.dropped_evidence,
            "correctionsApplied": applied_corrections(chosen, loaded.corrections) if loaded.corrections else 0,
        },
        "categories": {CATEGORY_NAMES[category]: category for category in SCORED_CATEGORIES},
        "original": _table(original),
        "corrected": corrected_table,
        "goal": {
            "metric": "recall@10",
            "evidence": "corrected" if corrected_table is not None else "original",
            "target": GOAL_RECALL_AT_10,
            "value": headline["overall"]["recall@10"],
            "met": headline["overall"]["recall@10"] >= GOAL_RECALL_AT_10,
        },
        "ingestSeconds": round(tally.ingest_seconds, 2),
        "ingestMsPerTurn": round(1000 * tally.ingest_seconds / tally.turns, 2) if tally.turns else None,
        "searchSeconds": round(tally.search_seconds, 2),
        "searchMsPerQuestion": round(1000 * tally.search_seconds / tally.asked, 2) if tally.asked else None,
        "seconds": round(seconds, 2),
    }
