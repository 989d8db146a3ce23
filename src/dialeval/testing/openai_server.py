"""A small OpenAI-compatible chat server on 127.0.0.1 for tests and benchmarks.

It answers ``POST /v1/chat/completions`` from a Python function, can wait a fixed
latency, can fail the first requests with chosen HTTP statuses (429, 500) to
exercise retries, can rate-limit (more than ``max_in_flight`` requests at once get 429, each request at
most ``patience`` times), counts the most requests it held at once (``peak_in_flight``) and can
hold its answers until that many have arrived (``hold_until``),
and can emulate the APIs' prompt caching (``prompt_cache=True``: usage reports cached
tokens). Every request body is kept, in arrival order. For fault tests it can
also never answer (``hang``), demand a key and answer 401 otherwise (``api_key``), and
echo the key it received in its error bodies (``echo_auth``), as some servers do.
OpenAI's files and batches endpoints and Anthropic's message batches are served too
(:mod:`dialeval.testing.batch_endpoints`), their lines kept apart from live requests.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import urlsplit

from dialeval.models.prompt_cache import PrefixCache, prompt_tokens
from dialeval.testing.batch_endpoints import BatchEndpoints

class Refusal(str):
    """An answer that declines: OpenAI's ``refusal`` field with no content, Anthropic's
    ``refusal`` stop reason with no content block (``respond`` returns ``Refusal("...")``)."""


# an answer: text, (text, finish_reason), or (text, finish_reason, tool input) for a tool call
# of the request's first tool; a chat completion also takes a list of calls {"name", "arguments"}
Respond = Callable[[dict[str, Any]], "str | tuple[str, str] | tuple[str, str, dict[str, Any]]"]


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the last user message of a request body."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "".join(part.get("text", "") for part in content if isinstance(part, dict))
            return content or ""
    return ""


def request_tokens(body: dict[str, Any]) -> tuple[list[int], list[int]]:
    """Token ids of a request's prompt, and the token offsets just after each block
    marked with Anthropic's ``cache_control`` (its cache breakpoints)."""
    tokens: list[int] = []
    breakpoints: list[int] = []

    def add(role: str, content: Any) -> None:
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        for block in blocks:
            if isinstance(block, dict):
                text = block.get("text") or json.dumps(block.get("image_url") or block.get("source") or "", sort_keys=True)
                tokens.extend(prompt_tokens([(role, text)]))
                if block.get("cache_control"):
                    breakpoints.append(len(tokens))

    if body.get("system"):
        add("system", body["system"])
    for message in body.get("messages", []):
        add(message.get("role", "user"), message.get("content"))
    return tokens, breakpoints


def prompt_of(body: dict[str, Any]) -> str:
    """All message text of a request body joined, for routing answers by prompt."""
    parts = [body["system"]] if isinstance(body.get("system"), str) else []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            parts.extend(p.get("text", "") for p in content if isinstance(p, dict))
        else:
            parts.append(content or "")
    return "\n".join(parts)


def _tool_calls(body: dict[str, Any], calls: Any, number: int) -> list[dict[str, Any]]:
    """A chat completion's ``tool_calls``: one call of the first tool with ``calls`` as its
    input, or each ``{"name", "arguments"}`` of a list (ids unique across the server's answers)."""
    if isinstance(calls, dict):
        first = (body.get("tools") or [{"function": {"name": "answer"}}])[0]
        calls = [{"name": (first.get("function") or first).get("name", "answer"), "arguments": calls}]
    return [{"id": f"call_{number}_{i}", "type": "function",
             "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}} for i, c in enumerate(calls)]


class _Server(ThreadingHTTPServer):
    # a class attribute, since listen() runs in the constructor: with the default backlog
    # of 5, a burst of concurrent connections overflows it and clients wait for a SYN
    # retransmission (1 s), which benchmarks would count as framework time
    request_queue_size = 256
    daemon_threads = True


class OpenAIStub:
    """``with OpenAIStub(respond=fn) as server:`` then point a model at ``server.base_url``."""

    def __init__(
        self,
        respond: Respond | None = None,
        *,
        latency: float = 0.0,
        failures: list[int] | None = None,
        max_in_flight: int | None = None,
        patience: int | None = None,
        prompt_cache: bool = False,
        port: int = 0,
        hang: bool = False,
        hang_models: bool = False,
        api_key: str | None = None,
        echo_auth: bool = False,
        hold_until: int | None = None,
        served_model: str | None = None,
        logprobs: Callable[[dict[str, Any], str], list[tuple[str, float]]] | None = None,
    ):
        self.respond = respond or (lambda body: '{"ok": true}')
        self.served_model = served_model  # the model name answers carry (default: the one asked for)
        self.logprobs = logprobs  # (body, answer) -> its tokens and their log-probabilities, sent when a request asks
        self.hang = hang  # chat requests are accepted and never answered
        self.hang_models = hang_models  # GET /models too
        self.api_key = api_key  # when set, other keys get 401
        self.echo_auth = echo_auth  # error bodies quote the key received
        self.gets: list[str] = []  # paths of GET requests (the preflight's /models)
        self._closing = threading.Event()
        self.latency = latency
        self.failures = list(failures or [])
        # a rate limit: requests beyond this many at once get 429 with a short Retry-After
        self.max_in_flight = max_in_flight
        self._in_flight = 0
        self.peak_in_flight = 0  # the most answered requests held at once
        # answers wait until this many requests are in flight (at most 30 s), so a test can
        # count a client's burst without depending on how fast a busy machine sends it
        self.hold_until = hold_until
        self._gathered = threading.Event()
        # a request (same body) refused this many times is served anyway: how often a client
        # retries is then bounded by a count, never by how fast a busy machine runs it
        self.patience = patience
        self._refusals: dict[str, int] = {}
        # emulate the APIs' prompt caching: OpenAI's automatic prefix cache, and Anthropic's
        # cache at the breakpoints a client marks; usage then reports cached tokens
        self.prompt_cache = PrefixCache() if prompt_cache else None
        self.requests: list[dict[str, Any]] = []
        self.statuses: list[int] = []
        self.request_headers: list[dict[str, str]] = []  # of each chat request, names lower-cased
        self.paths: list[str] = []  # of each chat request, query string included
        # OpenAI files + batches and Anthropic message batches; their lines never enter `requests`
        self.batch_api = BatchEndpoints(self)
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", port), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    @property
    def root_url(self) -> str:
        """The server root, for clients that add ``/v1`` themselves (Anthropic)."""
        return self.base_url[: -len("/v1")]

    @property
    def batches(self) -> list[Any]:
        """Every batch submitted, in order (see :class:`BatchEndpoints` for the controls)."""
        return self.batch_api.batches

    @property
    def batch_lines(self) -> list[dict[str, Any]]:
        """Bodies of the batch lines answered so far (never counted as live requests)."""
        return self.batch_api.lines

    @property
    def completions(self) -> list[dict[str, Any]]:
        """Bodies of requests that were answered with 200."""
        return [b for b, s in zip(self.requests, self.statuses) if s == 200]

    def __enter__(self) -> OpenAIStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()  # releases hanging handlers
        self._server.shutdown()
        self._server.server_close()

    def answer(self, body: dict[str, Any], messages_api: bool, number: int) -> dict[str, Any]:
        """The response body for one request (a live call or a batch line): ``respond``'s
        reply with usage counted, and cached tokens when prompt caching is emulated.
        ``messages_api`` picks Anthropic's Messages shape over a chat completion."""
        reply = self.respond(body)
        if not isinstance(reply, tuple):
            reply = (reply, "stop")
        text, finish = reply[0], reply[1]
        refused = isinstance(text, Refusal)
        tool_input = reply[2] if len(reply) > 2 else None  # answer with a tool call
        prompt_tokens = max(1, len(prompt_of(body)) // 4)
        completion_tokens = max(1, len(text) // 4)
        cached_tokens = cache_write = 0
        if self.prompt_cache is not None:
            tokens, breakpoints = request_tokens(body)
            prompt_tokens = len(tokens)
            if messages_api:  # Anthropic: only up to the last marked breakpoint
                marked = tokens[: breakpoints[-1]] if breakpoints else []
                cached_tokens = self.prompt_cache.lookup_and_add(marked)
                cache_write = len(marked) - cached_tokens if marked else 0
            else:
                cached_tokens = self.prompt_cache.lookup_and_add(tokens)
        if messages_api:
            content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text and not refused else []
            if tool_input is not None:
                name = (body.get("tools") or [{"name": "answer"}])[0]["name"]
                content.append({"type": "tool_use", "id": "toolu_stub", "name": name, "input": tool_input})
            return {
                "id": f"msg_{number}",
                "type": "message",
                "role": "assistant",
                "model": self.served_model or body.get("model", "stub"),
                "content": content,
                "stop_reason": "refusal" if refused else "max_tokens" if finish == "length" else ("tool_use" if tool_input is not None else "end_turn"),
                "stop_sequence": None,
                "usage": {
                    # Anthropic counts cache reads and writes apart from input_tokens
                    "input_tokens": prompt_tokens - cached_tokens - cache_write,
                    "output_tokens": completion_tokens,
                    "cache_read_input_tokens": cached_tokens,
                    "cache_creation_input_tokens": cache_write,
                },
            }
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": str(text)} if refused else {"role": "assistant", "content": text}
        if tool_input is not None:
            message["tool_calls"] = _tool_calls(body, tool_input, number)
        return {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.served_model or body.get("model", "stub"),
            "choices": [{
                "index": 0, "finish_reason": finish,
                "message": message,
                **({"logprobs": {"content": [{"token": t, "logprob": lp, "bytes": None, "top_logprobs": []}
                                             for t, lp in self.logprobs(body, text)]}}
                   if self.logprobs is not None and body.get("logprobs") and not refused else {}),
            }],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": cached_tokens},
            },
        }

    def _over_limit(self, body: dict[str, Any]) -> bool:
        """Whether a request is refused by the rate limit (called under the lock)."""
        if self.max_in_flight is None or self._in_flight < self.max_in_flight:
            return False
        if self.patience is None:
            return True
        key = json.dumps(body, sort_keys=True)
        refused = self._refusals.get(key, 0)
        if refused >= self.patience:
            return False
        self._refusals[key] = refused + 1
        return True

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once, no 40 ms stalls

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                try:
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a cancelled run): nobody is left to answer

            def _received_key(self) -> str:
                auth = self.headers.get("Authorization") or ""
                return auth.removeprefix("Bearer ").strip() or (self.headers.get("x-api-key") or "")

            def _refuse(self) -> bool:
                """401 when a key is demanded and another was sent."""
                if stub.api_key is None or self._received_key() == stub.api_key:
                    return False
                quoted = f": {self._received_key()}" if stub.echo_auth else ""
                self._send(401, {"error": {"message": f"Incorrect API key provided{quoted}", "type": "invalid_request_error"}})
                return True

            def do_GET(self) -> None:
                if stub.batch_api.handle(self, "GET"):
                    return
                with stub._lock:
                    stub.gets.append(self.path)
                if stub.hang_models:
                    stub._closing.wait()
                    return
                if self._refuse():
                    return
                if urlsplit(self.path).path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_DELETE(self) -> None:
                if not stub.batch_api.handle(self, "DELETE"):
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                if stub.batch_api.handle(self, "POST"):
                    return
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with stub._lock:
                    status = stub.failures.pop(0) if stub.failures else 200
                    if status == 200 and stub._over_limit(body):
                        status = 429
                    stub.requests.append(body)
                    stub.statuses.append(status)
                    stub.request_headers.append({k.lower(): v for k, v in self.headers.items()})
                    stub.paths.append(self.path)
                    if status == 200:
                        stub._in_flight += 1
                        stub.peak_in_flight = max(stub.peak_in_flight, stub._in_flight)
                        if stub.hold_until is not None and stub._in_flight >= stub.hold_until:
                            stub._gathered.set()
                try:
                    self._answer(status, body)
                finally:
                    if status == 200:
                        with stub._lock:
                            stub._in_flight -= 1

            def _answer(self, status: int, body: dict[str, Any]) -> None:
                if stub.hang:
                    stub._closing.wait()
                    return
                if self._refuse():
                    return
                if status != 200:
                    quoted = f" (key {self._received_key()})" if stub.echo_auth else ""
                    self._send(
                        status,
                        {"error": {"message": f"stub failure {status}{quoted}", "type": "stub", "code": status}},
                        {"retry-after-ms": "10", "retry-after": "0"},
                    )
                    return
                path = urlsplit(self.path).path.rstrip("/")  # a base_url's query string comes on every request
                if not (path.endswith("/chat/completions") or path.endswith("/messages")):
                    self._send(404, {"error": {"message": "only chat completions and messages"}})
                    return
                if stub.hold_until is not None:
                    stub._gathered.wait(timeout=30)
                if stub.latency:
                    time.sleep(stub.latency)
                self._send(200, stub.answer(body, path.endswith("/messages"), len(stub.requests)))

        return Handler
