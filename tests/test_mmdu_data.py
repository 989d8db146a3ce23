"""MMDU files: the released dialogue format, system answers, expert scores, and errors that say where."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.data.io import DataError
from dialeval.protocols.mmdu.data import load_dialogues, load_human_scores, load_predictions, tags_in

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"
DEMO = FIXTURES / "mmdu_demo.json"


def _write(tmp_path: Path, records, name: str = "data.json") -> Path:
    image = tmp_path / "a.png"
    image.write_bytes((FIXTURES / "mmdu_images" / "red_circle.png").read_bytes())
    path = tmp_path / name
    path.write_text(json.dumps(records))
    return path


def _dialogue(**changes):
    record = {
        "id": "d1",
        "image": ["a.png", "a.png"],
        "conversations": [
            {"from": "user", "value": "<image-1> <image-2> Compare them."},
            {"from": "assistant", "value": "They are the same picture."},
            {"from": "user", "value": "And <image-2> alone?"},
            {"from": "assistant", "value": "A red circle."},
        ],
    }
    record.update(changes)
    return record


def test_the_demo_dialogues_load_with_their_turns_and_tagged_images():
    shapes, sales = load_dialogues(DEMO)
    assert [len(shapes.turns), len(sales.turns)] == [6, 5]
    assert [t.images for t in shapes.turns] == [[1, 2, 3], [], [3], [], [], []]
    assert all(Path(image.source).is_file() for image in shapes.image)  # resolved against the file's folder
    # the released files' <ImageHere> placeholders are numbered in dialogue order
    assert sales.turns[0].question.startswith("Image1: <image-1>. Image2: <image-2>.")


def test_the_released_benchmark_json_is_an_object_keyed_by_id(tmp_path):
    path = _write(tmp_path, {"d1": {k: v for k, v in _dialogue().items() if k != "id"}})
    [dialogue] = load_dialogues(path)
    assert dialogue.id == "d1" and dialogue.turns[1].images == [2]


def test_a_tag_without_an_image_names_dialogue_turn_and_tag(tmp_path):
    record = _dialogue()
    record["conversations"][2]["value"] = "What about <image-3>?"
    with pytest.raises(DataError) as err:
        load_dialogues(_write(tmp_path, [record]))
    message = str(err.value)
    assert "dialogue 'd1', turn 2" in message and "<image-3>" in message and "2 images" in message
    assert "conversations.2.value" in message


def test_too_many_placeholders_are_reported_as_the_tag_they_become(tmp_path):
    record = _dialogue(image=["a.png"])
    record["conversations"][0]["value"] = "Image1: <ImageHere>. Image2: <ImageHere>."
    record["conversations"][2]["value"] = "Anything else?"
    with pytest.raises(DataError, match=r"turn 1 \(question\): tag <image-2> has no image"):
        load_dialogues(_write(tmp_path, [record]))


def test_missing_image_files_and_out_of_order_roles_are_refused(tmp_path):
    with pytest.raises(DataError, match=r"image 2 not found"):
        load_dialogues(_write(tmp_path, [_dialogue(image=["a.png", "missing.png"])]))
    record = _dialogue()
    record["conversations"][1]["from"] = "user"
    with pytest.raises(DataError, match=r"turn 1: expected the assistant's message, got the user's"):
        load_dialogues(_write(tmp_path, [record]))


def test_tags_are_listed_once_in_order_of_first_appearance():
    assert tags_in("<image-3> then <image-1>, again <image-3>") == [3, 1]


def test_predictions_in_both_shapes(tmp_path):
    dialogues = load_dialogues(DEMO)
    given = load_predictions(FIXTURES / "mmdu_demo_predictions.json", dialogues)
    assert [len(given["shapes-1"]), len(given["sales-2"])] == [6, 5]
    # the authors' generation output: one <id>.json per dialogue, the record with answers in place
    folder = tmp_path / "generated"
    folder.mkdir()
    for dialogue in json.loads(DEMO.read_text()):
        for k, message in enumerate(dialogue["conversations"]):
            if message["from"] == "assistant":
                message["value"] = f"answer {k // 2 + 1}"
        (folder / f"{dialogue['id']}.json").write_text(json.dumps(dialogue))
    generated = load_predictions(folder, dialogues)
    assert generated["sales-2"] == [f"answer {n}" for n in range(1, 6)]


def test_a_missing_answer_names_the_dialogue_and_turn(tmp_path):
    dialogues = load_dialogues(DEMO)
    records = json.loads((FIXTURES / "mmdu_demo_predictions.json").read_text())
    records[1]["answers"] = records[1]["answers"][:3]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(records))
    with pytest.raises(DataError, match=r"dialogue 'sales-2' has 5 turns but 3 answers: turn 4 has no answer"):
        load_predictions(path, dialogues)
    path.write_text(json.dumps(records[:1]))
    with pytest.raises(DataError, match=r"no answers for dialogue 'sales-2'"):
        load_predictions(path, dialogues)


def test_human_scores_are_checked_against_the_dialogues(tmp_path):
    dialogues = load_dialogues(DEMO)
    scores = load_human_scores(FIXTURES / "mmdu_demo_human.jsonl", dialogues)
    assert len(scores) == 11 and scores[("sales-2", 2)] == 2.0
    bad = tmp_path / "h.jsonl"
    bad.write_text(json.dumps({"id": "sales-2", "turn": 6, "overall": 5}) + "\n")
    with pytest.raises(DataError, match=r"'sales-2' has 5 turns, not 6"):
        load_human_scores(bad, dialogues)
    bad.write_text(json.dumps({"id": "sales-2", "turn": 1, "overall": 11}) + "\n")
    with pytest.raises(DataError, match=r"field 'overall'"):
        load_human_scores(bad, dialogues)
