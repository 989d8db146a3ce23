"""A dry run calls no model, whatever the config says per role, and prices every role as
the model it would have used; a model without a known price costs "unknown", never 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.cli import main
from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub
from dialeval.models.pricing import price_of

DATA = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
KGDS = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "kgds_demo.json"


@pytest.fixture(autouse=True)
def _environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dry-run-tests-00")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-dry-run-tests-00")


def _cli(tmp_path: Path, *args: str) -> int:
    return main(["run", *args, "--output-dir", str(tmp_path / "runs"), "--no-progress"])


def _usage(tmp_path: Path) -> dict:
    run_dir = next((tmp_path / "runs").iterdir())
    return json.loads((run_dir / "usage.json").read_text())


def test_a_dry_run_replaces_every_roles_model_and_sends_nothing(tmp_path, capsys):
    with OpenAIStub() as server:
        config = tmp_path / "judges.yaml"
        config.write_text(
            f"model: {{spec: 'openai:gpt-4o-mini', base_url: '{server.base_url}'}}\n"
            "models:\n"
            f"  fact_verifier: {{spec: 'openai:gpt-4o', base_url: '{server.base_url}'}}\n"
            f"  error_classifier: {{spec: 'anthropic:claude-haiku-4-5', base_url: '{server.root_url}'}}\n"
            "options: {patterns: [ebs], reflection_rounds: 0}\n"
        )
        code = _cli(tmp_path, "kgds", "--data", str(KGDS), "--config", str(config), "--model", "dry-run")
        assert server.requests == [] and server.gets == []  # no connection of any kind
    assert code == 0
    models = {m for a in _usage(tmp_path)["per_agent"].values() for m in a["models"]}
    assert models == {"dry-run:openai:gpt-4o-mini", "dry-run:anthropic:claude-haiku-4-5"}
    resolved = json.loads((next((tmp_path / "runs").iterdir()) / "config.json").read_text())
    assert resolved["context"]["models"]["fact_verifier"]["spec"] == "dry-run:openai:gpt-4o"
    assert "Dry run" in capsys.readouterr().out


def test_a_dry_run_in_the_config_file_also_covers_per_role_models(tmp_path):
    config = RunConfig(
        model=ModelSettings(spec="dry-run:openai:gpt-4o-mini"),
        models={"judge": ModelSettings(spec="openai-compatible:x", base_url="http://127.0.0.1:9/v1")},
        output_dir=str(tmp_path / "runs"),
        cache_path=None,
    )
    result = run("answers", DATA, config, progress=False)
    assert result.complete and result.metrics["run"]["dry_run"]
    assert result.metrics["run"]["usage"]["requests"] == 0


def test_each_role_is_priced_as_the_model_it_would_use(tmp_path):
    config = RunConfig(
        model=ModelSettings(spec="dry-run:openai:gpt-4o-mini"),
        models={"judge": "openai:gpt-4o"},
        output_dir=str(tmp_path / "runs"),
        cache_path=None,
    )
    result = run("answers", DATA, config, progress=False)
    total = result.metrics["run"]["usage"]
    price_in, price_out = price_of("gpt-4o").input, price_of("gpt-4o").output
    assert total["unpriced_calls"] == 0
    assert total["cost_usd"] == pytest.approx((total["input_tokens"] * price_in + total["output_tokens"] * price_out) / 1e6, abs=1e-6)
    assert total["cost_usd"] > 0


@pytest.mark.parametrize("spec", ["dry-run:openai:gpt-4o-mini", "dry-run:gpt-4o-mini", "dry-run:anthropic:claude-haiku-4-5"])
def test_known_models_give_a_cost_estimate(tmp_path, capsys, spec):
    assert _cli(tmp_path, "answers", "--data", str(DATA), "--model", spec) == 0
    captured = capsys.readouterr()
    usage = _usage(tmp_path)["total"]
    assert usage["cost_usd"] > 0 and usage["unpriced_calls"] == 0
    assert "cost unknown" not in captured.err


@pytest.mark.parametrize("spec", ["dry-run", "dry-run:openai-compatible:my-llama", "dry-run:no-such-model"])
def test_an_unknown_price_is_unknown_never_zero(tmp_path, capsys, spec):
    assert _cli(tmp_path, "answers", "--data", str(DATA), "--model", spec) == 0
    captured = capsys.readouterr()
    assert "| unknown |" in captured.out and "0.0000 |" not in captured.out
    assert "dialeval: warning: cost unknown" in captured.err


def test_local_models_cost_zero_as_a_known_price(tmp_path, capsys):
    assert _cli(tmp_path, "answers", "--data", str(DATA), "--model", "dry-run:smollm2") == 0
    captured = capsys.readouterr()
    assert "| 0.0000 |" in captured.out and "cost unknown" not in captured.err


def test_the_vdact_file_estimate_says_unknown_for_an_unpriced_model(tmp_path, capsys):
    predictions = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "vdact_demo" / "predictions" / "demo-bot.json"
    assert _cli(tmp_path, "vdact", "--data", str(predictions), "--model", "dry-run:openai-compatible:x") == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| demo-bot |")]
    assert any(line.endswith("| unknown |") for line in rows) and not any(line.endswith("| 0.0000 |") for line in rows)
