"""Requests in flight find the server's limit by themselves (AIMD on HTTP 429)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from dialeval.models.concurrency import AdaptiveLimit, retry_after_seconds
from dialeval.config import ModelSettings, RunConfig
from dialeval.models.client import ModelClient
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub

GRADE = '{"rationale": "agrees", "score": 4}'


def write_items(folder: Path, n: int) -> Path:
    path = folder / "items.jsonl"
    rows = [{"id": f"q{i}", "question": f"Question {i}?", "reference": "r", "answer": "a"} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


async def test_a_rate_limit_halves_the_limit_once_per_window():
    limit = AdaptiveLimit(16, minimum=2, maximum=32)
    async with limit:
        limit.throttled()
        limit.throttled()  # same request window: already accounted for
    assert limit.current == 8
    async with limit:  # admitted under the new limit: a further 429 halves again
        limit.throttled()
    assert limit.current == 4
    for _ in range(4):
        limit.succeeded()
    assert limit.current == 5  # one more after a full window of successes


async def test_before_any_rate_limit_each_success_allows_one_more():
    limit = AdaptiveLimit(16, maximum=64)
    for _ in range(16):
        limit.succeeded()
    assert limit.current == 32  # a window of successes doubles it (slow start)
    async with limit:
        limit.throttled()
    assert limit.current == 16
    for _ in range(16):
        limit.succeeded()
    assert limit.current == 17  # after the first 429: one more per window


async def test_the_limit_never_leaves_its_bounds():
    limit = AdaptiveLimit(4, minimum=2, maximum=5)
    for _ in range(10):
        async with limit:
            limit.throttled()
    assert limit.current == 2
    for _ in range(100):
        limit.succeeded()
    assert limit.current == 5


async def test_requests_in_flight_never_exceed_the_limit():
    limit = AdaptiveLimit(3, adaptive=False)
    peak = 0

    async def request() -> None:
        nonlocal peak
        async with limit:
            peak = max(peak, limit.in_flight)
            await asyncio.sleep(0.01)

    await asyncio.gather(*(request() for _ in range(20)))
    assert peak == 3


def test_retry_after_headers_are_read_in_seconds():
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    assert retry_after_seconds({}) is None


@pytest.mark.parametrize("spec", ["openai-compatible:rate-limited"])
def test_adaptive_limit_meets_a_rate_limited_server_with_fewer_429s(tmp_path, spec):
    """A server that takes 4 requests at once: a fixed limit of 32 keeps hitting it; the
    adaptive limit backs off, and both finish every item (the SDK retries the 429s).

    The server refuses one request at most 5 times and the client retries up to 10, so
    every item succeeds however slowly a busy machine runs the requests."""
    data = write_items(tmp_path, 60)

    def run_with(adaptive: bool, run_id: str) -> tuple[int, int]:
        with OpenAIStub(respond=lambda body: GRADE, latency=0.1, max_in_flight=4, patience=5) as server:
            settings = ModelSettings(
                spec=spec, base_url=server.base_url, max_concurrency=32, adaptive_concurrency=adaptive, max_retries=10
            )
            config = RunConfig(
                model=settings, output_dir=str(tmp_path / "runs"), run_id=run_id, cache_path=None, concurrency=32
            )
            result = run("answers", data, config, progress=False)
            assert result.metrics["run"]["failed"] == 0
            assert result.metrics["systems"]["system"]["scored"] == 60
            return server.statuses.count(429), server.statuses.count(200)

    fixed_429, fixed_ok = run_with(False, "fixed")
    adaptive_429, adaptive_ok = run_with(True, "adaptive")
    assert fixed_ok == adaptive_ok == 60
    assert 0 < adaptive_429 < fixed_429 <= 60 * 5


def run_answers(tmp_path: Path, server: OpenAIStub, items: int, limit: int, cache: Path | None, name: str) -> dict:
    """One ``answers`` run of ``items`` items with at most ``limit`` requests in flight."""
    settings = ModelSettings(spec=f"openai-compatible:{name}", base_url=server.base_url, max_concurrency=limit)
    config = RunConfig(
        model=settings, output_dir=str(tmp_path / "runs"), run_id=name, concurrency=limit,
        cache_path=str(cache) if cache else None,
    )
    return run("answers", write_items(tmp_path, items), config, progress=False).metrics


def test_the_first_burst_sends_max_concurrency_requests_at_once(tmp_path):
    """No warm-up rounds: a new client sends its whole limit before the first answer
    (the stub holds every answer until 20 requests are in flight)."""
    with OpenAIStub(respond=lambda body: GRADE, hold_until=20) as server:
        metrics = run_answers(tmp_path, server, 20, 20, None, "burst")
    assert metrics["run"]["failed"] == 0
    assert server.peak_in_flight == 20


def test_a_429_halves_the_limit_and_the_next_run_starts_there(tmp_path):
    """The first request is refused: the limit goes 16 -> 8 (7 successes are less than a
    window, so it does not grow back), is written beside the cache, and a new process's
    client starts at 8 instead of 16."""
    cache = tmp_path / "cache" / "responses.sqlite"
    with OpenAIStub(respond=lambda body: GRADE, failures=[429]) as server:
        metrics = run_answers(tmp_path, server, 7, 16, cache, "limited")
        memory = json.loads((cache.parent / "limits.json").read_text())
        assert metrics["run"]["failed"] == 0
        assert server.statuses.count(429) == 1
        assert {key: entry["limit"] for key, entry in memory.items()} == {f"{server.base_url} limited": 8}

        settings = ModelSettings(spec="openai-compatible:limited", base_url=server.base_url, max_concurrency=16)
        fresh = ModelClient(settings)  # what the next process builds
        assert fresh.limit.current == 16
        fresh.use_limit_memory(str(cache))
        assert fresh.limit.current == 8


def test_a_corrupt_limit_memory_is_ignored(tmp_path):
    cache = tmp_path / "cache" / "responses.sqlite"
    cache.parent.mkdir()
    (cache.parent / "limits.json").write_text("{not json")
    with OpenAIStub(respond=lambda body: GRADE, hold_until=12) as server:
        metrics = run_answers(tmp_path, server, 12, 12, cache, "corrupt")
    assert metrics["run"]["failed"] == 0
    assert server.peak_in_flight == 12  # started at the configured maximum


async def test_a_learned_limit_grows_one_per_window_and_reports_each_change():
    limit = AdaptiveLimit(64, maximum=64)
    seen: list[int] = []
    limit.on_change = seen.append
    assert limit.start_from(10)
    assert limit.current == 10
    for _ in range(10):
        limit.succeeded()
    async with limit:
        limit.throttled()
    assert seen == [11, 5]
    assert not limit.start_from(40)  # this process has learned for itself since


async def test_a_refused_request_retries_only_under_the_halved_limit():
    """Four requests went out at limit 4 and all are refused: their retries wait for places
    under the new limit of 2 instead of going out four wide again."""
    limit = AdaptiveLimit(4, maximum=4)
    all_sent = asyncio.Barrier(4)
    release = asyncio.Event()
    retried: list[int] = []  # requests in flight as each retry goes out

    async def request() -> None:
        async with limit:
            await all_sent.wait()
            limit.throttled()
            await limit.readmit()
            retried.append(limit.in_flight)
            await release.wait()

    tasks = [asyncio.create_task(request()) for _ in range(4)]
    for _ in range(50):  # let every task run as far as it can
        await asyncio.sleep(0)
    assert (limit.current, limit.in_flight, retried) == (2, 2, [2, 2])
    release.set()
    await asyncio.gather(*tasks)
    assert (limit.in_flight, len(retried)) == (0, 4)
