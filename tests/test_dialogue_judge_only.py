"""`--option judge_only=labelled`: the judge is asked only where a human label waits for it."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from dialeval.errors import ConfigError
from dialeval.protocols.dialogue.loading import load
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.dialogue_helpers import write_jsonl
from tests.helpers import http_config

FIXTURE = resources.files("dialeval").joinpath("fixtures", "dialogue_demo.jsonl")


def reviewer(body: dict) -> str:
    verdict = '"yes"' if re.search(r"one of: \"(yes|appropriate)\"", prompt_of(body)) else 4
    return f'{{"rationale": "scripted", "verdict": {verdict}}}'


def test_only_labelled_turns_and_conversations_are_judged(tmp_path):
    labels = write_jsonl(tmp_path / "human.jsonl", [
        {"id": "trip", "turn": 4, "criterion": "relevance", "annotator": "ann", "score": 4},
        {"id": "trip", "turn": 4, "criterion": "relevance", "annotator": "bob", "score": 5},
    ])
    options = {"criteria": ["relevance", "helpfulness", "goal_completion"], "human_scores": str(labels), "judge_only": "labelled"}
    with OpenAIStub(respond=reviewer) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url}, options=options)
        result = run("dialogue", str(FIXTURE), config, progress=False)
        calls = len(server.completions)
    [record] = result.records  # lamp has no label: not judged at all
    assert record["id"] == "trip" and calls == 1
    assert [(u["turn"], u["criterion"]) for u in record["turn_units"]] == [(4, "relevance")]
    assert record["conversation_units"] == []  # goal_completion carries no label for trip
    row = result.metrics["human_agreement"]["relevance"]
    assert (row["n"], row["labels"], row["human"]["annotators"]) == (1, 2, 2)


def test_judge_only_labelled_needs_the_labels():
    with pytest.raises(ConfigError, match="judge_only=labelled needs the labels"):
        load(FIXTURE, {"judge_only": "labelled"})
