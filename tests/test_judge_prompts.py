"""Every agent sends the prompts it sent before it became a declaration, byte for byte.

Each case runs a benchmark's packaged demo through the runner on the ``dry-run`` backend
(schema-valid placeholder answers, no model), and compares a hash of every prompt each
agent sent with the hashes recorded in ``tests/fixtures/judge_prompts.json``. Rewriting an
agent must not change what its model reads; a prompt that should change is recorded
again with ``DIALEVAL_RECORD_PROMPTS=1``.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from dialeval.config import ModelSettings, RunConfig
from dialeval.models.prompt_store import load_prompts
from dialeval.evaluation import run
from tests.test_mmrc_graph import fake_embed

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"
RECORDED = Path(__file__).resolve().parent / "fixtures" / "judge_prompts.json"
VDACT_KG = str(FIXTURES / "vdact_demo" / "kg")
MDS = {"evaluators": ["pointwise", "pairwise", "faithfulness", "image_prompt", "checklist"], "aspects": ["coherence", "balance"]}
SETUPS = [{"model": "dry-run", "strategy": s} for s in ("zeroshot", "guidance", "icl")]

# case -> (benchmark, data file, options, agents)
CASES: dict[str, tuple[str, str, dict[str, Any], dict[str, str]]] = {
    "answers": ("answers", "answers_demo.jsonl", {}, {}),
    "kgds": ("kgds", "kgds_demo.json", {}, {}),
    "kgds-single": ("kgds", "kgds_demo.json", {"patterns": ["abs"], "reflection_rounds": 0}, {"fact_verifier": "kgds.fact_verifier_single"}),
    "kgds-no-facts": ("kgds", "no_facts.json", {"patterns": ["abs"], "reflection_rounds": 0}, {}),
    "vdact-session": ("vdact", "vdact_demo/predictions/demo-bot.json", {"judge": "session", "kg_dir": VDACT_KG}, {}),
    "vdact-turn": ("vdact", "vdact_demo/predictions/demo-bot.json", {"judge": "turn", "summary": "template", "kg_dir": VDACT_KG}, {}),
    "vdact-turn-plain": ("vdact", "vdact_demo/predictions/demo-bot.json", {"judge": "turn"}, {}),
    "vdact-lave": ("vdact", "vdact_demo/predictions/demo-bot.json", {"judge": "lave"}, {}),
    "vdact-video-chatgpt": ("vdact", "vdact_demo/predictions/demo-bot.json", {"judge": "video_chatgpt"}, {}),
    "vdact-llm-acc": ("vdact", "vdact_demo/predictions/demo-bot.json", {"judge": "llm_acc"}, {"judge": "vdact.llm_acc"}),
    "vdact-llm-rel": ("vdact", "vdact_demo/predictions/demo-bot.json", {"judge": "llm_rel"}, {"judge": "vdact.llm_rel"}),
    "mdseval": ("mdseval", "mdseval_demo.json", {**MDS, "setups": SETUPS}, {}),
    "mdseval-pictures": (
        "mdseval",
        "mdseval_demo.json",
        {**MDS, "images": "blocks", "dialogues": str(FIXTURES / "mdseval_demo_dialogues.json"), "image_dir": str(FIXTURES / "mdseval_images")},
        {},
    ),
    "mmdu": ("mmdu", "mmdu_demo.json", {}, {}),
    "mmdu-turn-pictures": ("mmdu", "mmdu_demo.json", {"images": "blocks", "judge_images": "turn"}, {}),
    "mmrc": ("mmrc", "mmrc_demo.json", {"note_taking": "both"}, {}),
    "mmrc-rubric": ("mmrc", "mmrc_demo.json", {"note_taking": "off"}, {"judge": "mmrc.rubric_judge"}),
}


def _digest(messages: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


def _data(tmp_path: Path, name: str) -> Path:
    if name != "no_facts.json":
        return FIXTURES / name
    samples = json.loads((FIXTURES / "kgds_demo.json").read_text(encoding="utf-8"))
    for sample in samples:  # user data without atomic facts: the decomposer runs
        sample.pop("BSPAF", None)
        sample.pop("BNPAF", None)
    path = tmp_path / name
    path.write_text(json.dumps(samples), encoding="utf-8")
    return path


def prompts_sent(tmp_path: Path, case: str) -> dict[str, list[str]]:
    """Agent label -> sorted hashes of the prompts its calls sent, in one dry run of ``case``."""
    bench, data, options, agents = CASES[case]
    config = RunConfig(
        model=ModelSettings(spec="dry-run"), options=options, agents=agents, output_dir=str(tmp_path / "runs"), cache_path=None
    )
    result = run(bench, _data(tmp_path, data), config, progress=False)
    assert result.failed == 0
    stored = load_prompts(result.run_dir)
    sent: dict[str, list[str]] = {}
    for record in result.records:
        for call in record["calls"]:
            if call and call.get("prompt_ref"):
                sent.setdefault(call["agent"], []).append(_digest(stored[call["prompt_ref"]]))
    return {agent: sorted(hashes) for agent, hashes in sorted(sent.items())}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_agent_sends_the_recorded_prompts(case, tmp_path, monkeypatch):
    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)
    sent = prompts_sent(tmp_path, case)
    recorded = json.loads(RECORDED.read_text(encoding="utf-8")) if RECORDED.exists() else {}
    if os.environ.get("DIALEVAL_RECORD_PROMPTS") == "1":
        recorded[case] = sent
        RECORDED.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    assert sent, "the case sent no prompt at all"
    expected = recorded[case]
    assert sorted(sent) == sorted(expected), "agents that sent prompts changed"
    for agent, hashes in expected.items():
        assert sent[agent] == hashes, f"{agent} now sends different prompts in case {case}"
