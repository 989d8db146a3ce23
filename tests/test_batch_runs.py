"""Batch runs over HTTP: ``batch: true`` sends every call through the test server's batch
endpoints, in rounds, with no live chat request; the report prices them at batch rates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from dialeval.config import ModelSettings, RunConfig
from dialeval.models.pricing import batch_price
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.test_kgds_graph import fake_model

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"
ANSWERS = FIXTURES / "answers_demo.jsonl"
KGDS = FIXTURES / "kgds_demo.json"
VDACT = FIXTURES / "vdact_demo" / "predictions" / "demo-bot.json"
PRICED_AS = "openai:gpt-4o-mini"


def answer_any(body: dict) -> str:
    """One stand-in judge for the answers, kgds and vdact fixtures, routed by the prompt."""
    prompt = prompt_of(body)
    if "<reference_answer>" in prompt:  # the answers judge
        return '{"rationale": "close to the reference", "score": 4}'
    try:
        return fake_model(prompt)  # every KGDS agent
    except AssertionError:
        return "The reply matches the reference. So rating=3"  # VDEval's session judge (and its summary refiner)


def batch_model(server: OpenAIStub, **extra) -> ModelSettings:
    return ModelSettings(
        spec="openai-compatible:stub", base_url=server.base_url, max_retries=0, batch=True, price_as=PRICED_AS, **extra
    )


def batch_config(tmp_path: Path, model: ModelSettings, **fields) -> RunConfig:
    return RunConfig(model=model, **{"output_dir": str(tmp_path / "runs"), "cache_path": None, **fields})


def batch_run(benchmark: str, data: Path, config: RunConfig, **kwargs):
    return run(benchmark, data, config, progress=False, batch_poll=0.01, **kwargs)


def metrics_of(result) -> dict:
    return json.loads((result.run_dir / "metrics.json").read_text())


@pytest.mark.parametrize(
    ("benchmark", "data", "options"),
    [("answers", ANSWERS, {}), ("kgds", KGDS, {"reflection_rounds": 1}), ("vdact", VDACT, {})],
)
def test_a_batch_run_scores_every_item_with_one_batch_per_round_and_no_live_request(tmp_path, benchmark, data, options):
    with OpenAIStub(respond=answer_any) as server:
        server.batch_api.polls = 2  # each batch answers after two status requests
        result = batch_run(benchmark, data, batch_config(tmp_path, batch_model(server), options=options))
        batches, lines, live = list(server.batches), list(server.batch_lines), list(server.requests)
    assert result.complete and result.records
    assert live == []  # not one chat completion went out live
    rows = [json.loads(line) for line in (result.run_dir / "results.jsonl").read_text().splitlines()]
    assert {c["status"] for row in rows for c in row["usage"]} == {"ok"}  # every answer was read
    batches_info = metrics_of(result)["run"]["batches"]
    assert batches_info["rounds"] == len(batches)  # one model: one batch per round
    assert batches_info["batches"] == len(batches)
    usage = metrics_of(result)["run"]["usage"]
    assert usage["requests"] == len(lines)  # every call answered was a batch line, each sent once
    sent = [custom_id for batch in batches for custom_id, _ in batch.lines]
    assert len(sent) == len(set(sent))


def test_rounds_follow_the_protocols_depth(tmp_path):
    """answers asks once per item (1 round); the VDEval session judge asks turn after turn."""
    with OpenAIStub(respond=answer_any) as server:
        batch_run("answers", ANSWERS, batch_config(tmp_path, batch_model(server)))
        assert len(server.batches) == 1 and len(server.batches[0].lines) == 3
    with OpenAIStub(respond=answer_any) as server:
        result = batch_run("vdact", VDACT, batch_config(tmp_path, batch_model(server), options={"summary": "none"}))
        longest = max(len(record["turns"]) for record in result.records)
        assert len(server.batches) == longest


def test_calls_the_response_cache_answers_never_go_into_a_batch(tmp_path):
    cache = str(tmp_path / "cache.sqlite")
    with OpenAIStub(respond=answer_any) as server:
        model = batch_model(server)
        batch_run("answers", ANSWERS, batch_config(tmp_path, model, cache_path=cache, output_dir=str(tmp_path / "a")))
        assert len(server.batches) == 1
        again = batch_run("answers", ANSWERS, batch_config(tmp_path, model, cache_path=cache, output_dir=str(tmp_path / "b")))
        assert len(server.batches) == 1  # the second run found every answer in the cache
    assert again.complete and metrics_of(again)["run"]["usage"]["cached"] == 3


def test_a_dry_run_with_batch_true_counts_rounds_and_prices_at_batch_rates(tmp_path):
    def dry(data: Path, batch: bool, out: str):
        model = ModelSettings(spec=f"dry-run:{PRICED_AS}", batch=batch)
        benchmark = "kgds" if data == KGDS else "answers"
        return run(benchmark, data, RunConfig(model=model, output_dir=str(tmp_path / out), cache_path=None), progress=False)

    batched = dry(KGDS, True, "batch")
    info = metrics_of(batched)["run"]["batches"]
    assert info["estimated"] and info["rounds"] == 4  # summarize, reflect, decompose/verify, classify
    assert "would run as provider batches in 4 round(s)" in (batched.run_dir / "report.md").read_text()
    # the same calls at half the rate: the answers demo has no two calls alike, so a live run shares none
    live, batched = dry(ANSWERS, False, "answers-live"), dry(ANSWERS, True, "answers-batch")
    assert metrics_of(live)["run"]["usage"]["deduplicated"] == 0
    assert metrics_of(batched)["run"]["usage"]["cost_usd"] == pytest.approx(metrics_of(live)["run"]["usage"]["cost_usd"] / 2, abs=1e-6)


def test_a_local_model_cannot_be_batched():
    with pytest.raises(ValidationError, match="batch: true needs an openai, openai-compatible or anthropic model"):
        ModelSettings(spec="smollm2", batch=True)


def test_a_dry_run_over_a_config_with_a_batched_local_model_names_the_mistake(tmp_path):
    from dialeval.config import ConfigError, load_config

    path = tmp_path / "bad.yaml"
    path.write_text("model: {spec: smollm2, batch: true}\n")
    with pytest.raises(ConfigError, match="the config's field 'model': batch: true needs an openai"):
        load_config(path, model={"spec": "dry-run"})


def test_a_bare_dry_run_over_a_batch_config_estimates_the_batches(tmp_path):
    from dialeval.config import load_config

    path = tmp_path / "batch.yaml"
    path.write_text("model: {spec: openai:gpt-4o-mini, batch: true}\n")
    config = load_config(path, model={"spec": "dry-run"})
    assert config.model is not None and config.model.spec == "dry-run:openai:gpt-4o-mini" and config.model.batch


@pytest.mark.parametrize("spec", ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"])
def test_openai_and_anthropic_models_batch_and_the_report_prices_them_at_batch_rates(tmp_path, monkeypatch, spec):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    with OpenAIStub(respond=answer_any) as server:
        url = server.root_url if spec.startswith("anthropic:") else server.base_url
        model = ModelSettings(spec=spec, base_url=url, max_retries=0, batch=True)
        result = batch_run("answers", ANSWERS, batch_config(tmp_path, model))
        assert len(server.batches) == 1 and server.requests == []
        assert server.batches[0].api == spec.partition(":")[0]
    assert result.complete
    rate = batch_price(spec)
    assert rate is not None and rate.source
    rows = [json.loads(line) for line in (result.run_dir / "results.jsonl").read_text().splitlines()]
    calls = [c for row in rows for c in row["usage"]]
    assert {c["status"] for c in calls} == {"ok"}
    expected = sum(rate.cost(c["input_tokens"], c["output_tokens"], c.get("cached_input_tokens", 0)) for c in calls)
    assert metrics_of(result)["run"]["usage"]["cost_usd"] == pytest.approx(expected, abs=1e-6)
    report = (result.run_dir / "report.md").read_text()
    assert f"ran as provider batches in 1 round(s), priced at batch rates: {rate.source}" in report
