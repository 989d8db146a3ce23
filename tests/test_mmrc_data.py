"""The MMRC data format: conversations with image references and six labelled questions."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from dialeval.data.io import DataError
from dialeval.protocols.mmrc.data import ABILITIES, load_conversations

FIXTURES = Path(__file__).parent / "fixtures" / "mmrc_conversations.json"
DEMO = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "mmrc_demo.json"


def test_fixtures_load_with_images_numbered_across_turns():
    convs = load_conversations(FIXTURES)
    assert [c.id for c in convs] == ["lisbon-trip", "dinner-party", "ten-k-training", "kitchen-repaint"]
    assert all(8 <= len(c.turns) <= 20 for c in convs)
    assert len({c.domain for c in convs}) == 4
    for conv in convs:
        assert sorted({q.ability for q in conv.questions}) == sorted(ABILITIES)
    running = convs[2]
    assert [Path(i.source).name for i in running.images] == ["shoes.png", "route.png", "elevation.png"]
    assert running.images[2].is_url and Path(running.images[0].source).is_absolute()
    assert running.image_offsets()[:5] == [0, 0, 0, 1, 1]
    assert load_conversations(DEMO)[0].id == "balcony-garden"


def _write(tmp_path, records) -> Path:
    path = tmp_path / "convs.json"
    path.write_text(json.dumps(records))
    for image in ("a.png",):
        (tmp_path / image).write_bytes((DEMO.parent / "mmrc_images" / "balcony.png").read_bytes())
    return path


def _valid() -> dict:
    return {
        "id": "c1",
        "turns": [{"user": "Look at my dog", "images": ["a.png"], "assistant": "Cute!"}, {"user": "He is called Rex."}],
        "questions": [
            {"ability": "IE", "question": "List the pets.", "answer": "A dog.", "items": ["dog"]},
            {"ability": "CR", "question": "q", "answer": "a"},
            {"ability": "IU", "format": "true_false", "question": "q", "answer": "True"},
            {"ability": "IM", "question": "Which picture shows the dog?", "answer": "The first.", "images": [1]},
            {"ability": "MR", "question": "q", "answer": "a"},
            {"ability": "AR", "question": "What breed?", "answer": "Not said.", "refuse": True},
        ],
    }


def test_a_valid_record_loads(tmp_path):
    [conv] = load_conversations(_write(tmp_path, [_valid()]))
    assert conv.turns[0].images[0].source == str((tmp_path / "a.png").resolve())
    assert conv.turns[1].assistant is None


@pytest.mark.parametrize(
    "mutate, field, message",
    [
        (lambda r: r["questions"].pop(5), "questions", "no question for abilities ['AR']"),
        (lambda r: r["questions"][3].update(images=[2]), "questions.3.images", "image 2 does not exist"),
        (lambda r: r["turns"][0].update(images=["missing.png"]), "turns.0.images.0", "image file not found"),
        (lambda r: r["questions"][5].pop("refuse"), "questions.5", "AR questions need 'refuse'"),
        (lambda r: r["questions"][0].update(items=[]), "questions.0", "IE questions need 'items'"),
        (lambda r: r["questions"][2].update(format="multiple_choice"), "questions.2", "need at least two 'options'"),
        (lambda r: r["questions"][1].update(ability="XX"), "questions.1.ability", "Input should be"),
        (lambda r: r["turns"].append({"user": " "}), "turns.2", "needs user text or at least one image"),
    ],
)
def test_bad_records_name_file_record_and_field(tmp_path, mutate, field, message):
    record = copy.deepcopy(_valid())
    mutate(record)
    with pytest.raises(DataError) as err:
        load_conversations(_write(tmp_path, [record]))
    assert f"field '{field}'" in str(err.value) and message in str(err.value)
    assert "convs.json, record 1" in str(err.value)


def test_duplicate_ids_are_rejected(tmp_path):
    with pytest.raises(DataError, match="duplicate id 'c1'"):
        load_conversations(_write(tmp_path, [_valid(), _valid()]))
