"""The runner: results as JSON lines, resume without repeated calls, failures recorded."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
from pathlib import Path

import pytest

from dialeval.benchmarks import get_benchmark, register_benchmark
from dialeval.config import ConfigError, RunConfig
from dialeval.run.folder import read_results, results_by_id
from dialeval.evaluation import run, run_async
from tests.helpers import scripted

DATA = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"


def _grade(messages) -> str:
    text = messages[-1].content
    return '{"rationale": "same as reference", "score": 5}' if "two-ring induction hob, since" in text else "no idea"


def _config(tmp_path: Path, settings, **kw) -> RunConfig:
    return RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=str(tmp_path / "cache.sqlite"), parse_retries=0, **kw)


def test_a_run_writes_results_metrics_and_a_report(tmp_path):
    settings, model = scripted(respond=_grade)
    result = run("answers", DATA, _config(tmp_path, settings), progress=False)
    lines = (result.run_dir / "results.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(l)["status"] == "ok" for l in lines)
    system = result.metrics["systems"]["demo-bot"]
    assert system == {"items": 3, "scored": 1, "unparsed": 2, "truncated": 0, "mean_score": 5.0, "mean_scaled": 1.0}
    report = result.report_path.read_text()
    assert "## Judge reliability" in report and "| answer_judge |" in report and "2 (66.7%)" in report
    assert "no idea" in report  # unparsed answers are quoted, not hidden
    config = json.loads((result.run_dir / "config.json").read_text())
    assert config["context"]["default_model"]["spec"] == settings.spec
    assert result.metrics["run"]["usage"]["requests"] == 3


def test_an_interrupted_run_resumes_with_the_same_results_and_no_repeated_calls(tmp_path):
    release = threading.Event()
    bike_asked = threading.Event()

    def slow_on_bikes(messages):
        if "bike" in messages[-1].content:
            bike_asked.set()
            release.wait(30)
        return _grade(messages)

    settings, model = scripted(respond=slow_on_bikes)
    config = _config(tmp_path, settings, concurrency=3)

    def two_items_written() -> bool:
        return any(len(read_results(d)) == 2 for d in (tmp_path / "runs").glob("*") if (d / "results.jsonl").exists())

    async def interrupted():
        task = asyncio.create_task(run_async("answers", DATA, config, progress=False))
        for _ in range(600):  # the user presses Ctrl-C once the other two items are written
            if bike_asked.is_set() and two_items_written():
                break
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()  # let the abandoned request thread end

    asyncio.run(interrupted())
    run_dir = tmp_path / "runs" / next(p.name for p in (tmp_path / "runs").iterdir())
    finished_before = results_by_id(run_dir)
    assert set(finished_before) == {"kitchen-1", "kitchen-2"}
    prompts_before = len(model.prompts)

    result = run("answers", DATA, config, progress=False)
    assert len(model.prompts) == prompts_before + 1  # only the unfinished item was sent
    assert result.run_dir == run_dir
    fresh_settings, _ = scripted(respond=_grade)
    fresh = run("answers", DATA, _config(tmp_path / "fresh", fresh_settings), progress=False)
    assert {r["id"]: r["score"] for r in result.records} == {r["id"]: r["score"] for r in fresh.records}

    again = run("answers", DATA, config, progress=False)
    assert len(model.prompts) == prompts_before + 1  # a finished run makes no call at all
    assert again.metrics["systems"] == result.metrics["systems"]


def test_a_torn_last_line_is_dropped_and_the_item_redone(tmp_path):
    settings, model = scripted(respond=_grade)
    config = _config(tmp_path, settings)
    result = run("answers", DATA, config, progress=False)
    path = result.run_dir / "results.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:2]) + lines[2][:25])  # crash in the middle of the third line
    resumed = run("answers", DATA, config, progress=False)
    rows = [json.loads(l) for l in path.read_text().splitlines()]
    assert len(rows) == 3 and len(resumed.records) == 3


def test_failed_items_are_recorded_and_the_run_goes_on(tmp_path):
    answers = get_benchmark("answers")

    def fragile(item, state):
        if item.id == "kitchen-2":
            raise RuntimeError("record builder broke")
        return answers.to_record(item, state)

    register_benchmark(dataclasses.replace(answers, name="answers-fragile", to_record=fragile))
    settings, _ = scripted(respond=_grade)
    result = run("answers-fragile", DATA, _config(tmp_path, settings), progress=False)
    assert result.metrics["run"]["failed"] == 1 and result.metrics["run"]["finished"] == 2
    rows = results_by_id(result.run_dir)
    assert rows["kitchen-2"]["status"] == "failed" and "record builder broke" in rows["kitchen-2"]["error"]
    assert "## Failed items (1)" in result.report_path.read_text()


def test_a_run_id_is_never_reused_for_a_different_setup(tmp_path):
    first, _ = scripted(respond=_grade)
    second, _ = scripted(respond=_grade)
    run("answers", DATA, _config(tmp_path, first, run_id="mine"), progress=False)
    with pytest.raises(ConfigError, match="different configuration"):
        run("answers", DATA, _config(tmp_path, second, run_id="mine"), progress=False)


def test_bad_data_names_file_record_and_field(tmp_path):
    bad = tmp_path / "answers.jsonl"
    bad.write_text('{"id": "a", "question": "q", "reference": "r", "answer": "x"}\n{"id": "b", "question": "q", "answer": "x"}\n')
    settings, _ = scripted(respond=_grade)
    from dialeval.data.io import DataError

    with pytest.raises(DataError, match=r"answers.jsonl, record 2 \(line 2, id='b'\), field 'reference'"):
        run("answers", bad, _config(tmp_path, settings), progress=False)
