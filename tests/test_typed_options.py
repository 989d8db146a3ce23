"""A benchmark's options are validated once per run (or per Studio invocation) and read typed after."""

from __future__ import annotations

import asyncio
import json
from importlib import resources

import pytest

import dialeval.config as config_module
from dialeval.config import ConfigError, EvalContext, ModelSettings, RunConfig
from dialeval.protocols.dialogue.common import DialogueOptions
from dialeval.protocols.dialogue.graph import build_graph
from dialeval.run.runner import prepare_run

FIXTURE = resources.files("dialeval").joinpath("fixtures", "dialogue_demo.jsonl")


@pytest.fixture
def validations(monkeypatch):
    """How many times an options model was validated."""
    seen: list[str] = []
    real = config_module.parse_options

    def counting(model, options, benchmark):
        seen.append(benchmark)
        return real(model, options, benchmark)

    monkeypatch.setattr(config_module, "parse_options", counting)
    return seen


def test_the_typed_options_are_carried_by_the_context(validations):
    context = EvalContext(options={"context_budget": 1234})
    first = DialogueOptions.of(context)
    assert first.context_budget == 1234 and DialogueOptions.of(context) is first
    assert validations == ["dialogue"]

    judged = context.model_copy(update={"options": {"context": "full", "context_budget": 8000}})  # a subgraph's own
    assert DialogueOptions.of(judged).context_budget == 8000
    assert DialogueOptions.of(context) is first and DialogueOptions.of(judged).context == "full"
    assert validations == ["dialogue", "dialogue"]


def test_a_bad_option_names_itself():
    with pytest.raises(ConfigError, match="dialogue option 'context_budget'"):
        DialogueOptions.of(EvalContext(options={"context_budget": 0}))


def _records() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


def test_a_prepared_run_validates_once_and_its_nodes_never_again(tmp_path, validations):
    config = RunConfig(model=ModelSettings(spec="dry-run"), cache_path=None, output_dir=str(tmp_path), preflight=False,
                       options={"criteria": ["relevance", "goal_completion"]})
    prep = prepare_run("dialogue", FIXTURE, config)
    after_prepare = len(validations)
    assert after_prepare >= 1  # loading reads them too; the context then holds the typed object
    context = prep.context.model_copy(update={"run_dir": str(tmp_path)})  # as the runner hands it to the graph
    outputs = [asyncio.run(build_graph().ainvoke(record, context=context)) for record in _records()]
    assert len(validations) == after_prepare
    assert [u["criterion"] for u in outputs[1]["conversation_units"]] == ["goal_completion"]


def test_a_studio_invocation_without_a_prepared_run_validates_once(tmp_path, validations):
    studio = {"default_model": {"spec": "dry-run"}, "cache_path": None, "run_dir": str(tmp_path),
              "options": {"criteria": ["relevance"]}}  # what LangGraph Studio sends: a plain dict
    output = asyncio.run(build_graph().ainvoke(_records()[0], context=studio))
    assert validations == ["dialogue"]
    assert {u["criterion"] for u in output["turn_units"]} == {"relevance"}


def test_the_defaults_table_of_docs_running_is_the_code():
    from pathlib import Path

    from dialeval.benchmarks import get_benchmark
    from dialeval.protocols.simulation.common import JUDGING_DEFAULTS

    text = (Path(__file__).parents[1] / "docs" / "running.md").read_text(encoding="utf-8")
    section = text.split("## Options: checked once", 1)[1].split("\n## ", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("|")][2:]
    rows = [[cell.strip(" `") for cell in line.strip("|").split("|")] for line in table]
    assert len(rows) == 8
    for setting, benchmark, default, _ in rows:
        if setting == "judging.context_budget":
            code = JUDGING_DEFAULTS["context_budget"]
        else:
            code = get_benchmark(benchmark).options_model.model_fields[setting].default
        assert (setting, benchmark, int(default)) == (setting, benchmark, code)
