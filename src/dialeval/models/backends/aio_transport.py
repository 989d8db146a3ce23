"""aiohttp underneath the SDKs' httpx client: about 1 ms of CPU a request instead of 2.4.

The transport is the one each SDK ships for its documented ``DefaultAioHttpClient`` (a
vendored copy of httpx-aiohttp), under the same ``httpx2.AsyncClient``: hooks, time-outs,
limits, TLS context and proxies from the environment (proxied requests go through httpx's
own transport) are the client's. What differs is how a failed connection is named: the
OpenAI SDK's copy maps every aiohttp connection error to a connect *time-out*, so a server
that refuses the connection would be reported as "timed out". :class:`Transport` gives
errors the httpx names httpx itself would raise (the Anthropic SDK's copy already does
this for a refused connection).
"""

from __future__ import annotations

import functools
import importlib
from typing import Any


def aiohttp_transport(sdk: str, http: Any, verify: Any, limits: Any) -> Any | None:
    """The SDK's aiohttp transport with httpx's error names, or ``None`` when aiohttp or the
    SDK's vendored transport is missing (the caller then keeps httpx's own)."""
    cls = transport_class(sdk, http)
    return None if cls is None else cls(verify=verify, limits=limits, trust_env=True)


@functools.lru_cache(maxsize=4)
def transport_class(sdk: str, http: Any) -> Any | None:
    """A subclass of ``<sdk>._vendor.httpx_aiohttp.AiohttpTransport`` (built on the HTTP
    library ``http``) that re-names errors, also those raised while reading the body."""
    try:
        import aiohttp

        vendored = importlib.import_module(f"{sdk}._vendor.httpx_aiohttp")
    except ImportError:
        return None
    base = getattr(vendored, "AiohttpTransport", None)
    if base is None:
        return None

    class RenamingStream(http.AsyncByteStream):  # type: ignore[misc,name-defined]
        def __init__(self, inner: Any, request: Any) -> None:
            self._inner, self._request = inner, request

        async def __aiter__(self) -> Any:
            try:
                async for chunk in self._inner:
                    yield chunk
            except http.TransportError as err:
                raise _renamed(http, aiohttp, err, self._request) from err.__cause__

        async def aclose(self) -> None:
            await self._inner.aclose()

    class Transport(base):  # type: ignore[misc,valid-type]
        async def handle_async_request(self, request: Any) -> Any:
            try:
                response = await super().handle_async_request(request)
            except http.TransportError as err:
                raise _renamed(http, aiohttp, err, request) from err.__cause__
            response.stream = RenamingStream(response.stream, request)
            return response

    return Transport


def _renamed(http: Any, aiohttp: Any, err: Exception, request: Any) -> Exception:
    """``err`` as httpx would have raised it for the aiohttp error behind it; ``err`` itself
    when it is right already (time-outs, proxy errors) or nothing is known."""
    better = httpx_error_type(http, aiohttp, err.__cause__)
    if better is None or isinstance(err, better):
        return err
    return better(str(err.__cause__) or str(err), request=request)  # type: ignore[no-any-return]


def httpx_error_type(http: Any, aiohttp: Any, cause: BaseException | None) -> Any | None:
    """The httpx error type for an aiohttp error: a refused or unresolvable connection is a
    ``ConnectError``, a connection the server dropped a ``RemoteProtocolError``, a reset
    while reading a ``ReadError``; ``None`` for time-outs and proxy errors (kept as mapped)."""
    if cause is None or isinstance(cause, (TimeoutError, aiohttp.ServerTimeoutError)):
        return None
    if isinstance(cause, (aiohttp.ClientProxyConnectionError, aiohttp.ClientHttpProxyError)):
        return None
    if isinstance(cause, aiohttp.ClientConnectorError):
        return http.ConnectError
    if isinstance(cause, aiohttp.ServerDisconnectedError):
        return http.RemoteProtocolError
    if isinstance(cause, (aiohttp.ClientOSError, aiohttp.ClientPayloadError)):
        return http.ReadError
    return None
