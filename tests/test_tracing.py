"""Any LangChain tracer sees every model call a run makes, whatever the environment says.

Each model call is the chat model's ``ainvoke`` inside the compiled graph, so a tracer
collecting runs (``collect_runs()``), a callback handler given to ``evaluate()`` and
LangSmith (configured by its environment variables) each see one chat-model run per
request the test server answered, in one process or in worker processes (``processes: 2``); ``LANGCHAIN_TRACING_V2=false`` changes nothing about the
path (the same requests, the same runs seen).
"""

from __future__ import annotations

import email.parser
import email.policy
import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers.context import collect_runs

import dialeval
from dialeval.testing.openai_server import OpenAIStub

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
GRADE = '{"rationale": "agrees", "score": 4}'


class ChatModelCalls(BaseCallbackHandler):
    """A user's callback handler: the prompts every chat model call starts with."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.parents: set[Any] = set()  # the runs the calls were made in
        self.nodes: set[Any] = set()  # the graph's node runs

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        if kwargs.get("parent_run_id") is not None:
            self.nodes.add(kwargs["run_id"])

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.prompts.append(messages[0][-1].content)
        self.parents.add(kwargs.get("parent_run_id"))


def _llm_runs(runs: list[Any]) -> list[Any]:
    found = []
    for run in runs:
        found += ([run] if run.run_type == "llm" else []) + _llm_runs(run.child_runs)
    return found


def _evaluate(server: OpenAIStub, tmp_path: Path, name: str, **kwargs: Any) -> Any:
    return dialeval.evaluate("answers", DATA, model="openai-compatible:judge", base_url=server.base_url,
                             cache_path=None, output_dir=str(tmp_path / name), **kwargs)


@pytest.mark.parametrize("processes", [1, 2], ids=["one process", "--processes 2"])
@pytest.mark.parametrize("tracing_v2", [None, "false"], ids=["unset", "LANGCHAIN_TRACING_V2=false"])
def test_collect_runs_and_a_users_callback_see_every_model_call(tmp_path, monkeypatch, tracing_v2, processes):
    for name in ("LANGCHAIN_TRACING_V2", "LANGSMITH_TRACING", "LANGCHAIN_TRACING"):
        monkeypatch.delenv(name, raising=False)
    if tracing_v2 is not None:
        monkeypatch.setenv("LANGCHAIN_TRACING_V2", tracing_v2)
    handler = ChatModelCalls()
    with OpenAIStub(respond=lambda body: GRADE) as server:
        with collect_runs() as collected:
            result = _evaluate(server, tmp_path, "run", callbacks=[handler], processes=processes)
        sent = [body["messages"][-1]["content"] for body in server.completions]
    assert result.complete and len(sent) == 3
    assert sorted(handler.prompts) == sorted(sent)  # one callback per request, with what it asked
    llm = _llm_runs(collected.traced_runs)
    assert len(llm) == 3 and all(run.error is None for run in llm)
    traced = sorted(json.dumps(run.inputs, default=str) for run in llm)
    assert all(json.dumps(text)[1:-1] in seen for text, seen in zip(sorted(sent), traced))  # the prompt each asked
    assert [run.name for run in collected.traced_runs].count("answers") == 3  # each item's compiled graph ran
    assert handler.parents <= handler.nodes  # each call inside a node of the graph


class _LangSmithRecorder:
    """A stand-in for the LangSmith API on 127.0.0.1: it keeps every run posted to it."""

    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.startswith("/runs/multipart"):
                    recorder._keep(self.headers.get("Content-Type", ""), body)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            do_GET = do_POST = do_PATCH = _answer

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _keep(self, content_type: str, body: bytes) -> None:
        message = email.parser.BytesParser(policy=email.policy.default).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + body
        )
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition") or ""
            if name.startswith("post.") and name.count(".") == 1:
                self.runs.append(json.loads(part.get_content() if part.get_content_maintype() == "text" else part.get_payload(decode=True)))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# evaluates in a fresh process: LangSmith reads (and keeps) its environment variables once
LANGSMITH_RUN = """
import sys
import dialeval
from langchain_core.tracers.langchain import wait_for_all_tracers
result = dialeval.evaluate("answers", sys.argv[1], model="openai-compatible:judge", base_url=sys.argv[2],
                           cache_path=None, output_dir=sys.argv[3], processes=int(sys.argv[4]))
wait_for_all_tracers()
assert result.complete, result.summary
"""


@pytest.mark.parametrize("processes", [1, 2], ids=["one process", "--processes 2"])
def test_langsmith_configured_by_its_environment_variables_gets_every_model_call(tmp_path, processes):
    recorder = _LangSmithRecorder()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGCHAIN_", "LANGSMITH_"))}
    env.update(LANGSMITH_TRACING="true", LANGSMITH_ENDPOINT=recorder.url, LANGSMITH_API_KEY="lsv2-test-key",
               LANGSMITH_PROJECT="dialeval-test", PYTHONPATH=str(ROOT / "src"))
    try:
        with OpenAIStub(respond=lambda body: GRADE) as server:
            done = subprocess.run([sys.executable, "-c", LANGSMITH_RUN, str(DATA), server.base_url, str(tmp_path / "runs"), str(processes)],
                                  env=env, capture_output=True, text=True, timeout=300)
            requests = len(server.completions)
    finally:
        recorder.close()
    assert done.returncode == 0, done.stderr[-2000:]
    llm = [run for run in recorder.runs if run.get("run_type") == "llm"]
    assert requests == 3 and len(llm) == 3
    assert [run.get("name") for run in recorder.runs if run.get("parent_run_id") is None] == ["answers"] * 3
    nodes = {run["id"] for run in recorder.runs if run.get("parent_run_id") is not None and run.get("run_type") == "chain"}
    assert {run["parent_run_id"] for run in llm} <= nodes  # each call traced inside a node of its item's graph
