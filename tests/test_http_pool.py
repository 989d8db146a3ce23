"""The API models' connection pool: the library's own, with a cheaper check of idle connections."""

from __future__ import annotations

import asyncio
import socket

from dialeval.config import ModelSettings
from dialeval.models.backends.http import async_http, probed_stream, sdk_http, socket_readable
from dialeval.testing.openai_server import OpenAIStub


class _Inner:
    """A network stream that only knows its socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.asked = 0

    def get_extra_info(self, info: str) -> object:
        self.asked += 1
        return self.sock if info == "socket" else None


def _core_name() -> str:
    return "httpcore2" if sdk_http().__name__ == "httpx2" else "httpcore"


def test_an_idle_connection_reads_as_closed_once_the_server_closes_it():
    import importlib

    library_check = importlib.import_module(_core_name() + "._utils").is_socket_readable
    ours, server = socket.socketpair()
    inner = _Inner(ours)
    stream = probed_stream(_core_name())(inner)
    try:
        assert stream.get_extra_info("is_readable") is False is library_check(ours)  # idle: reusable
        server.close()
        assert stream.get_extra_info("is_readable") is True is library_check(ours)  # closed by the server
        assert inner.asked == 1  # the socket was looked up once
    finally:
        ours.close()
    assert socket_readable(ours) is True  # no descriptor any more: treated as closed, as httpcore does


def test_the_pool_sends_and_reuses_its_connection(monkeypatch):
    monkeypatch.setenv("DIALEVAL_HTTP_TRANSPORT", "httpx")  # the httpx pool this file is about
    with OpenAIStub(respond=lambda body: "Four.") as server:

        async def two_gets() -> tuple[list[int], int]:
            client = async_http(ModelSettings(spec="openai-compatible:judge", base_url=server.base_url))
            try:
                codes = [(await client.get(server.base_url + "/models")).status_code for _ in range(2)]
                pool = client._transport._pool
                assert type(pool._network_backend).__name__ == "ProbingBackend"  # ours, not the library's default
                return codes, len(pool.connections)
            finally:
                await client.aclose()

        codes, connections = asyncio.run(two_gets())
    assert codes == [200, 200] and connections == 1
