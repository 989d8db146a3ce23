"""Ensembles and cascades as the judge of a dialogue run, over HTTP with scripted judges.

The cheap judge is right and sure on easy units, wrong and unsure (its two readings
differ) on hard ones; the strong judge is right everywhere. A cascade that escalates on
disagreement asks the strong judge on the hard units only.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

import dialeval
from dialeval.agents.ensemble import agreement, combined
from dialeval.config import load_config
from dialeval.errors import ConfigError
from dialeval.testing import cascade_judges as cj
from dialeval.testing.openai_server import OpenAIStub
from tests.dialogue_helpers import write_jsonl


def model(server: OpenAIStub, name: str) -> dict:
    return {"spec": f"openai-compatible:{name}", "base_url": server.base_url, "price": cj.PRICES[name], "max_retries": 0}


def run(tmp_path, judge: dict, run_id: str, cache: str | None = None) -> tuple[list[dict], dict]:
    data = write_jsonl(tmp_path / "chats.jsonl", cj.conversations(4))
    (tmp_path / "rubric.yaml").write_text(cj.RUBRIC, encoding="utf-8")
    result = dialeval.evaluate("dialogue", data, {
        "models": {"judge": judge}, "model": judge.get("ensemble", judge.get("cascade", [None]))[0],
        "options": {"rubric": str(tmp_path / "rubric.yaml"), "facts": "off"},
        "output_dir": str(tmp_path / "runs"), "run_id": run_id, "cache_path": cache,
    })
    units = [u for r in result.records for u in r["turn_units"]]
    return units, result.metrics


def test_a_cascade_escalates_the_units_its_cheap_judge_is_unsure_of(tmp_path):
    with OpenAIStub(respond=cj.respond) as server:
        judge = {"cascade": [model(server, "cheap"), model(server, "strong")], "escalate": {"when": "disagree", "samples": 2}}
        units, _ = run(tmp_path, judge, "cascade", str(tmp_path / "cache.sqlite"))
        sent = Counter((b["model"], b.get("seed")) for b in server.requests)
        units_again, _ = run(tmp_path, judge, "cascade-again", str(tmp_path / "cache.sqlite"))
        sent_again = len(server.requests)
    hard = [cj.hard(u, 4) for u in range(12)]
    assert len(units) == 12
    # every unit: two readings of the cheap judge (the second with seed 2); the hard ones also the strong judge
    assert sent == {("cheap", None): 12, ("cheap", 2): 12, ("strong", None): sum(hard)}
    for u, unit in enumerate(units):
        record = unit["call"]["judge"]
        assert record["kind"] == "cascade" and record["escalated"] == hard[u]
        assert record["decided_by"] == (1 if hard[u] else 0)
        assert record["why"].startswith("escalated: the first stage's verdicts disagree" if hard[u] else "kept by the first stage")
        assert unit["score"] == cj.quality(u)  # the cheap judge is right where it is kept, the strong one elsewhere
        assert [v["model"] for v in record["votes"]] == ["openai-compatible:cheap"] * 2 + ["openai-compatible:strong"] * hard[u]
    # the same run again: distinct readings stayed distinct in the cache, nothing is sent twice
    assert sent_again == sum(sent.values())
    assert all(u["call"]["cached"] for u in units_again)


def test_an_ensemble_takes_the_majority_with_ties_to_the_lower_verdict(tmp_path):
    with OpenAIStub(respond=cj.respond) as server:
        jury = {"ensemble": [model(server, "cheap"), model(server, "strong"), model(server, "lenient")], "combine": "majority"}
        units, _ = run(tmp_path, jury, "jury")
        pair = {"ensemble": [model(server, "strong"), model(server, "lenient")], "combine": "majority"}
        tied, _ = run(tmp_path, pair, "pair")
        mean = {"ensemble": [model(server, "strong"), model(server, "lenient")], "combine": "mean"}
        means, _ = run(tmp_path, mean, "mean")
    for u, unit in enumerate(units):
        votes = [v["vote"] for v in unit["call"]["judge"]["votes"]]
        assert len(votes) == 3 and unit["score"] == combined(votes, "majority")
    for u, unit in enumerate(tied):  # strong says q, lenient q + 1: a tie wherever q < 5, and the lower one wins
        assert unit["score"] == cj.quality(u)
    for u, unit in enumerate(means):
        assert unit["score"] == (cj.quality(u) + min(5, cj.quality(u) + 1)) / 2
        assert unit["call"]["model"].startswith("ensemble(")


def test_votes_combine_as_stated():
    assert agreement([3.0, 4.0]) == (3.0, 0.5)  # a tie goes to the lower verdict
    assert agreement([4.0, 4.0, None]) == (4.0, pytest.approx(2 / 3))  # an unreadable vote counts against
    assert combined([1.0, 2.0, 5.0], "median") == 2.0 and combined([1.0, 2.0], "mean") == 1.5
    assert combined([None, None], "majority") is None


def test_a_composite_judge_is_checked_like_any_config():
    with pytest.raises(ConfigError, match="models.judge.ensemble"):
        load_config(None, models={"judge": {"ensemble": ["openai:gpt-4o-mini"]}})
    with pytest.raises(ConfigError, match="needs a threshold"):
        load_config(None, models={"judge": {"cascade": ["openai:a", "openai:b"], "escalate": {"when": "confidence"}}})
    config = load_config(None, models={"judge": {"cascade": ["openai:gpt-4o-mini", {"ensemble": ["openai:a", "openai:b"]}]}})
    assert [m.spec for m in config.models["judge"].models] == ["openai:gpt-4o-mini", "openai:a", "openai:b"]
    assert config.context().model_for("judge").spec == "openai:gpt-4o-mini"  # roles that are not judges: the first member


def test_the_report_shows_the_share_escalated_and_each_stage(tmp_path):
    with OpenAIStub(respond=cj.respond) as server:
        judge = {"cascade": [model(server, "cheap"), model(server, "strong")], "escalate": {"when": "disagree", "samples": 2}}
        run(tmp_path, judge, "cascade")
    folder = tmp_path / "runs" / "cascade"
    usage = json.loads((folder / "usage.json").read_text())
    (label, row), = usage["judges"].items()
    assert label == "cascade(openai-compatible:cheap -> openai-compatible:strong)"
    assert (row["units"], row["escalated"], row["escalated_share"]) == (12, 3, 0.25)
    assert row["stages"]["0"]["calls"] == 24 and row["stages"]["1"]["calls"] == 3
    assert row["stages"]["1"]["models"] == ["openai-compatible:strong"] and row["stages"]["1"]["cost_usd"] > 0
    report = (folder / "report.md").read_text()
    assert "## Ensembles and cascades" in report and "3 (25%)" in report


def test_trust_takes_an_ensemble_or_a_cascade_as_a_judge():
    from dialeval.trust.candidates import as_candidate, candidates_of

    (cascade, jury) = candidates_of(["{cascade: [openai:gpt-4o-mini, openai:gpt-4o], escalate: {when: disagree, samples: 3}}",
                                     '{"ensemble": ["openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest"]}'])
    assert cascade.label == "cascade(openai:gpt-4o-mini -> openai:gpt-4o)" and cascade.model.escalate.samples == 3
    assert jury.family == "openai" and jury.slug == "ensemble-openai-gpt-4o-mini-anthropic-claude-3-5-haiku-latest"
    assert as_candidate({"ensemble": ["openai:a", "openai:b"], "combine": "median"}).model.combine == "median"
    with pytest.raises(ConfigError, match="--judge"):
        candidates_of(["{cascade: [openai:gpt-4o-mini]}"])


def test_a_cascade_trusts_the_verdicts_probability_where_the_backend_gives_logprobs(tmp_path):
    from dialeval.agents.logprobs import verdict_probability

    with OpenAIStub(respond=cj.respond, logprobs=cj.token_logprobs) as server:
        judge = {"cascade": [model(server, "cheap"), model(server, "strong")],
                 "escalate": {"when": "confidence", "samples": 1, "threshold": 0.8}}
        units, _ = run(tmp_path, judge, "logprobs", str(tmp_path / "cache.sqlite"))
        asked = [(b["model"], b.get("logprobs")) for b in server.requests]
        again, _ = run(tmp_path, judge, "logprobs-again", str(tmp_path / "cache.sqlite"))
    hard = [cj.hard(u, 4) for u in range(12)]
    assert Counter(asked) == {("cheap", True): 12, ("strong", None): sum(hard)}  # one reading, with logprobs
    for u, unit in enumerate(units):
        record = unit["call"]["judge"]
        assert record["confidence"] == (0.45 if hard[u] else 0.95) and record["escalated"] == hard[u]
        assert unit["score"] == cj.quality(u)
        if hard[u]:
            assert record["why"] == "escalated: confidence 0.45 (verdicts " + f"{record['votes'][0]['vote']:g}) is below the threshold 0.8"
    # the probabilities are kept with the cached answers: a resumed run decides the same way
    assert [u["call"]["judge"]["escalated"] for u in again] == hard and all(u["call"]["cached"] for u in again)
    assert verdict_probability([('{"rationale": "x", "verdict": "', 0.0), ("yes", -0.5), ('"}', 0.0)]) == pytest.approx(0.6065, abs=1e-4)
    assert verdict_probability([("no verdict here", -1.0)]) is None


def test_one_reading_needs_logprobs_and_disagreement_needs_two():
    with pytest.raises(ConfigError, match="needs samples >= 2"):
        load_config(None, models={"judge": {"cascade": ["openai:a", "openai:b"], "escalate": {"samples": 1}}})
    with pytest.raises(ConfigError, match="does not give"):
        load_config(None, models={"judge": {"cascade": ["anthropic:claude-3-5-haiku-latest", "openai:b"],
                                            "escalate": {"when": "confidence", "threshold": 0.9, "samples": 1}}})


def test_a_dry_run_prices_a_cascade_as_if_every_unit_escalated(tmp_path):
    judge = {"cascade": ["dry-run:openai:gpt-4o-mini", "dry-run:openai:gpt-4o"], "escalate": {"when": "disagree", "samples": 2}}
    units, _ = run(tmp_path, judge, "dry")
    assert {u["call"]["judge"]["why"] for u in units} == {"escalated: a dry run prices every unit as escalated"}
    usage = json.loads((tmp_path / "runs" / "dry" / "usage.json").read_text())
    (row,) = usage["judges"].values()
    assert row["escalated_share"] == 1.0 and row["stages"]["1"]["cost_usd"] > row["stages"]["0"]["cost_usd"]


def test_a_role_whose_answers_are_no_verdict_cannot_be_an_ensemble():
    import asyncio

    from pydantic import BaseModel

    from dialeval.agents.base import AgentContext, ask
    from dialeval.config import EvalContext

    class Facts(BaseModel):
        facts: list[str]

    context = EvalContext(models={"decomposer": {"ensemble": ["dry-run:openai:a", "dry-run:openai:b"]}})
    ctx = AgentContext.for_role(context, "decomposer", "dialogue/judge")
    assert ctx.judge is not None
    with pytest.raises(ConfigError, match="not one verdict"):
        asyncio.run(ask(ctx, "kgds.decomposer", [], Facts))
