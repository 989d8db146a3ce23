"""A KGDS summary that hands back the prompt's placeholder is flagged, and still scored;
a report judged by a toy model says its numbers are a smoke test."""

from __future__ import annotations

import json
from pathlib import Path

from dialeval.config import ModelSettings, RunConfig
from dialeval.models.client import register_client
from dialeval.spec import ModelSpec
from dialeval.protocols.kgds.prompt_echo import echoes_prompt, template_text
from dialeval.evaluation import run
from dialeval.testing.scripted import ScriptedChatModel
from tests.test_kgds_graph import FIXTURE, config, fake_model, scripted
from tests.test_runner import DATA, _grade

PLACEHOLDER = "Person1 ... Person2 ..."
MATERIAL = "Person1: the Herons won 3-2 at the very end! Person2: I felt sorry for the Owls."


def test_the_templates_placeholder_is_an_echo():
    assert echoes_prompt(PLACEHOLDER, template_text("abs"), MATERIAL)
    assert echoes_prompt("Person1 ... Person2 ... Person1 ...", template_text("ebs"), MATERIAL)


def test_a_summary_of_the_input_is_not_an_echo():
    real = "Person1 loved that the Herons won 3-2 at the very end. Person2 felt sorry for the Owls."
    assert not echoes_prompt(real, template_text("abs"), MATERIAL)
    assert not echoes_prompt("", template_text("abs"), MATERIAL)


def test_words_that_are_in_the_input_too_are_not_counted_as_copied():
    # "Person1 ... Person2 ..." is the input's own text here, so the summary copies the input
    assert not echoes_prompt(PLACEHOLDER, template_text("abs"), "Person1 ... Person2 ... they trail off")


def placeholder_summaries(prompt: str) -> str:
    """The scripted system writes the template's placeholder as its opinion summary."""
    if "Abstractive background summary:" in prompt:
        return json.dumps({"background_summary": "The Herons beat the Owls 3-2.", "opinion_summary": PLACEHOLDER})
    return fake_model(prompt)


def test_a_run_flags_placeholder_summaries_and_keeps_their_scores(tmp_path):
    model = scripted("placeholder", placeholder_summaries)
    result = run("kgds", FIXTURE, config(tmp_path, model, patterns=["abs"], reflection_rounds=0), progress=False)
    [record] = result.records
    [summary] = record["summaries"]
    assert summary["echoes_prompt"] == ["opinion"]
    metrics = json.loads((result.run_dir / "metrics.json").read_text())
    assert metrics["prompt_echoes"] == [{"item": record["id"], "pattern": "abs", "round": 0, "fields": ["opinion"]}]
    # the flag hides nothing: the opinion was decomposed and scored as the system's
    assert record["scores"]["abs"]["0"]["outcome"]["cao_recall"] == "ok"
    report = result.report_path.read_text()
    assert "**Summaries that echo the prompt.** 1 summary of 1 sample copies the prompt's own placeholder" in report
    assert f"- {record['id']} ABS-AOS round 0: opinion" in report


def test_a_run_of_real_summaries_flags_nothing(tmp_path):
    model = scripted("real", fake_model)
    result = run("kgds", FIXTURE, config(tmp_path, model, patterns=["abs"], reflection_rounds=0), progress=False)
    assert result.metrics["prompt_echoes"] == []
    assert "echo the prompt" not in result.report_path.read_text()


def test_smollm2_is_marked_as_a_toy_and_api_models_are_not():
    assert ModelSpec.parse("smollm2").is_toy
    assert not ModelSpec.parse("openai:gpt-4o").is_toy
    assert not ModelSpec.parse("hf:HuggingFaceTB/SmolLM2-1.7B-Instruct").is_toy


def _answers_report(tmp_path: Path, spec: str) -> str:
    settings = ModelSettings(spec=spec)
    register_client(settings, ScriptedChatModel(respond=_grade))
    cfg = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, parse_retries=0, run_id="toy")
    return run("answers", DATA, cfg, progress=False).report_path.read_text()


def test_a_report_judged_by_a_toy_model_says_it_is_a_smoke_test(tmp_path):
    report = _answers_report(tmp_path, "smollm2")
    assert "**A smoke test, not a measurement.** The judge (`smollm2`) is a toy model" in report
    assert report.index("smoke test") < report.index("## Results")


def test_a_report_judged_by_an_api_model_has_no_toy_sentence(tmp_path):
    assert "smoke test" not in _answers_report(tmp_path, "openai:scripted-toy-check")
