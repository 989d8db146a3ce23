"""Golden files keep the layout of every kind of report table; tests elsewhere assert on data.

Each test renders one table kind from fixed input (``tests/golden/<benchmark>.metrics.json``
for the benchmarks' tables, a scripted run for ``report.md``, two fixed runs for
``compare.md``) and compares it with ``tests/golden/<name>.md`` byte for byte. After an
intended change of layout, regenerate the files and review their diff::

    DIALEVAL_UPDATE_GOLDEN=1 pytest tests/test_golden_tables.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dialeval.benchmarks import get_benchmark
from dialeval.config import ModelSettings, RunConfig
from dialeval.models.client import register_client
from dialeval.report.compare import compare_runs
from dialeval.evaluation import run
from dialeval.testing.scripted import ScriptedChatModel
from tests.test_runner import DATA, _grade

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("DIALEVAL_UPDATE_GOLDEN") == "1"


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.md"
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} missing: run with DIALEVAL_UPDATE_GOLDEN=1 to write it"
    assert text == path.read_text(encoding="utf-8"), f"{name} layout changed; if intended, regenerate (see module docstring)"


@pytest.mark.parametrize("benchmark", ["answers", "kgds", "vdact", "mmrc", "mmdu", "mdseval", "dialogue"])
def test_benchmark_tables_keep_their_layout(benchmark):
    metrics = json.loads((GOLDEN / f"{benchmark}.metrics.json").read_text(encoding="utf-8"))
    check_golden(benchmark, get_benchmark(benchmark).tables(metrics) + "\n")


@pytest.mark.figures  # the golden report has its Figures section
def test_the_report_keeps_its_layout(tmp_path):
    settings = ModelSettings(spec="openai:golden-judge")
    register_client(settings, ScriptedChatModel(respond=_grade))
    config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, parse_retries=0, run_id="golden")
    report = run("answers", DATA, config, progress=False).report_path.read_text()
    check_golden("report", steady(report.replace(str(DATA), "answers_demo.jsonl")))


def steady(report: str) -> str:
    """The report without what differs between two runs of the same setup: the commit, the
    times (the ``- run:`` line) and the measured latencies (the last cell of a per-agent row)."""
    import re

    report = re.sub(r"^- run: dialeval .*$", "- run: dialeval <version> (git <commit>), <start> to <end> UTC", report, flags=re.M)
    return re.sub(r"\| \d+\.\d\d \|$", "| <seconds> |", report, flags=re.M)


def _fixed_run(root: Path, name: str, scores: list[int]) -> Path:
    run_dir = root / name
    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text(json.dumps({"benchmark": "answers", "context": {"default_model": {"spec": f"openai:{name}"}}}))
    rows = [{"id": f"item-{i}", "status": "ok", "result": {"id": f"item-{i}", "system": "bot", "score": s, "calls": []}}
            for i, s in enumerate(scores)]
    (run_dir / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run_dir


def test_the_comparison_keeps_its_layout(tmp_path):
    a = _fixed_run(tmp_path, "judge-a", [5, 4, 3, 2, 1, 3, 4, 5])
    b = _fixed_run(tmp_path, "judge-b", [4, 4, 2, 2, 1, 5, 4, 1])
    result = compare_runs([a, b], tmp_path / "cmp", plots=False)
    check_golden("compare", (Path(result["out_dir"]) / "compare.md").read_text())
