"""The HTTP transport under the SDK clients: aiohttp by default (a request costs less than
half the CPU of httpx's), httpx on request; either way the same requests, the same
records and the same error names."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp
import httpx2
import pytest

from dialeval.config import ModelSettings, RunConfig
from dialeval.models.backends.aio_transport import httpx_error_type
from dialeval.models.backends.http import PreflightError, async_http
from dialeval.run.folder import read_results
from dialeval.run.runner import run
from dialeval.testing.openai_server import OpenAIStub

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
GRADE = '{"rationale": "agrees", "score": 4}'


def _transport_of(settings: ModelSettings, sdk: str = "openai") -> str:
    async def build() -> str:
        client = async_http(settings, sdk=sdk)
        try:
            return type(client._transport).__module__
        finally:
            await client.aclose()

    return asyncio.run(build())


def test_api_clients_use_aiohttp_unless_httpx_is_asked_for(monkeypatch):
    settings = ModelSettings(spec="openai-compatible:judge", base_url="http://127.0.0.1:9/v1")
    monkeypatch.delenv("DIALEVAL_HTTP_TRANSPORT", raising=False)
    assert _transport_of(settings) == "dialeval.models.backends.aio_transport"
    assert _transport_of(ModelSettings(spec="anthropic:claude-haiku-4-5"), sdk="anthropic") == "dialeval.models.backends.aio_transport"
    monkeypatch.setenv("DIALEVAL_HTTP_TRANSPORT", "httpx")
    assert _transport_of(settings).startswith("httpx")
    monkeypatch.setenv("DIALEVAL_HTTP_TRANSPORT", "curl")
    with pytest.raises(PreflightError, match=r"\$DIALEVAL_HTTP_TRANSPORT='curl': use one of aiohttp, httpx"):
        _transport_of(settings)


def _answers_run(tmp_path: Path, name: str) -> tuple[list[dict], list[dict], dict]:
    """One ``answers`` run against a fresh stub: the bodies it received, the rows, the metrics."""
    with OpenAIStub(respond=lambda body: GRADE, failures=[429, 500]) as server:
        config = RunConfig(
            model=ModelSettings(spec="openai-compatible:judge", base_url=server.base_url),
            output_dir=str(tmp_path / name), cache_path=None, concurrency=1,
        )
        result = run("answers", DATA, config, progress=False)
        bodies, statuses = list(server.requests), list(server.statuses)
    assert statuses[:2] == [429, 500] and result.complete  # retried by the SDK on both transports
    rows = json.loads(json.dumps(read_results(result.run_dir)).replace(server.base_url, "<stub>"))  # its port differs
    metrics = json.loads((result.run_dir / "metrics.json").read_text())
    return bodies, rows, metrics


def _timeless(value):
    """``value`` without wall-clock fields (seconds, latencies, timestamps)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k not in ("seconds", "latency_s", "started", "finished", "wall_s")}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def test_both_transports_send_the_same_requests_and_record_the_same_run(tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_HTTP_TRANSPORT", "aiohttp")
    with_aiohttp = _answers_run(tmp_path, "aiohttp")
    monkeypatch.setenv("DIALEVAL_HTTP_TRANSPORT", "httpx")
    with_httpx = _answers_run(tmp_path, "httpx")
    assert with_aiohttp[0] == with_httpx[0]  # the same bodies, retries included
    assert _timeless(with_aiohttp[1]) == _timeless(with_httpx[1])
    assert _timeless(with_aiohttp[2]["systems"]) == _timeless(with_httpx[2]["systems"])
    assert with_aiohttp[2]["systems"]["demo-bot"]["mean_score"] == 4.0


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_a_refused_connection_is_a_connection_error_not_a_timeout(transport, monkeypatch):
    """The OpenAI SDK's aiohttp transport calls a refused connection a connect time-out;
    ours names it as httpx does, so the run's message says the server could not be reached."""
    import openai

    monkeypatch.setenv("DIALEVAL_HTTP_TRANSPORT", transport)
    settings = ModelSettings(spec="openai-compatible:judge", base_url=f"http://127.0.0.1:{_closed_port()}/v1", max_retries=0)

    async def ask() -> BaseException:
        client = openai.AsyncOpenAI(base_url=settings.base_url, api_key="none", http_client=async_http(settings), max_retries=0)
        try:
            await client.chat.completions.create(model="judge", messages=[{"role": "user", "content": "hi"}])
        except Exception as err:  # noqa: BLE001  (the error is what this test looks at)
            return err
        finally:
            await client.close()
        raise AssertionError("a closed port answered")

    err = asyncio.run(ask())
    assert type(err) is openai.APIConnectionError  # not APITimeoutError
    assert isinstance(err.__cause__, httpx2.ConnectError)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (aiohttp.ClientConnectorError(None, OSError(111, "Connection refused")), httpx2.ConnectError),  # type: ignore[arg-type]
        (aiohttp.ServerDisconnectedError(), httpx2.RemoteProtocolError),
        (aiohttp.ClientOSError(104, "Connection reset by peer"), httpx2.ReadError),
        (aiohttp.ClientPayloadError("truncated body"), httpx2.ReadError),
        (aiohttp.ServerTimeoutError("read timed out"), None),  # kept: a time-out stays a time-out
        (aiohttp.ConnectionTimeoutError("connect timed out"), None),
        (asyncio.TimeoutError(), None),
        (ValueError("something else"), None),
    ],
)
def test_aiohttp_errors_get_the_names_httpx_gives_them(error, expected):
    assert httpx_error_type(httpx2, aiohttp, error) is expected


def test_a_finished_run_leaves_no_open_session_behind(tmp_path):
    """aiohttp's sessions must be closed in their own event loop (else each run's session
    and its connections stay open for the life of the process: a notebook calling
    ``evaluate()`` repeatedly); a run closes them, and the next run (a new loop, as each
    ``evaluate()`` call makes, or the same one) opens new ones."""
    script = f"""
import asyncio, gc
import aiohttp
from dialeval.config import ModelSettings, RunConfig
from dialeval.run.runner import run_async
from dialeval.testing.openai_server import OpenAIStub

async def one(url, name):
    config = RunConfig(model=ModelSettings(spec="openai-compatible:judge", base_url=url),
                       output_dir={str(tmp_path)!r} + "/" + name, cache_path=None)
    result = await run_async("answers", {str(DATA)!r}, config, progress=False)
    assert result.complete, result.summary

async def two_in_one_loop(url):
    await one(url, "same-loop-1")
    await one(url, "same-loop-2")

with OpenAIStub(respond=lambda body: {GRADE!r}) as server:
    asyncio.run(one(server.base_url, "first"))
    asyncio.run(one(server.base_url, "second"))  # a new loop
    asyncio.run(two_in_one_loop(server.base_url))
    gc.collect()
print(sum(1 for o in gc.get_objects() if isinstance(o, aiohttp.ClientSession) and not o.closed), "open")
"""
    done = subprocess.run(
        [sys.executable, "-X", "dev", "-c", script], capture_output=True, text=True, timeout=120,
        env={**os.environ, "DIALEVAL_HTTP_TRANSPORT": "aiohttp"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0 open"
    assert "nclosed" not in done.stderr, done.stderr  # "Unclosed client session", "unclosed transport"


class _ForwardProxy:
    """A plain HTTP forward proxy on 127.0.0.1 that counts what passes through it."""

    def __init__(self) -> None:
        import http.server
        import threading
        import urllib.request

        seen = self.seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _forward(self) -> None:
                seen.append(self.path)  # a proxy is asked for the absolute URL
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "proxy-connection", "connection")}
                request = urllib.request.Request(self.path, data=body, headers=headers, method=self.command)
                with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=30) as answer:
                    payload = answer.read()
                    self.send_response(answer.status)
                    for k, v in answer.headers.items():
                        if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                            self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_a_proxy_from_the_environment_carries_the_requests(transport, tmp_path, monkeypatch):
    """Proxies set in the environment are honoured as httpx honours them (the proxied
    requests go through httpx's own proxy transport; the rest through ours)."""
    proxy = _ForwardProxy()
    try:
        monkeypatch.setenv("DIALEVAL_HTTP_TRANSPORT", transport)
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        with OpenAIStub(respond=lambda body: GRADE) as server:
            config = RunConfig(model=ModelSettings(spec="openai-compatible:judge", base_url=server.base_url),
                               output_dir=str(tmp_path), cache_path=None, preflight=False)
            result = run("answers", DATA, config, progress=False)
            answered = len(server.completions)
    finally:
        proxy.close()
    assert result.complete and answered == 3
    assert sum(path.endswith("/v1/chat/completions") for path in proxy.seen) == 3


def test_an_unknown_transport_stops_the_run_before_anything_is_written(tmp_path, monkeypatch):
    from dialeval.errors import ConfigError

    monkeypatch.setenv("DIALEVAL_HTTP_TRANSPORT", "curl")
    config = RunConfig(model=ModelSettings(spec="openai-compatible:judge", base_url="http://127.0.0.1:9/v1"),
                       output_dir=str(tmp_path / "runs"), cache_path=None, preflight=False)
    with pytest.raises(ConfigError, match=r"field 'model': \$DIALEVAL_HTTP_TRANSPORT='curl': use one of aiohttp, httpx"):
        run("answers", DATA, config, progress=False)
    assert not (tmp_path / "runs").exists()


def test_a_server_out_of_reach_through_a_proxy_names_the_proxy(monkeypatch):
    from dialeval.models.backends.http import check_models_route

    monkeypatch.setenv("HTTP_PROXY", f"http://user:secret@127.0.0.1:{_closed_port()}")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(PreflightError) as refused:
        check_models_route("http://127.0.0.1:9/v1/models", {}, "judge at http://127.0.0.1:9/v1", 5.0)
    message = str(refused.value)
    assert "cannot reach judge at http://127.0.0.1:9/v1 through the proxy http://127.0.0.1:" in message
    assert "($HTTP_PROXY)" in message and "secret" not in message
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with pytest.raises(PreflightError) as refused:
        check_models_route("http://127.0.0.1:9/v1/models", {}, "judge", 5.0)
    assert "proxy" not in str(refused.value)  # not used for this host
