"""Loading VDAct prediction files, video summaries and human scores."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from dialeval.data.io import DataError
from dialeval.protocols.vdact.data import load_dialogues, load_predictions
from dialeval.protocols.vdact.human_scores import load_human_scores

DEMO = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "vdact_demo"
PREDICTIONS = DEMO / "predictions" / "demo-bot.json"


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text(json.dumps(records))
    return path


def _turn(dial: str, n: int, **extra) -> dict:
    return {"id": f"{dial}{n:02d}", "dial_id": dial, "turn_num": n, "question": f"q{n}", "ref_answer": f"r{n}", "gen_answer": f"g{n}", **extra}


def test_turns_are_grouped_into_dialogues_in_turn_order(tmp_path):
    data = _write(tmp_path / "sys.json", [_turn("1234501", 2), _turn("1234501", 1), _turn("1234502", 1)])
    items = load_dialogues(data, summary="none")
    assert [i.id for i in items] == ["sys/1234501", "sys/1234502"]
    assert [t.turn_num for t in items[0].turns] == [1, 2]
    assert items[0].scenario == "12345" and items[0].summary is None
    assert (items[0].source_dialogues, items[0].source_turns) == (2, 3)


def test_demo_summaries_come_from_the_kg_folder_beside_the_predictions():
    refined = load_dialogues(PREDICTIONS, summary="refined")
    template = load_dialogues(PREDICTIONS, summary="template")
    assert "bread and cheese" in refined[0].summary
    assert template[0].summary.startswith("The person is in the bedroom.")
    assert len(refined) == 3 and len(refined[0].turns) == 10


def test_summaries_are_read_straight_from_a_zip(tmp_path):
    kg = tmp_path / "kg"
    kg.mkdir()
    with zipfile.ZipFile(kg / "scenario_refine_summaries.zip", "w") as z:
        z.writestr("scenario_refine_summaries/12345.txt", "He walks to the sofa.\n")
    (tmp_path / "predictions").mkdir()
    data = _write(tmp_path / "predictions" / "sys.json", [_turn("1234501", 1)])
    assert load_dialogues(data)[0].summary == "He walks to the sofa."


def test_a_missing_summary_names_the_scenario(tmp_path):
    shutil.copytree(DEMO / "kg", tmp_path / "kg")
    (tmp_path / "predictions").mkdir()
    data = _write(tmp_path / "predictions" / "sys.json", [_turn("0000101", 1), _turn("0999901", 1)])
    with pytest.raises(DataError, match="scenario 09999"):
        load_dialogues(data, summary="refined")
    assert len(load_dialogues(data, summary="none")) == 2


def test_no_summary_folder_is_an_error_unless_summary_is_none(tmp_path):
    data = _write(tmp_path / "sys.json", [_turn("1234501", 1)])
    with pytest.raises(DataError, match="no refined summaries"):
        load_dialogues(data, summary="refined")


def test_an_explicit_summary_folder_wins(tmp_path):
    data = _write(tmp_path / "sys.json", [_turn("0000201", 1)])
    items = load_dialogues(data, summary="refined", summary_path=DEMO / "kg" / "scenario_template_summaries")
    assert "The window is CLOSED." in items[0].summary


def test_a_bad_record_names_file_record_and_field(tmp_path):
    bad = _turn("1234501", 1)
    del bad["ref_answer"]
    data = _write(tmp_path / "sys.json", [_turn("1234501", 2), bad])
    with pytest.raises(DataError) as err:
        load_predictions(data)
    assert "sys.json" in str(err.value) and "record 2" in str(err.value) and "ref_answer" in str(err.value)


def test_a_missing_or_null_answer_loads_as_no_answer(tmp_path):
    missing = _turn("1234501", 1)
    del missing["gen_answer"]
    data = _write(tmp_path / "sys.json", [missing, _turn("1234501", 2, gen_answer=None)])
    turns = load_dialogues(data, summary="none")[0].turns
    assert [t.candidate for t in turns] == ["", ""]


def test_repeated_ids_keep_the_first_answer_and_say_so(tmp_path):
    data = _write(tmp_path / "sys.json", [_turn("1234501", 1), _turn("1234501", 1, gen_answer="other"), _turn("1234501", 2), _turn("1234501", 2)])
    preds = load_predictions(data)
    assert [t.gen_answer for t in preds.turns] == ["g1", "g2"]
    assert any("different answer" in n for n in preds.notes) and any("exact duplicate" in n for n in preds.notes)


def test_two_ids_for_one_turn_position_is_an_error(tmp_path):
    clash = _turn("1234501", 1)
    clash["id"] = "x"
    data = _write(tmp_path / "sys.json", [_turn("1234501", 1), clash])
    with pytest.raises(DataError, match="appears twice"):
        load_predictions(data)


def test_human_scores_attach_to_turns():
    items = load_dialogues(PREDICTIONS, summary="none", human_scores=DEMO / "human_scores.jsonl")
    assert items[0].turns[0].human == [3, 3, 2]
    assert items[1].turns[0].human is None  # dialogue 0000102 was not rated


def test_human_scores_out_of_scale_are_rejected(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text('{"id": "a", "scores": [1, 4]}\n')
    with pytest.raises(DataError, match="outside 1-3"):
        load_human_scores(path)
    path.write_text('{"id": "a", "score": 2}\n')
    assert load_human_scores(path) == {(None, "a"): [2]}


def test_released_prediction_files_load_with_their_summaries(shared_data):
    folder = shared_data / "vdact" / "predictions"
    items = load_dialogues(folder / "test-videollama2-8f.json", summary="refined")
    assert len(items) == 450 and sum(len(i.turns) for i in items) == 4524
    assert all(i.summary for i in items)
    assert load_dialogues(folder / "test-videollama2-8f.json", summary="template")[0].summary
    noisy = load_predictions(folder / "test-videollava-7b-8f.json")
    assert len(noisy.turns) == 4524 and noisy.notes
