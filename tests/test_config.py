"""Run configs: YAML to pydantic, errors that name the field, command line wins."""

from __future__ import annotations

import pytest

from dialeval.config import ConfigError, load_config
from dialeval.models.client import SpecError, parse_spec


def test_yaml_config_with_per_role_models(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(
        "model: openai:gpt-4o-mini\n"
        "models:\n"
        "  judge: {spec: 'anthropic:claude-3-5-haiku-latest', temperature: 0.2}\n"
        "concurrency: 8\n"
        "options: {patterns: [ebs]}\n"
    )
    config = load_config(path, limit=3, concurrency=None)
    ctx = config.context()
    assert ctx.model_for("judge").spec == "anthropic:claude-3-5-haiku-latest"
    assert ctx.model_for("summarizer").spec == "openai:gpt-4o-mini"
    assert config.limit == 3 and config.concurrency == 8
    assert ctx.options == {"patterns": ["ebs"]}


def test_command_line_overrides_the_file(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("model: openai:gpt-4o-mini\nlimit: 10\n")
    config = load_config(path, model="openai:gpt-4o", limit=2)
    assert config.model.spec == "openai:gpt-4o" and config.limit == 2
    # a bare dry run over the file's model is a dry run priced as that model
    assert load_config(path, model="dry-run").model.spec == "dry-run:openai:gpt-4o-mini"


def test_default_model_is_the_bundled_offline_one():
    assert load_config().context().default_model.spec == "smollm2"


@pytest.mark.parametrize(
    "text, field",
    [
        ("concurrency: 0\n", "concurrency"),
        ("modle: openai:gpt-4o\n", "modle"),
        ("models: {judge: {spec: openai:x, temprature: 1}}\n", "models.judge.temprature"),
        ("limit: many\n", "limit"),
    ],
)
def test_invalid_configs_name_file_and_field(tmp_path, text, field):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(path) in str(err.value) and field in str(err.value)


def test_unknown_backend_is_a_config_error(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("model: gpt4:turbo\n")
    with pytest.raises(ConfigError, match="unknown model spec") as err:
        load_config(path)
    assert "did you mean" not in str(err.value)  # nothing close to gpt4
    path.write_text("model: opneai:gpt-4o-mini\n")
    with pytest.raises(ConfigError, match=r"unknown model spec .* \(did you mean 'openai:gpt-4o-mini'\?\)"):
        load_config(path)


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)


@pytest.mark.parametrize(
    "spec, parsed",
    [
        ("openai:gpt-4o-mini", ("openai", "gpt-4o-mini")),
        ("anthropic:claude-3-5-haiku-latest", ("anthropic", "claude-3-5-haiku-latest")),
        ("openai-compatible:Qwen/Qwen2.5-7B-Instruct", ("openai-compatible", "Qwen/Qwen2.5-7B-Instruct")),
        ("hf:/models/llama", ("hf", "/models/llama")),
        ("smollm2", ("smollm2", "")),
        ("dry-run", ("dry-run", "")),
        ("dry-run:gpt-4o-mini", ("dry-run", "gpt-4o-mini")),
    ],
)
def test_model_specs(spec, parsed):
    assert parse_spec(spec) == parsed


@pytest.mark.parametrize("spec", ["gpt-4o", "openai:", "ollama:llama3", ""])
def test_bad_model_specs(spec):
    with pytest.raises(SpecError):
        parse_spec(spec)


@pytest.mark.parametrize(
    ("text", "field", "suggestion", "valid"),
    [
        ("concurency: 8\n", "field 'concurency'", "did you mean 'concurrency'?", "parse_retries"),
        ("model: {spec: smollm2, max_token: 64}\n", "field 'model.max_token'", "did you mean 'max_tokens'?", "structured_output"),
        ("models: {judge: {spec: smollm2, max_token: 64}}\n", "field 'models.judge.max_token'", "did you mean 'max_tokens'?", "base_url"),
        ("model_s: {}\n", "field 'model_s'", "did you mean 'models'?", "options"),
    ],
)
def test_a_mistyped_key_lists_the_valid_keys_and_suggests_the_closest(tmp_path, text, field, suggestion, valid):
    path = tmp_path / "typo.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as failure:
        load_config(path)
    message = str(failure.value)
    assert message.startswith(f"{path}: {field}: unknown key; valid: ")
    assert message.endswith(f"({suggestion})") and valid in message
    assert "Extra inputs" not in message


def test_a_mistyped_option_names_the_config_file_the_key_and_the_closest_option(tmp_path):
    from pathlib import Path

    from dialeval.cli import main

    path = tmp_path / "typo.yaml"
    path.write_text("options: {reflection_round: 1}\n")
    data = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "kgds_demo.json"
    with pytest.raises(ConfigError) as failure:
        from dialeval.evaluation import run

        run("kgds", data, load_config(path), progress=False)
    message = str(failure.value)
    assert message.startswith(f"{path}: kgds option 'reflection_round': unknown key; valid: patterns, reflection_rounds")
    assert message.endswith("(did you mean 'reflection_rounds'?)")
    assert main(["run", "kgds", "--data", str(data), "--config", str(path), "--output-dir", str(tmp_path / "runs")]) == 2
    assert not (tmp_path / "runs").exists()
