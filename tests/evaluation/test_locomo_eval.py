"""`eval locomo` on a tiny invented conversation in LoCoMo's JSON shape: parsing, corrections, the harness.

Every turn, question and correction here is made up for the test; none comes from the release.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memhtml.contracts.errors import PathNotFound
from memhtml.evaluation.locomo import (
    TurnForm,
    corrected_evidence,
    evidence_ids,
    parse_corrections,
    parse_release,
    session_instant,
    speaker_entity,
    turn_body,
    turn_title,
)
from memhtml.evaluation.locomo_eval import eval_locomo
from memhtml.evaluation.retrieval_metrics import score_question
from tests.conftest import run_cli


def _turn(dia_id: str, speaker: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"speaker": speaker, "dia_id": dia_id, "text": text, **extra}


CONVERSATION: dict[str, Any] = {
    "sample_id": "invented-1",
    "conversation": {
        "speaker_a": "Ilse",
        "speaker_b": "Tomas",
        "session_1_date_time": "10:15 am on 3 March, 2024",
        "session_1": [
            _turn("D1:1", "Ilse", "Hi Tomas! I finally adopted a grey rabbit named Pebble last weekend."),
            _turn("D1:2", "Tomas", "That's lovely, Ilse! I started learning the cello at a community school."),
            _turn(
                "D1:3",
                "Ilse",
                "Pebble chews every cable in the flat, so I bought cable covers.",
                blip_caption="a photo of a grey rabbit on a sofa",
            ),
            _turn("D1:4", "Tomas", "My teacher says I should practise scales for twenty minutes a day."),
            _turn("D1:5", "Ilse", "I'm also training for a half marathon in Rotterdam in June."),
        ],
        "session_2_date_time": "4:40 pm on 17 April, 2024",
        "session_2": [
            _turn("D2:1", "Tomas", "Hey Ilse, I played my first cello recital yesterday at the library."),
            _turn("D2:2", "Ilse", "Congratulations! I ran the Rotterdam half marathon in two hours."),
            _turn("D2:3", "Tomas", "Impressive! How is Pebble doing?"),
            _turn("D2:4", "Ilse", "Pebble learned to jump onto the sofa and sleeps next to the radiator."),
            _turn("D2:5", "Tomas", "Next month I am visiting my sister in Porto for her birthday."),
        ],
        # A date for a session that has no turns, as the release has: it must be ignored.
        "session_3_date_time": "9:00 am on 1 May, 2024",
    },
    "qa": [
        {"question": "What instrument is Tomas learning?", "answer": "cello", "evidence": ["D1:2"], "category": 4},
        {"question": "When did Tomas play his cello recital?", "answer": "April 2024", "evidence": ["D2:1"], "category": 2},
        {"question": "What pet does Ilse have and what does it chew?", "answer": "a rabbit; cables", "evidence": ["D1:1; D1:3"], "category": 1},
        {"question": "Would Ilse enjoy a marathon in Rotterdam?", "answer": "yes", "evidence": ["D1:5", "D:2:02", "D9:9"], "category": 3},
        {"question": "What did Tomas feed Pebble?", "adversarial_answer": "carrots", "evidence": [], "category": 5},
        {"question": "Which city is Tomas visiting for his sister's birthday?", "answer": "Porto", "evidence": ["D2:4"], "category": 4},
    ],
}  # fmt: skip
# The audit's shape: question ids are 0-based (conversation 0, qa 5), `correct_evidence` replaces the gold.
AUDIT: list[dict[str, Any]] = [
    {
        "question_id": "locomo_0_qa5",
        "question": "Which city is Tomas visiting for his sister's birthday?",
        "category": 4,
        "error_type": "WRONG_CITATION",
        "cited_evidence": ["D2:4"],
        "correct_evidence": ["D2:5"],
    },
    {"question_id": "not-a-question", "correct_evidence": ["D1:1"]},
]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "locomo"
    folder.mkdir()
    (folder / "locomo10.json").write_text(json.dumps([CONVERSATION]), encoding="utf-8")
    (folder / "errors.json").write_text(json.dumps(AUDIT), encoding="utf-8")
    return folder


def test_records_parse_into_turns_questions_and_normalized_evidence() -> None:
    (conversation,) = parse_release([CONVERSATION])
    assert conversation.speakers == ("Ilse", "Tomas")
    assert [turn.dia_id for turn in conversation.turns][:3] == ["D1:1", "D1:2", "D1:3"]
    assert len(conversation.turns) == 10
    assert conversation.turns[0].session_at == "2024-03-03T10:15:00Z"
    assert conversation.turns[5].session_at == "2024-04-17T16:40:00Z"
    assert conversation.turns[2].image_caption == "a photo of a grey rabbit on a sofa"
    questions = conversation.questions
    assert [question.category for question in questions] == [4, 2, 1, 3, 5, 4]
    assert questions[2].evidence == ("D1:1", "D1:3")  # "D1:1; D1:3" is two ids
    assert questions[3].evidence == ("D1:5", "D2:2")  # "D:2:02" normalized; D9:9 names no turn
    assert questions[3].dropped_evidence == 1
    assert evidence_ids(["D30:05", "D", "D8:6 D9:17"]) == (["D30:5", "D8:6", "D9:17"], 1)
    assert session_instant("1:05 pm on 28 February, 2023") == "2023-02-28T13:05:00Z"


def test_corrections_use_zero_based_indices_and_replace_the_gold() -> None:
    (conversation,) = parse_release([CONVERSATION])
    corrections = parse_corrections(AUDIT)
    assert corrections.unusable == 1
    assert corrected_evidence(conversation, conversation.questions[5], corrections) == ("D2:5",)
    assert corrected_evidence(conversation, conversation.questions[0], corrections) == ("D1:2",)


def test_a_turn_becomes_a_memory_with_its_speaker_and_date() -> None:
    (conversation,) = parse_release([CONVERSATION])
    turn = conversation.turns[2]
    assert turn_title(turn) == "Ilse on 3 March 2024"
    assert turn_body(turn, TurnForm()) == turn.text
    spoken = turn_body(turn, TurnForm(speaker_in_body=True, date_in_body=True, image_caption=True))
    assert spoken.startswith("Ilse said: Pebble chews")
    assert "[Ilse shared an image: a photo of a grey rabbit on a sofa]" in spoken
    assert spoken.endswith("(on 3 March 2024)")
    assert speaker_entity("Ana Maria") == "person:ana-maria"


def test_metrics_of_a_known_ranking_match_hand_derived_values() -> None:
    # The multi-hop question's gold is D1:1 and D1:3; a ranking that finds D1:3 third and D1:1 twelfth.
    ranking = ["D2:4", "D1:5", "D1:3", *[f"D9:{number}" for number in range(8)], "D1:1"]
    score = score_question("multi-hop", ranking, ("D1:1", "D1:3"))
    assert score.hits == {1: 0.0, 5: 1.0, 10: 1.0}
    assert score.recalls == {5: 0.5, 10: 0.5, 20: 1.0}
    assert score.reciprocal_rank == pytest.approx(1 / 3)


def test_the_harness_runs_end_to_end_and_reports_every_field(data_dir: Path) -> None:
    data = eval_locomo(data_dir, mode="fake")
    assert data["mode"] == "fake" and data["embedModel"] == "fake-hash@1024"
    assert (data["conversations"], data["turns"], data["memories"]) == (1, 10, 10)
    assert data["audit"] is True and data["searchLimit"] == 20
    assert data["questions"] == {
        "asked": 5,
        "skippedCategory5": 1,
        "withoutEvidence": {"original": 0, "corrected": 0},
        "droppedEvidenceIds": 1,
        "correctionsApplied": 1,
    }
    metrics = ["questions", "hit@1", "hit@5", "hit@10", "recall@5", "recall@10", "recall@20", "mrr"]
    for evidence in ("original", "corrected"):
        table = data[evidence]
        assert list(table) == ["multi-hop", "temporal", "open-domain", "single-hop", "overall"]
        assert all(list(row) == metrics for row in table.values())
        assert [row["questions"] for row in table.values()] == [1, 1, 1, 2, 5]
        assert all(0.0 <= row[name] <= 1.0 for row in table.values() for name in metrics[1:])
    # Ten memories and a search depth of 20: every question that finds its gold at all finds it in the top 10.
    assert data["corrected"]["single-hop"]["hit@10"] == 1.0  # cello and Porto are each named by one turn
    assert data["goal"]["metric"] == "recall@10" and data["goal"]["evidence"] == "corrected"
    assert data["goal"]["value"] == data["corrected"]["overall"]["recall@10"]
    assert data["ingestSeconds"] >= 0 and data["ingestMsPerTurn"] is not None
    assert data["searchMsPerQuestion"] is not None and data["seconds"] >= data["searchSeconds"]


def test_without_the_audit_only_the_original_evidence_is_scored(tmp_path: Path) -> None:
    release = tmp_path / "locomo10.json"
    release.write_text(json.dumps([CONVERSATION]), encoding="utf-8")
    data = eval_locomo(release, mode="fake", limit=5)
    assert data["audit"] is False and data["corrected"] is None
    assert data["goal"]["evidence"] == "original" and data["searchLimit"] == 5


def test_a_missing_release_is_named(tmp_path: Path) -> None:
    with pytest.raises(PathNotFound, match=r"locomo10\.json"):
        eval_locomo(tmp_path, mode="fake")


def test_the_cli_answers_with_the_report(data_dir: Path) -> None:
    answer = run_cli("eval", "locomo", "--data", str(data_dir), "--mode", "fake", "--conversations", "1")
    assert answer.status == 0, answer.stdout
    assert answer.envelope["type"] == "eval.locomo"
    assert answer.data["questions"]["asked"] == 5
    missing = run_cli("eval", "locomo", "--mode", "fake")
    assert missing.status == 2 and missing.envelope["code"] == "ERR_MISSING_ARGUMENT"
    nowhere = run_cli("eval", "locomo", "--data", str(data_dir / "absent"))
    assert nowhere.status == 1 and nowhere.envelope["code"] == "ERR_PATH_NOT_FOUND"
