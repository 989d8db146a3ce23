"""Importers on what the real tracers write: a real OpenAI client (or a LangChain chat model
with tools) holds one agent conversation with the test server on 127.0.0.1, each tracer
records it with its own exporter (in memory, or a LangSmith API on 127.0.0.1), and the
import gives back every message, tool call (name and arguments), tool result and tool
definition that was sent: nothing lost, nothing doubled."""

from __future__ import annotations

import json

import pytest

from dialeval.cli import main
from dialeval.data.importers import ImportLog, import_file
from dialeval.conversation.data import load_conversations
from dialeval.testing.openai_server import OpenAIStub
from tests.tracing_helpers import RunCollector, drive_langchain, drive_langgraph, drive_openai, hex_ids, logs_data, respond, sent, shape

pytestmark = pytest.mark.timeout(120)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def otel(monkeypatch):
    """Runs the conversation with the OpenAI client instrumented by opentelemetry-instrumentation-openai-v2
    in a content mode; returns (messages sent, OTLP/JSON of its spans, of its log records)."""
    from google.protobuf.json_format import MessageToDict
    from openai import OpenAI
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    # the logs signal of OpenTelemetry's Python SDK is published under this name until it is stable
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    def capture(mode: str, one_trace: bool = False):
        monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", mode)
        spans, logs = InMemorySpanExporter(), InMemoryLogRecordExporter()
        tracer_provider, logger_provider = TracerProvider(), LoggerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
        logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
        instrumentor = OpenAIInstrumentor()
        instrumentor.instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
        try:
            with OpenAIStub(respond=respond) as server:
                client = OpenAI(base_url=server.base_url, api_key="test-key")
                if one_trace:  # the calls under one agent span
                    with tracer_provider.get_tracer("agent").start_as_current_span("agent"):
                        messages = drive_openai(client)
                else:
                    messages = drive_openai(client)
        finally:
            instrumentor.uninstrument()
        return messages, MessageToDict(encode_spans(spans.get_finished_spans())), logs_data(logs.get_finished_logs())

    return capture


def test_otel_spans_with_base64_and_hex_ids(otel, tmp_path, capsys):
    messages, spans, _ = otel("span_only")
    expected = shape(sent(messages))
    base64_file = write_jsonl(tmp_path / "spans-b64.jsonl", [spans])  # protobuf's JSON mapping of the SDK's export
    hex_file = write_jsonl(tmp_path / "spans-hex.jsonl", [hex_ids(spans)])  # the collector's file exporter
    for path in (base64_file, hex_file):
        records, log = import_file("otel", path)
        assert len(records) == 1  # five calls, each its own trace: one conversation by the time-and-prefix rule
        assert "grouped 5 calls into 1 conversations" in log.notes[0] and "time-and-prefix rule" in log.notes[0]
        conv = load_conversations(write_jsonl(tmp_path / "out.jsonl", records))[0]
        system, turns, tools = shape(conv)
        assert (system, turns) == expected[:2]
        assert tools == []  # the instrumentation does not record tool definitions (gen_ai.tool.definitions)
    assert expected[1][3] == ("assistant", "", [])  # the empty reply kept as a turn
    assert main(["import", "otel", str(hex_file), "-o", str(tmp_path / "chats.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "grouped 5 calls into 1 conversations" in out and "1 conversations, 6 turns, 3 tool calls, 1 empty replies" in out


@pytest.mark.parametrize("mode", ["event_only", "span_and_event"])
def test_otel_event_mode_log_records(otel, tmp_path, mode):
    messages, spans, logs = otel(mode)
    on_spans = any(a["key"] == "gen_ai.output.messages" for rs in spans["resourceSpans"] for ss in rs["scopeSpans"]
                   for s in ss["spans"] for a in s["attributes"])
    assert on_spans == (mode == "span_and_event")  # event_only: the messages are only in the log records
    path = write_jsonl(tmp_path / "telemetry.jsonl", [hex_ids(spans), logs])
    records, log = import_file("otel", path)
    assert log.notes[0].startswith("grouped 5 calls into 1 conversations")  # a call on its span and its log record: once
    conv = load_conversations(write_jsonl(tmp_path / "out.jsonl", records))[0]
    assert shape(conv)[:2] == shape(sent(messages))[:2]
    spans_of = {s["spanId"] for rs in hex_ids(spans)["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]}
    assert set(conv.metadata["source"]["turn_ids"].values()) <= spans_of  # the log records name their spans


def test_otel_calls_under_one_trace(otel, tmp_path):
    messages, spans, _ = otel("span_only", one_trace=True)
    records, log = import_file("otel", write_jsonl(tmp_path / "spans.jsonl", [spans]))
    assert log.notes == ["grouped 5 calls into 1 conversations: 1 by trace and parent span"]
    conv = load_conversations(write_jsonl(tmp_path / "out.jsonl", records))[0]
    assert shape(conv)[:2] == shape(sent(messages))[:2]


def _langsmith_client(collector):
    from langsmith import Client

    return Client(api_url=collector.url, api_key="test-key", auto_batch_tracing=False)


def test_langsmith_wrap_openai_and_traceable(tmp_path):
    from langsmith import traceable, tracing_context
    from langsmith.wrappers import wrap_openai
    from openai import OpenAI

    with RunCollector() as collector, OpenAIStub(respond=respond) as server:
        client = _langsmith_client(collector)
        with tracing_context(enabled=True, client=client, project_name="agents"):
            agent = traceable(name="agent")(drive_openai)
            messages = agent(wrap_openai(OpenAI(base_url=server.base_url, api_key="test-key")),
                             langsmith_extra={"metadata": {"thread_id": "trip"}})
        client.flush()
    runs = list(collector.runs.values())
    assert sum(r["run_type"] == "llm" for r in runs) == 5 and any(r["run_type"] == "chain" for r in runs)
    records, log = import_file("langsmith", write_jsonl(tmp_path / "runs.jsonl", runs))
    assert [r["id"] for r in records] == ["trip"] and log.warnings == []
    conv = load_conversations(write_jsonl(tmp_path / "out.jsonl", records))[0]
    assert shape(conv) == shape(sent(messages))  # tools too: wrap_openai logs them in inputs.tools


def _langchain_traced(drive) -> tuple[list, list]:
    """(messages sent, runs LangSmith received) of the conversation driven through ``drive``
    with a LangChain chat model traced by LangChainTracer, on thread "trip"."""
    from langchain_core.tracers import LangChainTracer
    from langchain_openai import ChatOpenAI

    with RunCollector() as collector, OpenAIStub(respond=respond) as server:
        tracer = LangChainTracer(client=_langsmith_client(collector), project_name="agents")
        model = ChatOpenAI(model="stub-model", base_url=server.base_url, api_key="test-key")
        messages = drive(model, {"callbacks": [tracer], "metadata": {"thread_id": "trip"}})
        tracer.wait_for_futures()
    return messages, list(collector.runs.values())


def test_langsmith_langchain_tracer_threads_and_tools(tmp_path):
    messages, runs = _langchain_traced(drive_langchain)
    records, _ = import_file("langsmith", write_jsonl(tmp_path / "runs.jsonl", runs))
    conv = load_conversations(write_jsonl(tmp_path / "out.jsonl", records))[0]
    assert shape(conv) == shape(sent(messages))  # LangChain's own serialized messages; tools from invocation_params


def test_langsmith_langgraph_agent_runs_are_not_doubled(tmp_path):
    """A LangGraph agent logs chain runs that hold the messages too; only its model calls are read."""
    messages, runs = _langchain_traced(drive_langgraph)
    assert sum(r["run_type"] == "chain" and "messages" in (r.get("inputs") or {}) for r in runs) > 5
    records, log = import_file("langsmith", write_jsonl(tmp_path / "runs.jsonl", runs))
    assert log.warnings == [] and len(records[0]["messages"]) == len(messages)
    conv = load_conversations(write_jsonl(tmp_path / "out.jsonl", records))[0]
    assert shape(conv) == shape(sent(messages))


@pytest.fixture(scope="module")
def langfuse_spans():
    """A Langfuse client exporting its spans to memory (nothing leaves 127.0.0.1)."""
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from langfuse import Langfuse

    from opentelemetry.sdk.trace import TracerProvider

    exporter = InMemorySpanExporter()
    with RunCollector() as api:  # its own tracer provider: the process's global one is left unset
        client = Langfuse(public_key="pk-lf-test", secret_key="sk-lf-test", base_url=api.url, span_exporter=exporter,
                          tracer_provider=TracerProvider())

        def take() -> dict:
            from google.protobuf.json_format import MessageToDict
            from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

            client.flush()
            spans = MessageToDict(encode_spans(exporter.get_finished_spans()))
            exporter.clear()
            return spans

        yield take
        client.shutdown()


DROP_IN = """
import json, sys
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from langfuse import Langfuse
from langfuse.openai import OpenAI
from dialeval.testing.openai_server import OpenAIStub
from tests.tracing_helpers import RunCollector, drive_openai, respond

exporter = InMemorySpanExporter()
with RunCollector() as api, OpenAIStub(respond=respond) as server:
    client = Langfuse(public_key="pk-lf-test", secret_key="sk-lf-test", base_url=api.url, span_exporter=exporter,
                      tracer_provider=TracerProvider())
    messages = drive_openai(OpenAI(base_url=server.base_url, api_key="test-key"), metadata={"langfuse_session_id": "trip"})
    client.flush()
json.dump({"messages": messages, "spans": MessageToDict(encode_spans(exporter.get_finished_spans()))}, open(sys.argv[1], "w"))
client.shutdown()
"""


def test_langfuse_openai_drop_in(tmp_path):
    """In a process of its own: importing ``langfuse.openai`` patches the openai package for good."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", DROP_IN, str(tmp_path / "capture.json")], env=env, capture_output=True, text=True, timeout=100)
    assert done.returncode == 0, done.stderr[-2000:]
    capture = json.loads((tmp_path / "capture.json").read_text())
    messages = capture["messages"]
    records, log = import_file("langfuse", write_jsonl(tmp_path / "spans.jsonl", [capture["spans"]]))
    assert [r["id"] for r in records] == ["trip"] and log.notes == ["grouped 5 calls into 1 conversations: 1 by conversation id"]
    conv = load_conversations(write_jsonl(tmp_path / "out.jsonl", records))[0]
    assert shape(conv) == shape(sent(messages))
    source = conv.metadata["source"]
    assert source["session_id"] == "trip" and set(source["turn_ids"].values()) <= set(source["observation_traces"])


def test_langfuse_langchain_handler(langfuse_spans, tmp_path):
    from langchain_openai import ChatOpenAI

    from langfuse.langchain import CallbackHandler

    with OpenAIStub(respond=respond) as server:
        model = ChatOpenAI(model="stub-model", base_url=server.base_url, api_key="test-key")
        messages = drive_langchain(model, {"callbacks": [CallbackHandler()]})
    spans = langfuse_spans()
    logged = json.dumps(spans)
    assert '\\"args\\"' in logged and '\\"role\\": \\"tool\\", \\"content\\": {' in logged  # the handler's own shapes
    records, log = import_file("langfuse", write_jsonl(tmp_path / "spans.jsonl", [spans]))
    assert len(records) == 1 and "time-and-prefix rule" in log.notes[0]  # no session: separate traces joined
    conv = load_conversations(write_jsonl(tmp_path / "out.jsonl", records))[0]
    assert shape(conv) == shape(sent(messages))  # arguments kept, definitions as tools, 13 messages not 25
    assert len(records[0]["messages"]) == len(messages)


@pytest.mark.parametrize("session", ["trip", None])
def test_langfuse_langchain_handler_on_a_langgraph_agent(langfuse_spans, tmp_path, session):
    from langchain_openai import ChatOpenAI

    from langfuse.langchain import CallbackHandler

    with OpenAIStub(respond=respond) as server:
        model = ChatOpenAI(model="stub-model", base_url=server.base_url, api_key="test-key")
        metadata = {"langfuse_session_id": session} if session else {}
        messages = drive_langgraph(model, {"callbacks": [CallbackHandler()], "metadata": metadata})
    records, log = import_file("langfuse", write_jsonl(tmp_path / "spans.jsonl", [langfuse_spans()]))
    assert len(records) == 1 and log.warnings == []
    # without a session: each model step under its own node span, each user turn its own trace, joined by their histories
    assert records[0]["id"] == "trip" if session else "time-and-prefix rule" in log.notes[0]
    assert len(records[0]["messages"]) == len(messages)  # the agent's chain spans hold the messages too: not read
    conv = load_conversations(write_jsonl(tmp_path / "out.jsonl", records))[0]
    assert shape(conv) == shape(sent(messages))
