"""A run's first requests leave while the OpenAI SDK is still importing: the SDK's first
attempt, sent early.

``import openai`` costs about 0.7-1 s of CPU, most of a run's start-up; the first
requests need only their body (``models/openai_body.py``) and an HTTP client. While the
SDK imports in a thread, a request the light path is about to send goes out through the
SDK's own HTTP library (``httpx2``) with the key, the JSON content type, the run's
time-outs and TLS context (not the SDK's ``User-Agent`` and ``x-stainless-*`` headers,
which servers do not need). What comes back, whatever it is (an answer, a 401, a 429, a
500, a refused connection, a time-out), is kept, and once the SDK is there the same
request goes through the SDK as always, whose client is handed the kept outcome as its
first attempt's (:class:`FirstAttempts`): the SDK's own rules then decide, as for any
attempt, whether to accept it, retry it (counting it, so no extra request is sent) or
raise, and the client's hooks (the request limit, the call's retry counts) see it once.
So a run records and scores exactly what it records without a head start.

It is used only where the request it sends is certainly the SDK's: an explicit
``base_url``, no proxy variables, and no ``OPENAI_*`` variable besides the key (the SDK
reads organization, project and more from them).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import sys
import threading
import weakref
from concurrent.futures import Future
from typing import Any


_LIBRARY = "httpx2"  # what the SDK (openai 3) sends with
_sdk_import: Future[None] | None = None
_sdk_lock = threading.Lock()


def sdk_pending() -> bool:
    """True while the SDK is not (fully) imported and its import thread has not finished."""
    if _sdk_import is not None:
        return not _sdk_import.done()
    return not _sdk_imported()


def _sdk_imported() -> bool:
    module = sys.modules.get("openai")
    return module is not None and hasattr(module, "AsyncOpenAI")


def start_sdk_import() -> None:
    """Import the SDK in a daemon thread (once per process), so the loop keeps sending and reading."""
    global _sdk_import
    with _sdk_lock:
        if _sdk_import is not None:
            return
        future: Future[None] = Future()
        _sdk_import = future

    def load() -> None:
        try:
            import openai  # noqa: F401
        except BaseException as err:  # handed to whoever waits
            future.set_exception(err)
        else:
            future.set_result(None)

    threading.Thread(target=load, name="dialeval-sdk-import", daemon=True).start()


async def sdk_ready() -> None:
    """Wait until the SDK is importable at no cost (its thread finished), without blocking the loop."""
    future = _sdk_import
    if future is not None and not future.done():
        await asyncio.wrap_future(future)


def allowed(base_url: str | None, key_env: str | None) -> bool:
    """Whether a request sent here is certainly the one the SDK would send: an explicit
    plain URL, the SDK's HTTP library installed, and no variable the SDK or the HTTP library
    would read to change the URL, the headers or the route (proxies)."""
    if not base_url or "?" in base_url or "#" in base_url or importlib.util.find_spec(_LIBRARY) is None:
        return False
    own = {"OPENAI_API_KEY", key_env}
    for name, value in os.environ.items():
        if value and ((name.startswith("OPENAI_") and name not in own) or "proxy" in name.lower()):
            return False
    return True


class HeadStart:
    """The light HTTP client of one model (one per event loop), for requests sent before the SDK is there."""

    def __init__(self, base_url: str, key: str | None, timeout: float):
        self.url = (base_url if base_url.endswith("/") else base_url + "/") + "chat/completions"  # as the SDK joins them
        self.headers = {"Accept": "application/json"}
        if key:
            self.headers["Authorization"] = f"Bearer {key}"
        self.timeout = timeout
        self._clients: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        self.kept: dict[str, list[Any]] = {}  # body -> outcomes not yet handed to the SDK client

    def _client(self) -> Any:
        import importlib

        from dialeval.models.backends.http import CONNECT_TIMEOUT, ssl_context  # here: that package imports this module

        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            http = importlib.import_module(_LIBRARY)
            # the SDK's TLS context for https; plain HTTP has nothing to verify, and a
            # context without the CA bundle costs nothing to build (loading it takes 50-100 ms)
            verify = ssl_context(_LIBRARY) if self.url.startswith("https:") else False
            client = http.AsyncClient(
                timeout=http.Timeout(self.timeout, connect=min(CONNECT_TIMEOUT, self.timeout)),
                limits=http.Limits(max_connections=256, max_keepalive_connections=64),  # the SDK client's pool
                verify=verify,
            )  # no hooks: the SDK client's hear of the outcome when it is handed over
            self._clients[loop] = client
        return client

    async def close(self) -> None:
        """Close this event loop's client (the end of a run); outcomes never handed over
        (a cancelled run's) are dropped."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()
        self.kept.clear()

    async def send(self, body: dict[str, Any]) -> None:
        """Send ``body`` now and keep what comes back for the SDK client's first attempt at it."""
        outcome: Any
        try:
            response = await self._client().post(self.url, json=body, headers=self.headers)
            outcome = (response.status_code, response.headers.multi_items(), response.content)
        except Exception as err:  # the HTTP library's errors (refused, time-out, protocol): the SDK's to judge
            if type(err).__module__.split(".")[0] != _LIBRARY:
                raise
            outcome = err
        self.kept.setdefault(body_key(body), []).append(outcome)

    def take(self, content: bytes) -> Any:
        """The kept outcome of a request whose body is ``content``, once; ``None`` if there is none."""
        if not self.kept:
            return None
        try:
            key = body_key(json.loads(content))
        except ValueError:
            return None
        outcomes = self.kept.get(key)
        if not outcomes:
            return None
        outcome = outcomes.pop(0)
        if not outcomes:
            del self.kept[key]
        return outcome


def body_key(body: Any) -> str:
    """One text per request body, however its JSON was spelled."""
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


_UNSENT_HEADERS = {"content-encoding", "content-length", "transfer-encoding"}  # the kept content is decoded


def first_attempts(head_start: HeadStart, http: Any) -> Any:
    """A wrapper for the SDK client's transport (the HTTP library ``http``) that answers a
    request the head start already sent with what came back, once, instead of sending it."""

    class FirstAttempts(http.AsyncBaseTransport):  # type: ignore[misc,name-defined]
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        async def handle_async_request(self, request: Any) -> Any:
            outcome = head_start.take(request.content) if head_start.kept else None
            if outcome is None:
                return await self.inner.handle_async_request(request)
            if isinstance(outcome, Exception):  # as this library would raise it
                raise getattr(http, type(outcome).__name__, http.TransportError)(str(outcome), request=request) from outcome
            status, headers, content = outcome
            kept = [(k, v) for k, v in headers if k.lower() not in _UNSENT_HEADERS]
            return http.Response(status, headers=kept, content=content, request=request)

        async def aclose(self) -> None:
            await self.inner.aclose()

    return FirstAttempts
