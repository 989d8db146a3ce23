"""Agent conversations: tool calls and results load as part of the assistant's turn, in
OpenAI, Anthropic and ShareGPT shapes; judges read them compactly, under the budget."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from langchain_core.messages import HumanMessage

from dialeval.data.io import DataError
from dialeval.protocols.dialogue.loading import to_record
from dialeval.protocols.dialogue.context import build_view, turn_line
from dialeval.conversation.data import load_conversations
from dialeval.protocols.dialogue.view import conversation_view
from tests.dialogue_helpers import write_jsonl

AGENT_DEMO = resources.files("dialeval").joinpath("fixtures", "agent_demo.jsonl")


def test_openai_and_anthropic_tool_calls_join_the_assistant_turn():
    trip, refund = load_conversations(str(AGENT_DEMO))

    assert [t.role for t in trip.turns] == ["user", "assistant", "user", "assistant"]
    weather, currency = trip.turns[1].tool_calls
    assert (weather.name, weather.arguments, weather.id, weather.result) == (
        "get_weather", {"city": "Paris", "day": "tomorrow"}, "call_w1", "18 °C, light rain in the afternoon")
    assert currency.arguments == {"amount": 100, "from": "EUR", "to": "USD"} and currency.result == "108.25 USD"
    assert trip.turns[1].text.startswith("Tomorrow Paris")
    assert [c.name for c in trip.turns[3].reference_tool_calls] == ["search_restaurants", "book_table"]
    assert [t["function"]["name"] for t in trip.tools][:2] == ["get_weather", "convert_currency"]

    # Anthropic blocks: the user messages holding only tool_result blocks are no user turns
    assert [t.role for t in refund.turns] == ["user", "assistant"]
    reply = refund.turns[1]
    assert [(c.name, c.result) for c in reply.tool_calls] == [
        ("lookup_order", "order 1042: electric kettle, 39.90 EUR, delivered 3 days ago"), ("issue_refund", "refund 77 issued")]
    assert reply.text == "I will check the order first.\nYour refund of 39.90 EUR for order 1042 is on its way."
    assert [c.name for c in refund.reference_tool_calls] == ["lookup_order", "issue_refund"]


def test_sharegpt_function_call_and_observation(tmp_path):
    record = {"id": "s", "tools": json.dumps([{"name": "lookup", "description": "find a word"}]), "conversations": [
        {"from": "human", "value": "What does 'ephemeral' mean?"},
        {"from": "function_call", "value": json.dumps({"name": "lookup", "arguments": {"word": "ephemeral"}})},
        {"from": "observation", "value": "lasting a very short time"},
        {"from": "gpt", "value": "It means lasting a very short time."},
    ]}
    [conv] = load_conversations(write_jsonl(tmp_path / "s.jsonl", [record]))

    [reply] = conv.assistant_turns()
    assert [(c.name, c.arguments, c.result) for c in reply.tool_calls] == [("lookup", {"word": "ephemeral"}, "lasting a very short time")]
    assert reply.text == "It means lasting a very short time." and conv.tools == [{"name": "lookup", "description": "find a word"}]


@pytest.mark.parametrize("messages, field, words", [
    ([{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x", "content": "42"}],
     "messages.1", "must follow an assistant message that made a tool call"),
    ([{"role": "user", "content": "hi"},
      {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{}"}}]},
      {"role": "tool", "tool_call_id": "b", "content": "42"}],
     "messages.2", "tool call id 'b' matches no call of this turn ('a')"),
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [{"id": "a", "function": {"arguments": "{}"}}]}],
     "messages.1.tool_calls.0.function.name", "a tool call needs a 'name'"),
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": 3}]}],
     "messages.1.content.0.input", "arguments are a JSON object"),
])
def test_bad_tool_records_are_named(tmp_path, messages, field, words):
    path = write_jsonl(tmp_path / "bad.jsonl", [{"id": "ok", "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]},
                                                {"id": "bad", "messages": messages}])
    with pytest.raises(DataError) as err:
        load_conversations(path)
    assert f"bad.jsonl, record 2 (line 2), field '{field}'" in str(err.value) and words in str(err.value)


def test_sharegpt_function_call_must_be_json(tmp_path):
    record = {"id": "s", "conversations": [{"from": "human", "value": "hi"}, {"from": "function_call", "value": "lookup(word)"}]}
    with pytest.raises(DataError, match=r"record 1 \(line 1\), field 'conversations.1.value': a function_call's value is JSON"):
        load_conversations(write_jsonl(tmp_path / "s.jsonl", [record]))


def test_long_tool_result_is_shortened_with_a_marker_and_counted(tmp_path):
    log = " ".join(f"row{i}=ok" for i in range(3000))
    record = {"id": "long", "messages": [
        {"role": "user", "content": "Check the logs."},
        {"role": "assistant", "tool_calls": [{"id": "1", "function": {"name": "read_logs", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "1", "content": log},
        {"role": "assistant", "content": "The logs are clean."},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "You are welcome."},
    ]}
    [conv] = load_conversations(write_jsonl(tmp_path / "l.jsonl", [record]))
    assert conv.turns[1].tool_calls[0].result == log  # the record keeps all of it

    line = turn_line(conv.turns[1])
    assert "[tool call 1] read_logs({})" in line and "row0=ok" in line and "row2999=ok" not in line
    assert f"of {len(log):,} characters shown]" in line and "The logs are clean." in line

    def render(text: str) -> list:
        return [HumanMessage(f"<context>\n{text}\n</context>")]

    small = build_view(render, "window", conv.turns, 250, window_turns=6)
    large = build_view(render, "window", conv.turns, 5000, window_turns=6)
    assert small.turns_shown == [3, 4] and small.omitted_turns == 2 and small.tokens <= 250  # the tool turn did not fit
    assert large.turns_shown == [1, 2, 3, 4] and 300 < large.tokens <= 5000


def test_tool_calls_reach_the_record_and_the_viewer():
    trip, _ = load_conversations(str(AGENT_DEMO))
    record = to_record(trip, {})

    assert record["turns"][1]["tool_calls"][0] == {
        "name": "get_weather", "arguments": {"city": "Paris", "day": "tomorrow"}, "id": "call_w1",
        "result": "18 °C, light rain in the afternoon"}
    rows = conversation_view(record).turns
    assert [(c.name, c.arguments, c.result) for c in rows[3].tool_calls] == [
        ("search_restaurants", '{"near": "Louvre", "party_size": 2, "time": "20:00"}', '[{"name": "Chez Marie", "free_at": "20:00"}]')]
