"""The MDSEval graph end to end with a scripted judge: every evaluator, honest counts."""

from __future__ import annotations

import json
from pathlib import Path

from langchain_core.messages import BaseMessage

from dialeval.config import RunConfig
from dialeval.evaluation import run
from tests.helpers import scripted

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"
DEMO = FIXTURES / "mdseval_demo.json"
RECORDS = json.loads(DEMO.read_text())
RANK = {s["summary"]: i for r in RECORDS for i, s in enumerate(r["summary_list"])}
UNREADABLE = RECORDS[0]["summary_list"][1]["summary"]  # the judge cannot answer about this one


def text_of(message: BaseMessage) -> str:
    content = message.content
    return content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content if isinstance(p, dict))


def between(text: str, tag: str) -> str:
    return text.split(f"<{tag}>", 1)[1].split(f"</{tag}>", 1)[0].strip()


def judge(messages: list[BaseMessage]) -> str:
    """First summary of a dialogue 5, second 4, third 3; always prefers the summary shown first."""
    text = "\n".join(text_of(m) for m in messages)
    if "Describe each image" in text:
        return "Image 1: a small picture with a coloured rectangle."
    if "<summary_a>" in text:
        return '{"rationale": "first one", "preferred": "A"}'
    if "Choose one label" in text:
        return '{"rationale": "agrees", "label": "faithful"}'
    summary = between(text, "summary")
    if summary == UNREADABLE:
        return "I would rather not say."
    score = 5 - RANK[summary]
    if "Work in three steps" in text:
        return json.dumps({"image_points": ["canoe"], "text_points": ["trip"], "integration": "fine", "score": score})
    return json.dumps({"rationale": "ok", "score": score})


def run_demo(tmp_path: Path, options: dict) -> tuple[dict, list[dict], list]:
    settings, model = scripted(respond=judge)
    config = RunConfig(
        model=settings, options=options, parse_retries=0, output_dir=str(tmp_path / "runs"), cache_path=None
    )
    result = run("mdseval", DEMO, config, progress=False)
    return result.metrics, result.records, model.prompts


def test_every_evaluator_runs_and_unreadable_answers_are_counted(tmp_path):
    options = {
        "evaluators": ["pointwise", "pairwise", "faithfulness", "image_prompt", "checklist"],
        "aspects": ["coherence", "balance"],
    }
    metrics, records, prompts = run_demo(tmp_path, options)

    assert metrics["run"]["failed"] == 0
    assert metrics["judge_input"] == {"dialogue statements + image statements": 3, "dialogue statements + image description by the captioner": 3}
    for evaluator in ("pointwise", "image_prompt", "checklist"):
        coherence = metrics["scores"][evaluator]["coherence"]
        assert coherence["unreadable"] == 1 and coherence["scores"] == 8  # 9 summaries, one unreadable
    # the scripted ranking follows the human means on two dialogues; the bike dialogue's first
    # two summaries agree with humans on coherence only in order
    assert metrics["scores"]["pointwise"]["coherence"]["spearman"]["value"] is not None

    pairs = [p for r in records for p in r["preferences"]]
    assert len(pairs) == 3 * 6 * 2  # 3 dialogues x 3 pairs x 2 orders x 2 aspects
    for record in records:
        asked = {(p["first"], p["second"]) for p in record["preferences"]}
        assert asked == {(0, 1), (0, 2), (1, 2), (1, 0), (2, 0), (2, 1)}
    bias = metrics["pairwise"]["coherence"]["first_share"]
    assert bias["original"]["value"] == 100.0 and bias["swapped"]["value"] == 100.0
    assert metrics["pairwise"]["coherence"]["accuracy"]["value"] == 50.0  # always "A": right in one order only

    faith = metrics["faithfulness"]
    assert faith["summary"]["n"] + faith["summary"]["no_human_label"] == 9
    assert faith["sentence"]["no_human_label"] == 2  # two split sentences in the fixture
    assert sum("Describe each image" in text_of(p[-1]) for p in prompts) == 3  # one description per dialogue


def test_item_scores_and_report(tmp_path):
    metrics, records, _ = run_demo(tmp_path, {"evaluators": ["pointwise"], "aspects": ["coherence"]})
    from dialeval.benchmarks import get_benchmark

    scores = get_benchmark("mdseval").item_scores(records)
    assert scores["pointwise coherence"]["demo-cake-2/0"] == 5.0
    assert "demo-lake-1/1" not in scores["pointwise coherence"]  # unreadable: no score
    report = (tmp_path / "runs").glob("*/report.md")
    text = next(report).read_text()
    assert "Judges saw:** dialogue statements + image statements (3 dialogues)" in text
    assert "Spearman rho x100" in text and "| 8 / 1 / " in text
    assert next((tmp_path / "runs").glob("*/score_histograms.png")).stat().st_size > 0


def test_a_candidate_pool_is_generated_per_setup(tmp_path):
    settings, _ = scripted(respond=lambda messages: "Thinking... <summary>Friends chat about a photo.</summary>")
    options = {"evaluators": [], "setups": [{"model": settings.spec, "strategy": s} for s in ("zeroshot", "guidance", "icl")]}
    config = RunConfig(model=settings, options=options, output_dir=str(tmp_path / "runs"), cache_path=None)
    result = run("mdseval", DEMO, config, progress=False)
    candidates = result.records[0]["candidates"]
    assert [c["setup"] for c in candidates] == [f"{settings.spec}/{s}" for s in ("zeroshot", "guidance", "icl")]
    assert {c["summary"] for c in candidates} == {"Friends chat about a photo."}
    pool = next((tmp_path / "runs").glob("*/candidates.jsonl")).read_text().splitlines()
    assert len(pool) == 9 and json.loads(pool[0])["dialogue_id"] == "demo-lake-1"


def test_the_config_can_swap_an_evaluator_for_another_registered_agent(tmp_path):
    settings, _ = scripted(respond=judge)
    config = RunConfig(
        model=settings,
        agents={"pointwise": "mdseval.checklist"},
        options={"evaluators": ["pointwise", "checklist"], "aspects": ["coherence"]},
        parse_retries=0,
        output_dir=str(tmp_path / "runs"),
        cache_path=None,
    )
    metrics = run("mdseval", DEMO, config, progress=False).metrics
    assert set(metrics["scores"]) == {"checklist"}  # the pointwise node ran the checklist agent
    assert metrics["scores"]["checklist"]["coherence"]["scores"] == 16  # both nodes, 8 readable each


def test_a_local_judge_decodes_each_score_within_its_aspects_scale(tmp_path, monkeypatch):
    """The schema a local model decodes under carries each aspect's range (1-5, balance 1-7),
    so a small model cannot write a score the validator would then refuse."""
    from dialeval.models.client import ModelClient

    seen: list[tuple[int, int]] = []
    generate = ModelClient.generate

    async def recording(self, messages, **kw):  # type: ignore[no-untyped-def]
        score = ((kw.get("json_schema") or {}).get("properties") or {}).get("score") or {}
        seen.append((score.get("minimum"), score.get("maximum")))
        return await generate(self, messages, **kw)

    monkeypatch.setattr(ModelClient, "generate", recording)
    run_demo(tmp_path, {"evaluators": ["pointwise"], "aspects": ["coherence", "balance"]})
    assert set(seen) == {(1, 5), (1, 7)}
