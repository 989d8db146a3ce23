"""The HTTP client under the OpenAI chat model: the SDK's own (retries, error names,
proxies from the environment), with the request limit's hooks."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import httpx2
import pytest

from dialeval.config import ModelSettings, RunConfig
from dialeval.models.backends.http import PreflightError
from dialeval.run.folder import read_results
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
GRADE = '{"rationale": "agrees", "score": 4}'


def _answers_run(tmp_path: Path, name: str) -> tuple[list[dict], list[dict], dict]:
    """One ``answers`` run against a fresh stub: the bodies it received, the rows, the metrics."""
    with OpenAIStub(respond=lambda body: GRADE, failures=[429, 500]) as server:
        config = RunConfig(
            model=ModelSettings(spec="openai-compatible:judge", base_url=server.base_url),
            output_dir=str(tmp_path / name), cache_path=None, concurrency=1,
        )
        result = run("answers", DATA, config, progress=False)
        bodies, statuses = list(server.requests), list(server.statuses)
    assert statuses[:2] == [429, 500] and result.complete  # retried by the SDK
    rows = read_results(result.run_dir)
    metrics = json.loads((result.run_dir / "metrics.json").read_text())
    return bodies, rows, metrics


def test_refused_attempts_are_retried_and_counted_in_the_record(tmp_path):
    bodies, rows, metrics = _answers_run(tmp_path, "run")
    assert bodies[0] == bodies[1] == bodies[2]  # the same request, sent again
    assert sum(call["retries"] for row in rows for call in row["usage"]) == 2
    assert sum(call["rate_limited"] for row in rows for call in row["usage"]) == 1
    assert metrics["systems"]["demo-bot"]["mean_score"] == 4.0


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_refused_connection_is_a_connection_error_that_names_the_refusal():
    """So the run's message says the server could not be reached, never that it was slow:
    the aiohttp transport names a refused connection "Request timed out."; the backend says
    what the SDK says of it over httpx, and the recorded text carries the cause."""
    import openai
    from langchain_core.messages import HumanMessage

    from dialeval.models.backends import backend_for
    from dialeval.models.backends.base import CONNECTION, classify_error, error_text

    settings = ModelSettings(spec="openai-compatible:judge", base_url=f"http://127.0.0.1:{_closed_port()}/v1", max_retries=0)
    backend = backend_for(settings.parsed, settings)

    async def ask() -> BaseException:
        model = backend.build()
        try:
            await backend.send(model, [HumanMessage("hi")], None, None)
        except Exception as err:  # noqa: BLE001  (the error is what this test looks at)
            return err
        finally:
            await backend.close(model)
        raise AssertionError("a closed port answered")

    err = asyncio.run(ask())
    assert type(err) is openai.APIConnectionError  # not APITimeoutError
    assert classify_error(err) == CONNECTION
    said = error_text(err)
    assert said.startswith("APIConnectionError: Connection error. (caused by ConnectionRefusedError: ")


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


def test_a_proxy_from_the_environment_carries_the_requests(tmp_path, monkeypatch):
    """Proxies set in the environment are honoured as the SDK's HTTP library honours them."""
    proxy = _ForwardProxy()
    try:
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


def test_every_chat_model_shares_one_verifying_tls_context_and_one_sync_client():
    """Reading the certificate store costs 20-35 ms of CPU; each chat model built two, and
    each preflight GET one. They share the process's one, which still verifies."""
    import ssl

    from dialeval.models.backends.http import sync_http, tls_context
    from dialeval.models.client import build_chat_model

    first = build_chat_model(ModelSettings(spec="openai-compatible:a", base_url="http://127.0.0.1:9/v1"))
    second = build_chat_model(ModelSettings(spec="openai-compatible:b", base_url="http://127.0.0.1:8/v1"))
    assert first.http_client is second.http_client is sync_http()
    assert first.http_async_client is not second.http_async_client  # a pool per model, as before
    context = tls_context()
    assert isinstance(context, ssl.SSLContext) and context is tls_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats() == httpx2.create_ssl_context().cert_store_stats()  # the library's default

    async def close() -> None:
        for model in (first, second):
            await model.http_async_client.aclose()

    asyncio.run(close())


def test_certificates_named_after_the_first_model_get_a_context_of_their_own(tmp_path, monkeypatch):
    """A notebook that sets ``$SSL_CERT_FILE`` after its first run: the next chat model
    verifies with that file, not with the store the process read first."""
    import certifi

    from dialeval.models.backends.http import sync_http, tls_context
    from dialeval.models.client import build_chat_model

    before = tls_context()
    bundle = Path(certifi.where()).read_text()
    one_authority = tmp_path / "one-ca.pem"
    one_authority.write_text(bundle[: bundle.index("-----END CERTIFICATE-----") + len("-----END CERTIFICATE-----")] + "\n")
    monkeypatch.setenv("SSL_CERT_FILE", str(one_authority))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)

    context = tls_context()
    assert context is not before and context is tls_context()
    assert context.cert_store_stats()["x509_ca"] == 1  # the file named, and nothing else
    model = build_chat_model(ModelSettings(spec="openai-compatible:a", base_url="http://127.0.0.1:9/v1"))
    assert model.http_client is sync_http()
    asyncio.run(model.http_async_client.aclose())
    monkeypatch.undo()
    assert tls_context() is before  # the first settings are still served by their context
