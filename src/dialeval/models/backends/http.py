"""HTTP pieces the API backends share: time-outs, connection pools, TLS, 429 hooks, preflight GET."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable

from dialeval.models.backends.aio_transport import aiohttp_transport
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


@functools.lru_cache(maxsize=2)
def sdk_http(sdk: str = "openai") -> Any:
    """The HTTP library an installed SDK is built on (``httpx2`` in openai 3 and anthropic 2,
    else ``httpx``): a client of its own kind avoids the SDK's compatibility layer per request."""
    import importlib

    module = importlib.import_module(sdk)
    base = next(c for c in module.DefaultAsyncHttpxClient.__mro__ if c.__name__ == "AsyncClient")
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


TRANSPORT_VAR = "DIALEVAL_HTTP_TRANSPORT"
TRANSPORTS = ("aiohttp", "httpx")


def transport_name() -> str:
    """The HTTP transport API calls use: ``aiohttp`` (the SDKs' own optional transport; a
    request costs ~1 ms of CPU instead of ~2.4 ms with httpx's, measured in
    ``benchmarks/workers.py``) unless ``$DIALEVAL_HTTP_TRANSPORT=httpx`` asks for the SDKs' default."""
    import os

    name = os.environ.get(TRANSPORT_VAR, "").strip().lower() or "aiohttp"
    if name not in TRANSPORTS:
        raise PreflightError(f"${TRANSPORT_VAR}={name!r}: use one of {', '.join(TRANSPORTS)}")
    return name


def async_http(
    settings: ModelSettings, limit: AdaptiveLimit | None = None, sdk: str = "openai", wrap: Callable[[Any], Any] | None = None
) -> Any:
    """A pool of this model's own (an SDK's shared pool breaks once a second event loop uses it).

    The client is the HTTP library's (hooks, time-outs, limits, TLS context, proxies from
    the environment); what it sends directly goes through :func:`direct_transport`, inside
    ``wrap(transport)`` when given (the head start's first attempts)."""
    http = sdk_http(sdk)
    return client_class(http, sdk)(
        timeout=_sdk_timeout(http, settings.timeout),
        limits=http.Limits(max_connections=256, max_keepalive_connections=64),
        event_hooks=limit_hooks(limit),
        verify=ssl_context(http.__name__),
        wrap=wrap,
    )


@functools.lru_cache(maxsize=4)
def client_class(http: Any, sdk: str) -> Any:
    """``http.AsyncClient`` whose own transport is :func:`direct_transport`'s. Set this way
    (as the SDKs set their aiohttp client), not with ``transport=``, which would also turn
    off the proxies from the environment: those keep the library's proxy transports."""

    class Client(http.AsyncClient):  # type: ignore[misc,name-defined]
        def __init__(self, *args: Any, wrap: Callable[[Any], Any] | None = None, **kwargs: Any) -> None:
            self._wrap = wrap  # read by _init_transport, which the library's __init__ calls
            super().__init__(*args, **kwargs)

        def _init_transport(self, verify: Any = True, *args: Any, limits: Any = None, transport: Any = None, **kwargs: Any) -> Any:
            if transport is None and limits is not None:
                transport = direct_transport(sdk, http, verify, limits)
            if limits is not None:
                kwargs["limits"] = limits
            transport = super()._init_transport(verify, *args, transport=transport, **kwargs)
            return self._wrap(transport) if self._wrap is not None else transport

    return Client


def direct_transport(sdk: str, http: Any, verify: Any, limits: Any) -> Any | None:
    """aiohttp underneath (:mod:`dialeval.models.backends.aio_transport`; the default, see
    :func:`transport_name`), else the library's own pool with a cheap idle check;
    ``None`` leaves the library's default transport."""
    if transport_name() == "aiohttp":
        transport = aiohttp_transport(sdk, http, verify, limits)
        if transport is not None:
            return transport
    return cheap_probe_transport(http, limits, verify)


def cheap_probe_transport(http: Any, limits: Any, verify: Any) -> Any:
    """The HTTP library's own transport, whose pool checks idle connections cheaply.

    Before each request and after each answer the pool asks every idle keep-alive
    connection whether the server closed it; the default stream answers by building
    anyio's whole table of socket attributes each time (~30 us; 56 times a request at 64
    in flight, a quarter of a run's CPU). :func:`probed_stream` asks the socket once and
    then only polls it: the same answer. ``None`` (the library's default transport) when
    the transport's pool is not the plain one this knows."""
    import importlib

    transport = http.AsyncHTTPTransport(verify=verify, limits=limits)
    pool = getattr(transport, "_pool", None)
    core = importlib.import_module(type(pool).__module__.split(".")[0])
    if type(pool) is not getattr(core, "AsyncConnectionPool", None) or not hasattr(core, "AnyIOBackend"):
        return None
    transport._pool = core.AsyncConnectionPool(
        ssl_context=verify,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=_probing_backend(core.__name__)(),
    )
    return transport


@functools.lru_cache(maxsize=2)
def _probing_backend(core_name: str) -> Any:
    """An anyio network backend (of ``httpcore`` or ``httpcore2``) whose streams are :func:`probed_stream`s."""
    import importlib

    core = importlib.import_module(core_name)
    stream_type = probed_stream(core_name)

    class ProbingBackend(core.AsyncNetworkBackend):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            self._inner = core.AnyIOBackend()

        async def connect_tcp(self, *args: Any, **kwargs: Any) -> Any:
            return stream_type(await self._inner.connect_tcp(*args, **kwargs))

        async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Any:
            return stream_type(await self._inner.connect_unix_socket(*args, **kwargs))

        async def sleep(self, seconds: float) -> None:
            await self._inner.sleep(seconds)

    return ProbingBackend


@functools.lru_cache(maxsize=2)
def probed_stream(core_name: str) -> Any:
    """A network stream type wrapping the library's own, with a cheap ``is_readable``."""
    import importlib

    core = importlib.import_module(core_name)

    class ProbedStream(core.AsyncNetworkStream):  # type: ignore[name-defined,misc]
        def __init__(self, inner: Any) -> None:
            self._inner = inner
            self._socket: Any = _UNKNOWN

        async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            return await self._inner.read(max_bytes, timeout)

        async def write(self, buffer: bytes, timeout: float | None = None) -> None:
            await self._inner.write(buffer, timeout)

        async def aclose(self) -> None:
            await self._inner.aclose()

        async def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
            return ProbedStream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

        def get_extra_info(self, info: str) -> Any:
            if info != "is_readable":
                return self._inner.get_extra_info(info)
            if self._socket is _UNKNOWN:
                self._socket = self._inner.get_extra_info("socket")
            return socket_readable(self._socket)

    return ProbedStream


_UNKNOWN = object()


def socket_readable(sock: Any) -> bool:
    """Whether a read would return at once: data, or the ``b""`` of a connection the server
    closed (a socket without a descriptor counts as closed), as httpcore decides it."""
    import select

    fd = None if sock is None else sock.fileno()
    if fd is None or fd < 0:
        return True
    poll = getattr(select, "poll", None)
    if poll is None:  # Windows
        readable, _, _ = select.select([fd], [], [], 0)
        return bool(readable)
    poller = poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


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
    a server without the route passes. Sent with ``httpx2`` where installed (the SDKs'
    library, a fifth of ``httpx``'s import time: this GET is on the way to the first request)."""
    import importlib.util

    from dialeval.secrets import scrub

    name = "httpx2" if importlib.util.find_spec("httpx2") is not None else "httpx"
    http = importlib.import_module(name)
    verify = ssl_context(name) if url.startswith("https:") else False  # plain HTTP: no CA bundle to load
    try:
        response = http.get(url, headers=headers, timeout=min(CONNECT_TIMEOUT, timeout), verify=verify)
    except http.HTTPError as err:
        raise PreflightError(scrub(f"cannot reach {where}{proxy_note(url)}: {type(err).__name__}: {err}")) from None
    if response.status_code in (401, 403):
        raise PreflightError(scrub(f"{where} refused the key (HTTP {response.status_code}): {response.text[:200]}"))


def proxy_note(url: str) -> str:
    """`` through the proxy $HTTPS_PROXY (http://...)`` when a proxy variable of the
    environment applies to ``url`` (the HTTP library then connects to the proxy, and a
    proxy that is down looks like a server that is down), else ``""``."""
    import os
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
