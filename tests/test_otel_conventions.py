"""The shapes of earlier GenAI semantic conventions, which no instrumentation installed
here writes any more (opentelemetry-instrumentation-openai-v2 2.4b0 only writes the current
``gen_ai.input/output.messages``; these fixtures are written by hand after the published
conventions): per-message events as log records, and OpenLLMetry's flattened
``gen_ai.prompt.N.*`` attributes. Also: tool definitions, and a merge that does not fit."""

from __future__ import annotations

import json

from dialeval.data.importers import import_file
from dialeval.conversation.data import load_conversations

TRACE, SPAN1, SPAN2 = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", "b7ad6b7169203332"
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_time", "arguments": "{\"city\": \"Lima\"}"}}


def kv(key, value):
    return {"key": key, "value": {"intValue": str(value)} if isinstance(value, int) else {"stringValue": value}}


def span(span_id, start, attributes):
    return {"traceId": TRACE, "spanId": span_id, "name": "chat gpt-4o", "startTimeUnixNano": str(start),
            "attributes": [kv(k, v) for k, v in attributes.items()]}


def event(span_id, name, body):
    return {"traceId": TRACE, "spanId": span_id, "eventName": name, "timeUnixNano": "1",
            "body": {"stringValue": json.dumps(body)}}


def shape(path):
    conv = load_conversations(path, "otel")[0]
    return conv.system, [(t.role, t.text, [(c.name, c.arguments, c.result) for c in t.tool_calls]) for t in conv.turns], conv.tools


EXPECTED_TURNS = [("user", "What time is it in Lima?", []),
                  ("assistant", "It is 09:12 in Lima.", [("get_time", {"city": "Lima"}, "09:12")])]


def test_per_message_events_of_the_1_28_conventions(tmp_path):
    spans = {"resourceSpans": [{"scopeSpans": [{"spans": [span(SPAN1, 1, {"gen_ai.conversation.id": "lima"}),
                                                          span(SPAN2, 2, {"gen_ai.conversation.id": "lima"})]}]}]}
    logs = {"resourceLogs": [{"scopeLogs": [{"logRecords": [
        event(SPAN1, "gen_ai.system.message", {"content": "Be brief."}),
        event(SPAN1, "gen_ai.user.message", {"content": "What time is it in Lima?"}),
        event(SPAN1, "gen_ai.choice", {"index": 0, "finish_reason": "tool_calls", "message": {"tool_calls": [CALL]}}),
        event(SPAN2, "gen_ai.user.message", {"content": "What time is it in Lima?"}),
        event(SPAN2, "gen_ai.assistant.message", {"tool_calls": [CALL]}),
        event(SPAN2, "gen_ai.tool.message", {"content": "09:12", "id": "call_1"}),
        event(SPAN2, "gen_ai.choice", {"index": 0, "finish_reason": "stop", "message": {"content": "It is 09:12 in Lima."}}),
    ]}]}]}
    path = tmp_path / "telemetry.jsonl"
    path.write_text(json.dumps(spans) + "\n" + json.dumps(logs) + "\n")
    assert shape(path) == ("Be brief.", EXPECTED_TURNS, [])
    record = import_file("otel", path)[0][0]
    assert record["id"] == "lima" and record["metadata"]["source"]["turn_ids"] == {"2": SPAN2}


def test_flattened_prompt_attributes_and_tool_definitions(tmp_path):
    first = {"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "What time is it in Lima?",
             "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.tool_calls.0.id": "call_1",
             "gen_ai.completion.0.tool_calls.0.name": "get_time", "gen_ai.completion.0.tool_calls.0.arguments": "{\"city\": \"Lima\"}",
             "llm.request.functions.0.name": "get_time", "llm.request.functions.0.description": "The time in a city",
             "llm.request.functions.0.parameters": json.dumps({"type": "object", "properties": {"city": {"type": "string"}}})}
    second = {"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "What time is it in Lima?",
              "gen_ai.prompt.1.role": "assistant", "gen_ai.prompt.1.tool_calls.0.id": "call_1",
              "gen_ai.prompt.1.tool_calls.0.name": "get_time", "gen_ai.prompt.1.tool_calls.0.arguments": "{\"city\": \"Lima\"}",
              "gen_ai.prompt.2.role": "tool", "gen_ai.prompt.2.content": "09:12", "gen_ai.prompt.2.tool_call_id": "call_1",
              "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "It is 09:12 in Lima."}
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span(SPAN1, 1, first), span(SPAN2, 2, second)]}]}]}))
    system, turns, tools = shape(path)
    assert turns == EXPECTED_TURNS
    assert tools == [{"type": "function", "function": {"name": "get_time", "description": "The time in a city",
                                                       "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]


def _parts(role, text):
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def test_a_history_that_does_not_fit_is_added_with_a_warning(tmp_path):
    """The second call re-sends an edited history: its messages go after the conversation, and the import says so."""
    first = {"gen_ai.conversation.id": "c", "gen_ai.input.messages": _parts("user", "Hi"), "gen_ai.output.messages": _parts("assistant", "Hello")}
    second = {"gen_ai.conversation.id": "c",
              "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Hey"}]},
                                                  {"role": "assistant", "parts": [{"type": "text", "content": "Hello"}]},
                                                  {"role": "user", "parts": [{"type": "text", "content": "Bye"}]}]),
              "gen_ai.output.messages": _parts("assistant", "Goodbye")}
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span(SPAN1, 1, first), span(SPAN2, 2, second)]}]}]}))
    records, log = import_file("otel", path)
    assert log.warnings == [f"conversation 'c': call {SPAN2}: its input differs from the conversation so far at message 1; "
                            "its messages from there were added after the conversation (check it by hand)"]
    assert [m["content"] for m in records[0]["messages"]] == ["Hi", "Hello", "Hey", "Hello", "Bye", "Goodbye"]


def test_a_re_sent_history_is_never_doubled(tmp_path):
    """Calls that re-send the whole history (and one logged twice) add only what is new."""
    one = {"gen_ai.input.messages": _parts("user", "Hi"), "gen_ai.output.messages": _parts("assistant", "Hello")}
    two = {"gen_ai.input.messages": json.dumps(json.loads(_parts("user", "Hi")) + json.loads(_parts("assistant", "Hello"))
                                               + json.loads(_parts("user", "Bye"))), "gen_ai.output.messages": _parts("assistant", "Goodbye")}
    spans = [span(SPAN1, 1, one), span(SPAN2, 2, two), span("b7ad6b7169203333", 3, two)]
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    records, log = import_file("otel", path)
    assert [m["content"] for m in records[0]["messages"]] == ["Hi", "Hello", "Bye", "Goodbye"] and log.warnings == []


def test_two_agents_of_one_trace_stay_apart_and_successive_steps_join(tmp_path):
    """Grouping by trace and parent span, then the prefix rule: the planner's two steps (under
    two node spans) make one conversation, the researcher (its own history) another."""
    def step(span_id, parent, start, inputs, output):
        attributes = {"gen_ai.input.messages": json.dumps([{"role": r, "parts": [{"type": "text", "content": t}]} for r, t in inputs]),
                      "gen_ai.output.messages": _parts("assistant", output)}
        return {**span(span_id, start, attributes), "parentSpanId": parent}

    spans = [step("0000000000000001", "00000000000000a1", 1, [("user", "Plan a trip")], "Where to?"),
             step("0000000000000002", "00000000000000b1", 2, [("user", "Find museums in Lima")], "Museo Larco"),
             step("0000000000000003", "00000000000000a2", 3, [("user", "Plan a trip"), ("assistant", "Where to?"), ("user", "Lima")],
                  "Lima it is")]
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    records, log = import_file("otel", path)
    assert [[m["content"] for m in r["messages"]] for r in records] == [
        ["Plan a trip", "Where to?", "Lima", "Lima it is"], ["Find museums in Lima", "Museo Larco"]]
    assert [r["id"] for r in records] == [TRACE, f"{TRACE}/00000000000000b1"]
    assert log.notes == ["grouped 3 calls into 2 conversations: 2 by trace and parent span "
                         "(1 groups joined to an earlier conversation whose whole history their first call re-sent: the time-and-prefix rule)"]
