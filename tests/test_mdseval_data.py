"""Loading MDSEval records, merging dialogue turns and images, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.data.io import DataError
from dialeval.protocols.mdseval.data import load_mdseval
from dialeval.protocols.mdseval.loading import human_side

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"
DEMO = FIXTURES / "mdseval_demo.json"
DIALOGUES = FIXTURES / "mdseval_demo_dialogues.json"
IMAGES = FIXTURES / "mdseval_images"


def test_the_fixture_loads_with_statements_standing_in():
    items = load_mdseval(DEMO)
    assert [i.id for i in items] == ["demo-lake-1", "demo-cake-2", "demo-bike-3"]
    assert all(i.judge_input() == "statements" for i in items)


def test_turns_and_images_are_merged_when_given():
    items = load_mdseval(DEMO, dialogues=DIALOGUES, images=IMAGES)
    lake = items[0]
    assert lake.judge_input() == "turns+images"
    assert lake.dialogue[2].shared_images == 0
    assert Path(lake.images[0].local_path).name == "lake.png"
    assert load_mdseval(DEMO, dialogues=DIALOGUES)[0].judge_input() == "turns+image-statements"


def test_human_side_is_aggregated_as_in_the_paper():
    lake = human_side(load_mdseval(DEMO)[0])
    assert lake["means"]["coherence"] == pytest.approx([14 / 3, 7 / 3, 2.5])  # 3, 3 and 2 annotators
    # summary 2: sentence 2 two of three say false-image, sentence 3 two say true
    assert lake["sentence_labels"][1] == ["true", "false-image", "true"]
    assert lake["summary_labels"][1] == "false-image"
    # summary 3: two annotators split -> no majority -> summary undetermined
    assert lake["sentence_labels"][2] == [None] and lake["summary_labels"][2] is None


def write(tmp_path: Path, records: list) -> Path:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(records))
    return path


def test_a_sentence_count_mismatch_names_file_record_and_field(tmp_path):
    records = json.loads(DEMO.read_text())
    del records[1]["summary_list"][0]["summary_sentence_lvl"][1]
    with pytest.raises(DataError) as err:
        load_mdseval(write(tmp_path, records))
    message = str(err.value)
    assert "bad.json" in message and "demo-cake-2" in message and "faithfulness-sentence" in message


def test_a_score_off_the_scale_is_refused(tmp_path):
    records = json.loads(DEMO.read_text())
    records[0]["human_annotations"][0]["balance"] = [4, 9, 4]
    with pytest.raises(DataError, match="balance scores \\[9\\] outside 1-7"):
        load_mdseval(write(tmp_path, records))


def test_a_missing_image_or_dialogue_is_an_error(tmp_path):
    with pytest.raises(DataError, match="images.0.image_path"):
        load_mdseval(DEMO, images=tmp_path)
    dialogues = json.loads(DIALOGUES.read_text())[:1]
    path = tmp_path / "dialogues.json"
    path.write_text(json.dumps(dialogues))
    with pytest.raises(DataError, match="no dialogue for 'demo-cake-2'"):
        load_mdseval(DEMO, dialogues=path)


def test_the_real_file_loads(shared_data):
    items = load_mdseval(shared_data / "mdseval" / "MDSEval_annotations.json")
    assert len(items) == 198 and all(len(i.summary_list) == 5 for i in items)
    assert {i.judge_input() for i in items} == {"statements"}
