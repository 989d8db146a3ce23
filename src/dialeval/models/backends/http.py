"""HTTP pieces the API backends share: time-outs, the connection pool, 429 hooks, preflight GET."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
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
    import openai

    return openai.Timeout(settings.timeout, connect=min(CONNECT_TIMEOUT, settings.timeout))


def async_http(limit: AdaptiveLimit | None = None) -> Any:
    """A pool of this model's own for ``ChatOpenAI(http_async_client=...)`` (langchain-openai's
    shared pool breaks once a second event loop uses it), with :func:`limit_hooks`.

    The OpenAI SDK's documented ``DefaultAioHttpClient`` (its ``aiohttp`` extra): the SDK's
    own defaults (time-outs, limits, redirects, proxies from the environment) over aiohttp,
    which costs about 2 ms less CPU per request than httpx's own transport
    (``docs/performance.md``), with the process's one :func:`tls_context`. It names a refused
    connection a time-out; the recorded error carries the cause
    (:func:`dialeval.models.backends.base.error_text`)."""
    import openai

    return openai.DefaultAioHttpClient(event_hooks=limit_hooks(limit), verify=tls_context())


def sync_http() -> Any:
    """One ``ChatOpenAI(http_client=...)`` per :func:`tls_context`: runs call models
    asynchronously, but each chat model also builds a synchronous client, and by default a
    new one (with its own TLS context) per URL. The SDK's ``DefaultHttpxClient``, its defaults."""
    return _sync_http_for(_certificate_settings())


def tls_context() -> Any:
    """The TLS settings the SDKs' clients build by default (the system's certificate
    authorities, or ``$SSL_CERT_FILE`` / ``$SSL_CERT_DIR``), built once per value of those
    variables and shared: reading the certificate store costs 20-35 ms of CPU, and every
    chat model and every preflight GET built its own (21 s of the test suite's CPU)."""
    return _tls_context_for(_certificate_settings())


def _certificate_settings() -> tuple[str | None, str | None]:
    """What the default TLS context reads from the environment: a change made after the
    first chat model (a notebook setting ``SSL_CERT_FILE``) gets a context of its own."""
    return os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")


@functools.cache
def _tls_context_for(settings: tuple[str | None, str | None]) -> Any:
    return _http_library().create_ssl_context()


@functools.cache
def _sync_http_for(settings: tuple[str | None, str | None]) -> Any:
    import openai

    return openai.DefaultHttpxClient(verify=_tls_context_for(settings))


def _http_library() -> Any:
    """``httpx2`` where installed (the SDKs' own library, a fifth of ``httpx``'s import
    time), else ``httpx``."""
    return importlib.import_module("httpx2" if importlib.util.find_spec("httpx2") is not None else "httpx")


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
    a server without the route passes. Sent with :func:`_http_library` (this GET is on the
    way to the first request)."""
    from dialeval.secrets import scrub

    http = _http_library()
    try:
        response = http.get(url, headers=headers, timeout=min(CONNECT_TIMEOUT, timeout), verify=tls_context())
    except http.HTTPError as err:
        raise PreflightError(scrub(f"cannot reach {where}{proxy_note(url)}: {type(err).__name__}: {err}")) from None
    if response.status_code in (401, 403):
        raise PreflightError(scrub(f"{where} refused the key (HTTP {response.status_code}): {response.text[:200]}"))


def proxy_note(url: str) -> str:
    """`` through the proxy $HTTPS_PROXY (http://...)`` when a proxy variable of the
    environment applies to ``url`` (the HTTP library then connects to the proxy, and a
    proxy that is down looks like a server that is down), else ``""``."""
    import urllib.request
    from urllib.parse import urlsplit

    from dialeval.models.usage import public_url

    scheme = urlsplit(url).scheme
    proxy = urllib.request.getproxies_environment().get(scheme)
    bypass = getattr(urllib.request, "proxy_bypass_environment")  # undeclared in typeshed, documented in the module
    if not proxy or bypass(urlsplit(url).hostname or ""):
        return ""
    names = [n for n in (f"{scheme.upper()}_PROXY", f"{scheme}_proxy", "ALL_PROXY", "all_proxy") if os.environ.get(n)]
    return f" through the proxy {public_url(proxy)}" + (f" (${names[0]})" if names else "")
