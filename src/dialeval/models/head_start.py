"""A run's first requests leave while the OpenAI SDK is still importing.

``import openai`` costs about 0.7-1 s of CPU, most of a run's start-up; the first
requests need only their body (``models/openai_body.py``) and an HTTP client. While the
SDK imports in a thread, a request the light path is about to send goes out through
the SDK's own HTTP library (``httpx2``), with the SDK's auth and JSON headers, the
run's time-outs and TLS context, and the HTTP hooks the SDK's client has (so the
request limit and the call's retry counts hear of it as they would). Only a ``200``
whose body is a JSON object is kept, and it goes through the same answer path once the
SDK is there (the SDK's ``ChatCompletion`` fields filled in, ``models/openai_direct.py``);
anything else (an error status, no connection, a time-out, another body) is dropped and
the request is sent again through the SDK as always: its retries, error types and 429
handling unchanged. So a run records and scores exactly what it records without this.

It is used only where the request it sends is certainly the SDK's: an explicit
``base_url``, no proxy variables, and no ``OPENAI_*`` variable besides the key (the SDK
reads organization, project and more from them).
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
import threading
import weakref
from concurrent.futures import Future
from typing import Any

from dialeval.models.backends.http import CONNECT_TIMEOUT, limit_hooks, ssl_context
from dialeval.models.concurrency import AdaptiveLimit

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

    def _client(self, limit: AdaptiveLimit | None) -> Any:
        import importlib

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
                event_hooks=limit_hooks(limit),  # as the SDK's client: the limit and the call's counts hear of it
            )
            self._clients[loop] = client
        return client

    async def close(self) -> None:
        """Close this event loop's client (the end of a run)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    async def send(self, body: dict[str, Any], limit: AdaptiveLimit | None) -> dict[str, Any] | None:
        """The answer's JSON object when the server answered ``200`` with one, else ``None``
        (the caller then sends the request through the SDK)."""
        import json

        try:
            response = await self._client(limit).post(self.url, json=body, headers=self.headers)
            if response.status_code != 200:
                return None
            answer = json.loads(response.content)
        except (ValueError, OSError):
            return None
        except Exception as err:  # the HTTP library's own errors (time-outs, protocol errors)
            if type(err).__module__.split(".")[0] != _LIBRARY:
                raise
            return None
        return answer if isinstance(answer, dict) else None
