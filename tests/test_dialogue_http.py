"""The bundled fixture end to end against the local OpenAI-compatible test server."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from dialeval.benchmarks import get_benchmark
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.dialogue_helpers import fake_embed, scripted_reviewer, write_jsonl
from tests.helpers import http_config

FIXTURE = resources.files("dialeval").joinpath("fixtures", "dialogue_demo.jsonl")


@pytest.fixture(autouse=True)
def _fast_embeddings(monkeypatch):
    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)


def reviewer(body: dict) -> str:
    """Helpfulness of turn 4 ("sardines") comes back off the scale: it must stay unparsed."""
    text = prompt_of(body)
    if "name: helpfulness" in text and '<reply turn="4">' in text:
        return '{"rationale": "hard to say", "verdict": 9}'
    if "note-keeper" in text:
        return json.dumps({"user_facts": {"diet": "vegetarian"}} if "vegetarian" in text else {})
    verdict = '"yes"' if re.search(r"one of: \"(yes|appropriate)\"", text) else 4
    return f'{{"rationale": "looks fine", "verdict": {verdict}}}'


def test_session_mode_over_http(tmp_path):
    human = write_jsonl(tmp_path / "human.jsonl", [
        {"id": "trip", "turn": 2, "criterion": "relevance", "score": 5},
        {"id": "trip", "turn": 4, "criterion": "relevance", "score": 2},
        {"id": "lamp", "criterion": "goal_completion", "score": "yes"},
    ])
    with OpenAIStub(respond=reviewer) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"context": "session", "context_budget": 3000, "human_scores": str(human)})
        result = run("dialogue", str(FIXTURE), config, progress=False)
        prompts = [prompt_of(b) for b in server.completions]

    trip = next(r for r in result.records if r["id"] == "trip")
    late = [p for p in prompts if "name: relevance" in p and '<reply turn="4">' in p][0]
    # the session layout: the judge sees its own earlier verdict beside turn 2
    assert "(your verdict on this turn earlier: 4 (looks fine))" in late
    helpful = next(u for u in trip["turn_units"] if u["criterion"] == "helpfulness" and u["turn"] == 4)
    assert helpful["status"] == "unparsed" and helpful["score"] is None and '"verdict": 9' in helpful["call"]["raw"]
    assert result.metrics["turn_criteria"]["helpfulness"]["failures"] == {"unparsed": 1}
    assert result.metrics["turn_criteria"]["faithfulness"]["not_applicable"] == 2  # trip has no documents
    assert result.metrics["conversation_criteria"]["goal_completion"]["verdicts"] == {"yes": 2}
    scores = get_benchmark("dialogue").item_scores(result.records)
    assert scores["relevance"] == {"trip/2": 4.0, "trip/4": 4.0, "lamp/2": 4.0}
    assert scores["goal_completion"] == {"trip": 3.0, "lamp": 3.0}  # yes, partly, no: yes ranks 3
    report = (result.run_dir / "report.md").read_text(encoding="utf-8")
    assert "Context mode: **session**" in report and "budget **3000** tokens" in report
    assert result.metrics["human_agreement"]["relevance"]["n"] == 2  # too few and too alike for a statistic:
    assert result.metrics["human_agreement"]["relevance"]["spearman"]["value"] is None  # n/a, never 0
    assert "| relevance | 2 | 2 | n/a [1] | n/a [1] | n/a [1] |" in report  # each n/a says why below the table
    assert "[1] 2 shared units: a correlation needs at least 3." in report


def test_notes_mode_over_http_writes_the_note(tmp_path):
    def respond(body: dict) -> str:
        from langchain_core.messages import HumanMessage

        return scripted_reviewer([HumanMessage(prompt_of(body))])

    with OpenAIStub(respond=respond) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"context": "notes", "criteria": ["consistency"]})
        result = run("dialogue", str(FIXTURE), config, progress=False)

    trip = next(r for r in result.records if r["id"] == "trip")
    assert [n["turn"] for n in trip["note_updates"]] == [2, 4] and all(n["status"] == "ok" for n in trip["note_updates"])
    assert [u["criterion"] for u in trip["turn_units"]] == ["consistency", "consistency"]
    assert result.failed == 0
    # the lamp conversation has a document: its reply's facts are checked against it
    lamp = next(r for r in result.records if r["id"] == "lamp")
    [facts] = lamp["grounding_units"]
    assert facts["facts"] == ["Check that the bulb is screwed in tightly", "then try another bulb"]
    assert facts["precision"] == 0.5 and facts["unsupported"] == ["then try another bulb"]
    assert trip["grounding_units"] == []  # no documents, no summary
    assert result.metrics["grounding"]["turn"]["mean_precision"] == 0.5


def test_a_tiny_budget_sends_nothing_and_says_so(tmp_path):
    with OpenAIStub(respond=reviewer) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"context": "notes", "context_budget": 150})
        result = run("dialogue", str(FIXTURE), config, progress=False)
        sent = len(server.completions)

    units = [u for r in result.records for u in r["turn_units"] + r["conversation_units"] if u["status"] != "not_applicable"]
    notes = [n for r in result.records for n in r["note_updates"]]
    facts = [f for r in result.records for f in r["grounding_units"]]
    assert sent == 0 and result.failed == 0
    assert {u["status"] for u in units} == {"over_budget"} and all(u["context"]["prompt_tokens"] > 150 for u in units)
    assert {n["status"] for n in notes} == {"over_budget"} and {f["status"] for f in facts} == {"over_budget"}
    assert result.metrics["prompts"]["over_budget"] == len(units) + len(notes)


def test_a_summary_is_judged_and_its_facts_checked_against_the_dialogue(tmp_path):
    import io

    from PIL import Image

    picture = io.BytesIO()
    Image.new("RGB", (2, 2), "blue").save(picture, format="PNG")
    (tmp_path / "shelf.png").write_bytes(picture.getvalue())
    data = write_jsonl(tmp_path / "chat.jsonl", [{
        "id": "shelf",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Is this shelf straight?"},
                                         {"type": "image_url", "image_url": {"url": "shelf.png"}}]},
            {"role": "assistant", "content": "It leans left, so the shelf is screwed in unevenly."},
        ],
        "summary": "The assistant said the shelf is screwed in unevenly, and offered a new shelf.",
    }])
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text("criteria:\n  - name: faithful_summary\n    level: summary\n"
                      "    description: Does the summary say only what the conversation says?\n    scale: [yes, no]\n"
                      "  - name: consistency\n    description: Does the reply fit the picture?\n    scale: [1, 5]\n")

    def respond(body: dict) -> str:
        from langchain_core.messages import HumanMessage

        text = prompt_of(body)
        if "<summary>" in text:
            return '{"rationale": "adds an offer", "verdict": "no"}'
        return scripted_reviewer([HumanMessage(text)])

    with OpenAIStub(respond=respond) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"rubric": str(rubric)})
        result = run("dialogue", data, config, progress=False)
        images = [part["image_url"]["url"][:22] for b in server.completions for m in b["messages"]
                  if isinstance(m["content"], list) for part in m["content"] if part.get("type") == "image_url"]

    [record] = result.records
    assert [(u["level"], u["verdict"]) for u in record["conversation_units"]] == [("summary", "no")]
    assert [(u["turn"], u["verdict"]) for u in record["turn_units"]] == [(2, 5)]
    [facts] = record["grounding_units"]  # no documents: only the summary is checked, against the dialogue
    assert facts["level"] == "summary" and facts["unsupported"] == ["and offered a new shelf"]
    assert result.metrics["grounding"]["summary"]["mean_precision"] == 0.5
    assert images == ["data:image/png;base64,"]  # the turn judge saw the user's picture, as pixels
