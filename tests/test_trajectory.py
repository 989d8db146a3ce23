"""Trajectory criteria: tool calls against reference calls without a model (strict,
unordered, subset, superset; argument rules), and an LLM trajectory judge over HTTP."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from dialeval.errors import ConfigError
from dialeval.metrics.trajectory import Call, Rule, match
from dialeval.conversation.rubric import parse_rubric
from dialeval.report.viewer import write_site
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.dialogue_helpers import fake_embed
from tests.helpers import http_config

AGENT_DEMO = resources.files("dialeval").joinpath("fixtures", "agent_demo.jsonl")
WEATHER = Call("get_weather", {"city": "Paris", "day": "tomorrow"})
MONEY = Call("convert_currency", {"amount": 100, "from": "EUR", "to": "USD"})
BOOK = Call("book_table", {"time": "20:00", "request_id": "r-1"})


@pytest.mark.parametrize("made, expected, mode, matched", [
    ([WEATHER, MONEY], [WEATHER, MONEY], "strict", True),
    ([MONEY, WEATHER], [WEATHER, MONEY], "strict", False),
    ([MONEY, WEATHER], [WEATHER, MONEY], "unordered", True),
    ([WEATHER], [WEATHER, MONEY], "unordered", False),
    ([WEATHER], [WEATHER, MONEY], "subset", True),
    ([WEATHER, WEATHER], [WEATHER, MONEY], "subset", False),  # a reference call pairs with one call only
    ([WEATHER, MONEY, BOOK], [MONEY, WEATHER], "superset", True),
    ([WEATHER], [WEATHER, MONEY], "superset", False),
    ([], [], "strict", True),
])
def test_modes(made, expected, mode, matched):
    assert match(made, expected, mode).matched is matched


def test_argument_rules():
    made = [Call("book_table", {"time": "20:00", "request_id": "r-9", "party": {"size": 2.004, "trace": "x"}})]
    expected = [Call("book_table", {"time": "20:00", "request_id": "r-1", "party": {"size": 2, "trace": "y"}})]

    assert not match(made, expected, "strict").matched
    assert not match(made, expected, "strict", Rule(ignore_keys=frozenset({"request_id", "trace"}))).matched  # 2.004 != 2
    assert match(made, expected, "strict", Rule(ignore_keys=frozenset({"request_id", "trace"}), tolerance=0.01)).matched
    assert match(made, expected, "strict", Rule(arguments="ignore")).matched
    assert match([Call("f", '{"a": 1}')], [Call("f", {"a": 1.0})], "strict").matched  # JSON text is read
    assert not match([Call("f", {"on": True})], [Call("f", {"on": 1})], "strict").matched  # true is no number


def test_what_is_missing_and_extra_is_said():
    outcome = match([WEATHER, BOOK], [MONEY, WEATHER], "unordered")
    assert (outcome.pairs, outcome.missing, outcome.extra) == ([(0, 1)], [0], [1])
    assert outcome.explain([WEATHER, BOOK], [MONEY, WEATHER], "unordered") == (
        "1 of 2 expected calls matched (unordered); missing: convert_currency; not expected: book_table")


def test_a_bad_match_rule_is_named():
    with pytest.raises(ConfigError, match=r"criterion 0 \('calls'\), field 'match.tolerance'"):
        parse_rubric({"criteria": [{"name": "calls", "match": {"mode": "strict", "tolerance": -1}}]}, "r.yaml")


RUBRIC = """criteria:
  - name: calls_in_order
    match: {mode: strict}
  - name: same_calls
    match: {mode: unordered, tolerance: 0.001}
  - name: no_extra_calls
    match: {mode: subset}
  - name: all_calls_made
    level: conversation
    match: {mode: superset}
  - name: tool_use
    kind: trajectory
    description: Was each tool call needed, and does the reply use the results correctly?
    scale: [1, 5]
  - name: tool_use_overall
    level: conversation
    kind: trajectory
    description: Were the calls of the whole conversation needed and in a sensible order?
    scale: [1, 5]
"""


def respond(body: dict) -> str:
    """The trajectory judge marks a turn down when an expected call was never made."""
    text = prompt_of(body)
    if "<conversation>" in text:
        return json.dumps({"rationale": "sensible order", "verdict": 4})
    turn = text.split('<turn number="', 1)[1].split("</turn>", 1)[0]
    made = set(re.findall(r"\[tool call \d+\] (\w+)\(", turn))
    expected = set(re.findall(r"\[expected call \d+\] (\w+)\(", text))
    verdict = 2 if expected - made else 5
    return json.dumps({"rationale": f"missing {sorted(expected - made)}" if verdict == 2 else "every call needed", "verdict": verdict})


def test_agent_conversations_judged_with_trajectory_criteria(tmp_path, monkeypatch):
    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)
    rubric = tmp_path / "agent.yaml"
    rubric.write_text(RUBRIC)
    with OpenAIStub(respond=respond) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"rubric": str(rubric)}, run_id="agents")
        result = run("dialogue", str(AGENT_DEMO), config, progress=False)
        prompts = [prompt_of(b) for b in server.completions]

    verdicts = {(r["id"], u.get("turn"), u["criterion"]): u["verdict"] for r in result.records
                for u in r["turn_units"] + r["conversation_units"]}
    # by hand: trip turn 2 made weather then currency, expected currency then weather (100 == 100.0);
    # trip turn 4 made the search only, expected search and booking; refund has no per-turn reference
    assert {k: v for k, v in verdicts.items() if not k[2].startswith("tool_use")} == {
        ("trip", 2, "calls_in_order"): 0, ("trip", 2, "same_calls"): 1, ("trip", 2, "no_extra_calls"): 1,
        ("trip", 4, "calls_in_order"): 0, ("trip", 4, "same_calls"): 0, ("trip", 4, "no_extra_calls"): 1,
        ("refund", 2, "calls_in_order"): None, ("refund", 2, "same_calls"): None, ("refund", 2, "no_extra_calls"): None,
        ("trip", None, "all_calls_made"): 0,  # the turns' references joined: book_table was never called
        ("refund", None, "all_calls_made"): 1,  # its own reference: lookup_order, issue_refund(39.90 == 39.9)
    }
    assert {k: v for k, v in verdicts.items() if k[2] == "tool_use"} == {
        ("trip", 2, "tool_use"): 5, ("trip", 4, "tool_use"): 2, ("refund", 2, "tool_use"): 5}
    assert verdicts[("trip", None, "tool_use_overall")] == verdicts[("refund", None, "tool_use_overall")] == 4
    assert result.metrics["turn_criteria"]["same_calls"].items() >= {"n": 2, "mean": 0.5, "not_applicable": 1}.items()
    # only the trajectory judge asked the model: one prompt per assistant turn and conversation
    assert len(prompts) == 5
    whole = next(p for p in prompts if "<conversation>" in p and "order 1042" in p)
    assert "[expected call 2] issue_refund(" in whole and "[tool result 2] refund 77 issued" in whole
    late = next(p for p in prompts if '<turn number="4">' in p)
    assert "- book_table: Book a table at a restaurant" in late
    assert '[tool call 1] search_restaurants({"near": "Louvre", "party_size": 2, "time": "20:00"})' in late
    assert '[expected call 2] book_table({"restaurant": "Chez Marie", "party_size": 2, "time": "20:00"})' in late
    assert "[tool result 2] 108.25 USD" in late  # turn 2's calls are part of the context

    write_site(tmp_path / "runs")
    pages = [p.read_text(encoding="utf-8") for p in sorted((tmp_path / "runs" / "agents" / "view" / "items").glob("*.html"))]
    page = next(p for p in pages if "Chez Marie" in p)
    fourth = page[page.index('id="turn-4"'):]
    assert "<code>search_restaurants(" in fourth and "Chez Marie" in fourth
    assert re.search(r'data-criterion="same_calls">.*?<span class="score">0</span>.*?missing: book_table', fourth, re.DOTALL)
