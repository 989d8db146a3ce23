"""One agent conversation driven through real clients against the OpenAI test server, so
each tracer records it as it records any agent: a real OpenAI client (or a LangChain chat
model with tools) calls the server, runs the tools the model asks for, and sends their
results back. What was sent is kept to compare with what the importers rebuild."""

from __future__ import annotations

import json
from typing import Any, Callable

from dialeval.conversation.data import Conversation, check_record

SYSTEM = "You are a travel assistant. Use the tools for facts."
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "The forecast for a city.",
                                      "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "day": {"type": "string"}},
                                                     "required": ["city", "day"]}}},
    {"type": "function", "function": {"name": "convert_currency", "description": "Convert an amount between currencies.",
                                      "parameters": {"type": "object", "properties": {"amount": {"type": "number"}, "source": {"type": "string"},
                                                                                      "target": {"type": "string"}},
                                                     "required": ["amount", "source", "target"]}}},
]
# the user's turns, and the calls the model makes for each (none: it answers at once)
SCRIPT = [
    ("What's the weather in Paris tomorrow, and what is 100 EUR in USD?",
     [{"name": "get_weather", "arguments": {"city": "Paris", "day": "tomorrow"}},
      {"name": "convert_currency", "arguments": {"amount": 100, "source": "EUR", "target": "USD"}}]),
    ("Thanks!", []),  # the bot says nothing: an empty reply is a turn
    ("And in Rome on Friday?", [{"name": "get_weather", "arguments": {"city": "Rome", "day": "Friday"}}]),
]
REPLIES = {"Thanks!": ""}


def run_tool(name: str, arguments: dict[str, Any]) -> str:
    if name == "get_weather":
        return json.dumps({"city": arguments["city"], "day": arguments["day"], "forecast": "sunny, 21 C"})
    return json.dumps({"amount": round(arguments["amount"] * 1.08, 2), "currency": arguments["target"]})


def respond(body: dict[str, Any]) -> Any:
    """The model: the scripted calls for the newest user turn, then a reply that names the results."""
    messages = body["messages"]
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    text = messages[last_user]["content"]
    calls = dict(SCRIPT)[text]
    results = [m["content"] for m in messages[last_user:] if m["role"] == "tool"]
    if calls and not results:
        return "", "tool_calls", calls
    return REPLIES.get(text, "Here is what I found: " + "; ".join(results))


def drive_openai(client: Any, before_call: Callable[[int], Any] | None = None, **extra: Any) -> list[dict[str, Any]]:
    """The conversation through an OpenAI client; every message sent or received, in order."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for text, _ in SCRIPT:
        messages.append({"role": "user", "content": text})
        while True:
            reply = client.chat.completions.create(model="stub-model", messages=messages, tools=TOOLS, **extra).choices[0].message
            messages.append(reply.model_dump(exclude_none=True, include={"role", "content", "tool_calls"}))
            if not reply.tool_calls:
                break
            for call in reply.tool_calls:
                result = run_tool(call.function.name, json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return messages


def langchain_tools() -> dict[str, Any]:
    """The two tools as LangChain tools."""
    from langchain_core.tools import StructuredTool

    def get_weather(city: str, day: str) -> str:
        """The forecast for a city."""
        return run_tool("get_weather", {"city": city, "day": day})

    def convert_currency(amount: float, source: str, target: str) -> str:
        """Convert an amount between currencies."""
        return run_tool("convert_currency", {"amount": amount, "source": source, "target": target})

    return {f.__name__: StructuredTool.from_function(f) for f in (get_weather, convert_currency)}


def drive_langchain(model: Any, config: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation through a LangChain chat model with the tools bound; OpenAI messages."""
    from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage, convert_to_openai_messages

    tools = langchain_tools()
    bound = model.bind_tools(list(tools.values()))
    history: list[Any] = [SystemMessage(SYSTEM)]
    for text, _ in SCRIPT:
        history.append(HumanMessage(text))
        while True:
            reply = bound.invoke(history, config=config)
            history.append(reply)
            if not reply.tool_calls:
                break
            for call in reply.tool_calls:
                history.append(ToolMessage(tools[call["name"]].invoke(call["args"]), tool_call_id=call["id"]))
    return convert_to_openai_messages(history)


def drive_langgraph(model: Any, config: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation through a LangGraph ReAct agent (a graph of chain, model and tool
    runs), one invocation per user turn with the history so far; OpenAI messages."""
    from langchain_core.messages import HumanMessage, SystemMessage, convert_to_openai_messages
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    tools = list(langchain_tools().values())
    bound = model.bind_tools(tools)
    graph = StateGraph(MessagesState)
    graph.add_node("model", lambda state: {"messages": [bound.invoke([SystemMessage(SYSTEM), *state["messages"]])]})
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    agent = graph.compile()
    history: list[Any] = []
    for text, _ in SCRIPT:
        history = agent.invoke({"messages": [*history, HumanMessage(text)]}, config=config)["messages"]
    return convert_to_openai_messages([SystemMessage(SYSTEM), *history])


def sent(messages: list[dict[str, Any]], ident: str = "sent") -> Conversation:
    """What the client sent and received, read as a conversation with the tools it had."""
    return check_record("sent.jsonl", 0, {"id": ident, "messages": messages, "tools": TOOLS})


def shape(conv: Conversation) -> tuple:
    """Everything a conversation says: system prompt, every turn with its text, each tool call
    (name, arguments, result), and the tool names with their parameters."""
    turns = [(t.role, t.text, [(c.name, c.arguments, c.result) for c in t.tool_calls]) for t in conv.turns]
    tools = sorted((t["function"]["name"], sorted(t["function"]["parameters"]["properties"])) for t in conv.tools)
    return conv.system, turns, tools


class RunCollector:
    """A LangSmith API on 127.0.0.1 that keeps the runs a ``langsmith.Client`` sends (with
    ``auto_batch_tracing=False``: one POST to create a run, one to end it), merged by id as
    the service stores them."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.runs: dict[str, dict[str, Any]] = {}
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.startswith("/runs") and body:
                    run = json.loads(body)
                    collector.runs.setdefault(run["id"], {}).update({k: v for k, v in run.items() if v is not None})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            do_PATCH = do_POST

            def do_GET(self) -> None:
                self.do_POST()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def __enter__(self) -> RunCollector:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def any_value(value: Any) -> dict[str, Any]:
    """A Python value as OTLP/JSON's ``AnyValue``."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": [{"key": k, "value": any_value(v)} for k, v in value.items()]}}
    return {"stringValue": str(value)}


def logs_data(records: list[Any]) -> dict[str, Any]:
    """Finished log records (``InMemoryLogRecordExporter``) as the collector's file exporter
    writes them: OTLP/JSON with hex trace and span ids."""
    out = []
    for finished in records:
        entry = finished.log_record
        row: dict[str, Any] = {"observedTimeUnixNano": str(entry.observed_timestamp or 0),
                               "attributes": [{"key": k, "value": any_value(v)} for k, v in (entry.attributes or {}).items()]}
        if entry.event_name:
            row["eventName"] = entry.event_name
        if entry.body is not None:
            row["body"] = any_value(entry.body)
        if entry.trace_id:
            row |= {"traceId": f"{entry.trace_id:032x}", "spanId": f"{entry.span_id:016x}"}
        out.append(row)
    return {"resourceLogs": [{"scopeLogs": [{"logRecords": out}]}]}


def hex_ids(value: Any) -> Any:
    """OTLP/JSON from protobuf's mapping (base64 ids) with hex ids, as the collector writes it."""
    import base64

    if isinstance(value, dict):
        return {k: base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") and v else hex_ids(v) for k, v in value.items()}
    if isinstance(value, list):
        return [hex_ids(v) for v in value]
    return value
