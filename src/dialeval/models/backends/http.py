"""HTTP pieces the API backends share: time-outs, connection pools, TLS, 429 hooks, preflight GET."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from dialeval.models.concurrency import AdaptiveLimit, retry_after_seconds
from dialeval.models.usage import count_response

if TYPE_CHECKING:
    from dialeval.config import ModelSettings

CONNECT_TIMEOUT = 10.0


class PreflightError(ValueError):
    """A configured model cannot work: no key, no URL, no server, key refused, no file."""


def http_timeout(settings: ModelSettings) -> Any:
    """``timeout`` for reading an answer, but at most 10 s to connect: a dead server
    shows up at once instead of after the whole answer budget."""
    import httpx

    return httpx.Timeout(settings.timeout, connect=min(CONNECT_TIMEOUT, settings.timeout))


@functools.lru_cache(maxsize=1)
def sdk_http() -> Any:
    """The HTTP library the installed OpenAI SDK is built on (``httpx2`` in openai 3, else
    ``httpx``): a client of its own kind avoids the SDK's compatibility layer per request."""
    import importlib

    import openai

    base = next(c for c in openai.DefaultAsyncHttpxClient.__mro__ if c.__name__ == "AsyncClient")
    return importlib.import_module(base.__module__.split(".")[0])


@functools.lru_cache(maxsize=4)
def ssl_context(library: str) -> Any:
    """One TLS context per process (as the HTTP library builds it by default, honouring
    ``SSL_CERT_FILE``/``SSL_CERT_DIR``): loading the CA bundle takes 50-100 ms, and each
    event loop (each ``evaluate()`` call) builds new clients."""
    import importlib

    return importlib.import_module(library).create_ssl_context()


def _sdk_timeout(http: Any, seconds: float) -> Any:
    return http.Timeout(seconds, connect=min(CONNECT_TIMEOUT, seconds))


def async_http(settings: ModelSettings, limit: AdaptiveLimit | None = None) -> Any:
    """A pool of this model's own (an SDK's shared pool breaks once a second event loop uses it)."""
    http = sdk_http()
    return http.AsyncClient(
        timeout=_sdk_timeout(http, settings.timeout),
        limits=http.Limits(max_connections=256, max_keepalive_connections=64),
        event_hooks=limit_hooks(limit),
        verify=ssl_context(http.__name__),
    )


@functools.lru_cache(maxsize=16)
def sync_http(timeout: float) -> Any:
    """The sync client our async calls never use: one per process, not one per loop."""
    http = sdk_http()
    return http.Client(timeout=_sdk_timeout(http, timeout), verify=ssl_context(http.__name__))


def limit_hooks(limit: AdaptiveLimit | None) -> dict[str, list[Any]]:
    """httpx hooks that count every response for the call's record and tell ``limit`` about
    it, retries included (the SDKs retry 429s themselves, so the limit would otherwise never hear of them); a refused
    request's retry waits for a place under the halved limit."""
    async def on_response(response: Any) -> None:
        count_response(response.status_code)  # the call's retries and 429s (models/usage.py)
        if limit is None:
            return
        if response.status_code in (429, 529):  # 529: Anthropic's "overloaded"
            limit.throttled(retry_after_seconds(response.headers), reason=f"HTTP {response.status_code}")
            await limit.readmit()
        elif response.status_code < 400:
            limit.succeeded()

    return {"response": [on_response]}


def check_models_route(url: str, headers: dict[str, str], where: str, timeout: float) -> None:
    """One ``GET .../models`` (free of tokens): it must connect and must not refuse the key;
    a server without the route passes."""
    import httpx

    from dialeval.secrets import scrub

    try:
        response = httpx.get(url, headers=headers, timeout=min(CONNECT_TIMEOUT, timeout), verify=ssl_context("httpx"))
    except httpx.HTTPError as err:
        raise PreflightError(scrub(f"cannot reach {where}: {type(err).__name__}: {err}")) from None
    if response.status_code in (401, 403):
        raise PreflightError(scrub(f"{where} refused the key (HTTP {response.status_code}): {response.text[:200]}"))
