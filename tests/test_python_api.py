"""The Python API as a notebook uses it: DataFrames, short reprs, evaluate() inside a running loop."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import dialeval
from dialeval.testing.openai_server import OpenAIStub

COLUMNS = ["item", "unit", "dimension", "score", "label", "status", "system", "judge_model", "cost_usd"]


def _predictions(tmp_path: Path, dialogues: int = 2, turns: int = 3) -> Path:
    records = [
        {"id": f"{d}-{t}", "dial_id": f"{d}111101", "turn_num": t, "question": f"question {t}",
         "ref_answer": f"reference {t}", "gen_answer": f"a long answer text {t} " * 20}
        for d in range(1, dialogues + 1) for t in range(1, turns + 1)
    ]
    path = tmp_path / "test-notebook-bot.json"
    path.write_text(json.dumps(records))
    return path


def _settings(server: OpenAIStub, tmp_path: Path) -> dict:
    return {"model": {"spec": "openai-compatible:stub", "base_url": server.base_url, "max_retries": 0},
            "cache_path": None, "output_dir": str(tmp_path / "runs"), "concurrency": 1, "preflight": False,
            "options": {"judge": "session", "summary": "none"}}


def test_to_pandas_has_one_row_per_scored_turn_and_dimension(tmp_path):
    data = _predictions(tmp_path)
    with OpenAIStub(respond=lambda body: "Fine. So rating=2") as server:
        result = dialeval.evaluate("vdact", data, _settings(server, tmp_path))
    frame = result.to_pandas()
    assert list(frame.columns) == COLUMNS
    assert len(frame) == 2 * 3  # two dialogues x three turns, one dimension
    assert set(frame["unit"]) == {f"{d}111101/{t}" for d in (1, 2) for t in (1, 2, 3)}
    assert set(frame["dimension"]) == {"rating"} and (frame["score"] == 2.0).all()
    assert set(frame["status"]) == {"ok"} and set(frame["system"]) == {"test-notebook-bot"}
    assert set(frame["judge_model"]) == {"openai-compatible:stub"}
    assert frame.groupby("item")["score"].mean().to_dict() == {"test-notebook-bot/1111101": 2.0, "test-notebook-bot/2111101": 2.0}
    read_back = dialeval.read_run(result.run_dir).to_pandas()
    assert read_back.equals(frame)


def test_a_failed_item_is_one_row_without_a_score(tmp_path):
    data = _predictions(tmp_path, dialogues=1)
    with OpenAIStub(respond=lambda body: "Fine. So rating=3", failures=[500]) as server:
        with pytest.warns(RuntimeWarning, match="failed"):
            result = dialeval.evaluate("vdact", data, _settings(server, tmp_path))
    frame = result.to_pandas()
    assert len(frame) == 1
    row = frame.iloc[0]
    assert row["status"] == "failed" and row["unit"] is None and frame["score"].isna().all()


def test_reprs_are_a_line_not_the_records(tmp_path):
    data = _predictions(tmp_path)
    with OpenAIStub(respond=lambda body: "Fine. So rating=1") as server:
        result = dialeval.evaluate("vdact", data, _settings(server, tmp_path))
    run = dialeval.read_run(result.run_dir)
    for text in (repr(result), repr(run), str(run)):
        assert len(text) < 300 and "a long answer text" not in text
    assert repr(result) == f"RunResult(run_dir={str(result.run_dir)!r}, items=2, complete)"
    assert "benchmark='vdact', items=2, failed=0, systems=['test-notebook-bot']" in repr(run)


def test_evaluate_works_inside_a_running_event_loop(tmp_path):
    """A notebook cell runs inside an event loop; evaluate() must not call asyncio.run there."""
    data = _predictions(tmp_path, dialogues=1)

    async def cell() -> object:
        asyncio.get_running_loop()  # we are inside a loop, like Jupyter
        return dialeval.evaluate("vdact", data, _settings(server, tmp_path))

    with OpenAIStub(respond=lambda body: "Fine. So rating=3") as server:
        result = asyncio.run(cell())
    assert result.complete
    rating = result.metrics["systems"]["test-notebook-bot"]["dimensions"]["rating"]
    assert (rating["judged"], rating["mean"]) == (3, 3.0)


def test_judge_model_names_the_judges_not_the_system_under_test(tmp_path):
    """MMDU with the model under test answering: its model is not a judge model."""
    data = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "mmdu_demo.json"
    settings = {"model": "dry-run:gpt-4o-mini", "models": {"responder": "dry-run:gpt-4o"},
                "cache_path": None, "output_dir": str(tmp_path / "runs")}
    frame = dialeval.read_run(dialeval.evaluate("mmdu", data, settings).run_dir).to_pandas()
    assert set(frame["judge_model"]) == {"dry-run:gpt-4o-mini"}



def test_mmrc_to_pandas_has_rp_rows_its_ability_and_condition_as_columns_and_the_system(tmp_path):
    """A ``groupby(["system", "ability", "condition"])`` finds the rows (system was None: silently empty)."""
    data = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "mmrc_demo.json"
    settings = {"model": "dry-run", "models": {"responder": "dry-run:tested-model"}, "cache_path": None,
                "output_dir": str(tmp_path / "runs"), "options": {"note_taking": "off", "replies": "recorded"}}
    frame = dialeval.evaluate("mmrc", data, settings).to_pandas()
    assert list(frame.columns) == COLUMNS + ["ability", "condition", "metric"]
    assert set(frame["system"]) == {"dry-run:tested-model"} and set(frame["condition"]) == {"off"}
    assert {"score (0-5)", "EP", "RP"} <= set(frame["metric"])
    rp = frame[frame["metric"] == "RP"]
    assert len(rp) >= 1 and set(rp["dimension"]) == {"RP, notes off"}
    assert all(unit.endswith("/" + ability) for unit, ability in zip(frame["unit"], frame["ability"]))
    assert len(frame.groupby(["system", "ability", "condition"])["score"].mean()) == frame["ability"].nunique()

@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="lists open files through /proc")
def test_runs_one_after_another_leave_no_file_of_their_folders_open(tmp_path):
    """A sweep in one process: each run lets go of its prompt store (four descriptors a run
    otherwise, until the process ran out of them)."""

    def held_in(folder: Path) -> list[str]:
        targets = []
        for fd in Path("/proc/self/fd").iterdir():
            try:
                targets.append(str(fd.readlink()))
            except OSError:  # closed while listing
                continue
        return [t for t in targets if t.startswith(str(folder))]

    data = _predictions(tmp_path)
    with OpenAIStub(respond=lambda body: "Fine. So rating=3") as server:
        runs = [dialeval.evaluate("vdact", data, {**_settings(server, tmp_path), "run_id": f"sweep-{i}"}) for i in range(3)]
    assert held_in(tmp_path) == []
    for result in runs:  # the prompts are all in the store
        assert (result.run_dir / "prompts.sqlite").exists()
        assert dialeval.read_run(result.run_dir).to_pandas().shape[0] > 0
