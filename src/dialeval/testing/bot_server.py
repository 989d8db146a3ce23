"""A scripted chatbot behind an HTTP JSON endpoint on 127.0.0.1, for simulation tests.

It answers every ``POST`` with ``respond(body)`` as JSON (by default ``{"reply": ...}``
from ``script``, one reply per request), can fail chosen requests (``fail_on``: their
numbers from 1, answered HTTP 500) and keeps every request body and its headers in
order, so a test can read what the simulation sent the bot. ``respond`` may return
``(status, payload)`` to answer with another status.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


class _Server(ThreadingHTTPServer):
    daemon_threads = True


class BotStub:
    """``with BotStub(script=["Hi!", "Done."]) as bot:`` then point ``{"url": bot.url}`` at it."""

    def __init__(self, respond: Callable[[dict[str, Any]], Any] | None = None, *, script: list[Any] | None = None,
                 fail_on: set[int] | None = None, echo: bool = False) -> None:
        self.script = list(script or [])
        self.respond = respond or self._scripted
        self.fail_on = set(fail_on or ())
        self.echo = echo  # a failure's body quotes the request's path and Authorization header, as careless servers do
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []  # of each request, names lower-cased (Idempotency-Key, Authorization)
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _scripted(self, body: dict[str, Any]) -> Any:
        index = min(len(self.requests), len(self.script)) - 1
        return {"reply": self.script[index] if self.script else "OK."}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/chat"

    def __enter__(self) -> BotStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                with stub._lock:
                    stub.requests.append(body)
                    stub.headers.append({k.lower(): v for k, v in self.headers.items()})
                    number = len(stub.requests)
                    scripted = stub.respond(body) if stub.respond == stub._scripted else None
                if number in stub.fail_on:
                    said = f": {self.path} authorization={self.headers.get('Authorization')}" if stub.echo else ""
                    status, payload = 500, {"error": f"scripted failure{said}"}
                else:  # a respond() of the test's runs outside the lock: one that waits holds up no other request
                    answer = scripted if stub.respond == stub._scripted else stub.respond(body)
                    status, payload = answer if isinstance(answer, tuple) else (200, answer)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
