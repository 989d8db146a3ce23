"""The report's role table names the model each dialogue role called, as the cost table counts them."""

from __future__ import annotations

import re
from importlib import resources

from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.dialogue_helpers import fake_embed
from tests.helpers import http_config

FIXTURE = resources.files("dialeval").joinpath("fixtures", "dialogue_demo.jsonl")


def reviewer(body: dict) -> str:
    text = prompt_of(body)
    if "atomic" in text.lower() and "facts" in text.lower() and '"facts"' in text:
        return '{"facts": ["The bulb may be loose."]}'
    if '"verdicts"' in text:
        return '{"verdicts": [{"fact": 1, "reason": "in the documents", "label": "supported"}]}'
    verdict = '"yes"' if re.search(r"one of: \"(yes|appropriate)\"", text) else 4
    return f'{{"rationale": "scripted", "verdict": {verdict}}}'


def test_every_role_that_called_a_model_names_it(tmp_path, monkeypatch):
    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)
    with OpenAIStub(respond=reviewer) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"criteria": ["faithfulness", "goal_completion"]})
        result = run("dialogue", str(FIXTURE), config, progress=False)
    report = result.report_path.read_text(encoding="utf-8")
    roles = {line.split("|")[1].strip(): line.split("|")[3].strip() for line in report.splitlines()
             if re.match(r"\| (judge|conversation_judge|fact_checker) \|", line)}
    assert roles == {"judge": "`openai-compatible:stub`", "conversation_judge": "`openai-compatible:stub`",
                     "fact_checker": "`openai-compatible:stub`"}
