"""LoCoMo records as turns and questions, the audit's evidence corrections, and how a turn becomes a memory.

Owns the reading of the published JSON shapes (already decoded by the caller): per conversation the
speakers, the sessions of turns (`dia_id` like `D1:3`) with their session date, and the `qa` items
with their category and gold evidence. Evidence ids are normalized (`D:11:26` and `D30:05` read as
`D11:26` and `D30:5`; `D8:6; D9:17` is two ids); ids naming no turn of the conversation are dropped
and counted. The audit's `question_id` (`locomo_<conv>_qa<n>`) holds 0-based indices into the
conversation list and its `qa` list. Only categories 1–4 are scored; 5 is adversarial.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

SCORED_CATEGORIES: Final[tuple[int, ...]] = (1, 2, 3, 4)
CATEGORY_NAMES: Final[dict[int, str]] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
SESSION_DATE_FORMAT: Final[str] = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"
_SESSION_KEY: Final = re.compile(r"session_(\d+)")
_EVIDENCE_ID: Final = re.compile(r"D:?(\d+):0*(\d+)")
_EVIDENCE_SEPARATOR: Final = re.compile(r"[;,\s]+")
_QUESTION_ID: Final = re.compile(r"locomo_(\d+)_qa(\d+)")


class Turn(NamedTuple):
    dia_id: str
    session: int
    speaker: str
    text: str
    session_at: str  # the session's date and time, `YYYY-MM-DDThh:mm:ssZ`
    image_caption: str | None = None


class Question(NamedTuple):
    qa_index: int  # 0-based position in the conversation's `qa` list
    question: str
    category: int
    evidence: tuple[str, ...]  # normalized ids of turns that exist in the conversation
    dropped_evidence: int = 0  # ids that were malformed or named no turn


class Conversation(NamedTuple):
    position: int  # 0-based, in the release
    sample_id: str
    speakers: tuple[str, ...]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


class Correction(NamedTuple):
    conversation: int
    qa_index: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class CorrectionSet:
    """The audit's corrections by (conversation, qa index); `unusable` counts entries that name no question."""

    by_question: Mapping[tuple[int, int], Correction] = field(default_factory=dict)
    unusable: int = 0


def session_instant(text: str) -> str:
    """`1:56 pm on 8 May, 2023` -> `2023-05-08T13:56:00Z` (the release states no zone; read as UTC)."""
    moment = dt.datetime.strptime(" ".join(text.split()), SESSION_DATE_FORMAT)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def evidence_ids(raw: Sequence[Any]) -> tuple[list[str], int]:
    """Every turn id written in `raw`, normalized, in order, once each; and how many pieces were malformed.

    Pieces are separated by `;`, `,` or whitespace: `["D8:6; D9:17"]` is two ids, `["D"]` one malformed piece.
    """
    found: dict[str, None] = {}
    malformed = 0
    for item in raw:
        for piece in _EVIDENCE_SEPARATOR.split(str(item)):
            if not piece:
                continue
            match = _EVIDENCE_ID.fullmatch(piece)
            if match is None:
                malformed += 1
                continue
            found[f"D{int(match.group(1))}:{int(match.group(2))}"] = None
    return list(found), malformed


def parse_conversation(index: int, record: Mapping[str, Any]) -> Conversation:
    """One release record as its turns (session order, then turn order) and questions."""
    body = record["conversation"]
    speakers = tuple(str(body[key]) for key in ("speaker_a", "speaker_b") if key in body)
    sessions = sorted(
        (int(match.group(1)), key)
        for key, value in body.items()
        if (match := _SESSION_KEY.fullmatch(key)) and isinstance(value, list)
    )
    turns: list[Turn] = []
    for number, key in sessions:
        instant = session_instant(str(body[f"{key}_date_time"]))
        for item in body[key]:
            ids, _ = evidence_ids([item["dia_id"]])
            caption = item.get("blip_caption")
            turns.append(
                Turn(
                    dia_id=ids[0] if ids else str(item["dia_id"]),
                    session=number,
                    speaker=str(item["speaker"]),
                    text=str(item["text"]),
                    session_at=instant,
                    image_caption=str(caption) if caption else None,
                )
            )
    known = {turn.dia_id for turn in turns}
    questions = []
    for qa_index, item in enumerate(record.get("qa", [])):
        ids, malformed = evidence_ids(item.get("evidence") or [])
        kept = tuple(evidence for evidence in ids if evidence in known)
        questions.append(
            Question(
                qa_index=qa_index,
                question=str(item["question"]),
                category=int(item["category"]),
                evidence=kept,
                dropped_evidence=malformed + len(ids) - len(kept),
            )
        )
    return Conversation(index, str(record.get("sample_id", index)), speakers, tuple(turns), tuple(questions))


def parse_release(records: Sequence[Mapping[str, Any]]) -> list[Conversation]:
    """Every conversation of the release, indexed from 0 in file order."""
    return [parse_conversation(index, record) for index, record in enumerate(records)]


def parse_corrections(records: Sequence[Mapping[str, Any]]) -> CorrectionSet:
    """The audit entries that carry `correct_evidence` (an empty list is a correction to no evidence)."""
    found: dict[tuple[int, int], Correction] = {}
    unusable = 0
    for item in records:
        match = _QUESTION_ID.fullmatch(str(item.get("question_id", "")))
        evidence = item.get("correct_evidence")
        if match is None or evidence is None:
            unusable += 1
            continue
        key = (int(match.group(1)), int(match.group(2)))
        found[key] = Correction(key[0], key[1], tuple(evidence_ids(evidence)[0]))
    return CorrectionSet(found, unusable)


def corrected_evidence(conversation: Conversation, question: Question, corrections: CorrectionSet) -> tuple[str, ...]:
    """The question's gold turns after the audit: its correction's ids that name a turn, else the original."""
    correction = corrections.by_question.get((conversation.position, question.qa_index))
    if correction is None:
        return question.evidence
    known = {turn.dia_id for turn in conversation.turns}
    return tuple(evidence for evidence in correction.evidence if evidence in known)


def applied_corrections(conversations: Sequence[Conversation], corrections: CorrectionSet) -> int:
    """How many corrections name a question of `conversations` (the rest point elsewhere)."""
    present = {
        (conversation.position, question.qa_index)
        for conversation in conversations
        for question in conversation.questions
    }
    return sum(1 for key in corrections.by_question if key in present)


class TurnForm(NamedTuple):
    """How a turn is written as a memory: what the body says besides the turn's own words."""

    speaker_in_body: bool = False
    date_in_body: bool = False
    image_caption: bool = False


def spoken_date(instant: str) -> str:
    """`2023-05-08T13:56:00Z` -> `8 May 2023`."""
    moment = dt.datetime.strptime(instant[:10], "%Y-%m-%d")
    return f"{moment.day} {moment.strftime('%B %Y')}"


def turn_title(turn: Turn) -> str:
    """The memory's title: who spoke and when, as a reader of a chat log sees it."""
    return f"{turn.speaker} on {spoken_date(turn.session_at)}"


def turn_body(turn: Turn, form: TurnForm) -> str:
    """The memory's body: the turn's words, with what `form` adds around them."""
    text = " ".join(turn.text.split())
    if form.speaker_in_body:
        text = f"{turn.speaker} said: {text}"
    if form.image_caption and turn.image_caption:
        text = f"{text} [{turn.speaker} shared an image: {turn.image_caption}]"
    if form.date_in_body:
        text = f"{text} (on {spoken_date(turn.session_at)})"
    return text


def speaker_entity(speaker: str) -> str:
    """The `person:<name>` entity of a speaker (lowercased, spaces to hyphens)."""
    return "person:" + "-".join(speaker.lower().split())
