"""Items begin one per pass of the event loop: the first item's request is on its way while
later items are still being prepared, so answers come back spread out and each is read
while later ones travel (begun all at once, every answer waited for the last request)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from dialeval.run.items import ItemJob, ItemRunner, Turnstile


@dataclass
class Item:
    id: str


def _runner_log(count: int, concurrency: int) -> list[str]:
    """What each item did, in order: ``prepare`` (its first step) and ``send`` (one pass later,
    as a request leaves once its connection is ready)."""
    log: list[str] = []

    async def evaluate(bench: Any, graph: Any, item: Item, context: Any, options: Any, on_call: Any) -> dict[str, Any]:
        log.append(f"prepare {item.id}")
        await asyncio.sleep(0)
        log.append(f"send {item.id}")
        await asyncio.sleep(0.01)  # the answer
        return {"id": item.id, "status": "ok"}

    async def go() -> None:
        job = ItemJob(None, None, None, {}, evaluate, concurrency, 5)  # type: ignore[arg-type]
        runner = ItemRunner(job, on_row=lambda row: None, on_call=lambda call: None)
        for i in range(count):
            runner.add(Item(f"q{i}"))
        runner.close()
        await runner.run()

    asyncio.run(go())
    return log


def test_the_first_request_leaves_before_the_last_item_of_the_burst_is_prepared():
    log = _runner_log(count=10, concurrency=10)
    assert sorted(log) == sorted([f"{step} q{i}" for i in range(10) for step in ("prepare", "send")])
    assert log.index("send q0") < log.index("prepare q9")
    assert log.index("send q0") < log.index("prepare q2")  # at most one item prepared in between
    for i in range(9):  # still in the order added
        assert log.index(f"prepare q{i}") < log.index(f"prepare q{i + 1}")


def test_a_turnstile_skips_a_waiter_that_was_cancelled():
    async def go() -> list[str]:
        gate, through = Turnstile(), []

        async def walker(name: str) -> None:
            await gate.turn()
            through.append(name)

        tasks = [asyncio.ensure_future(walker(name)) for name in "abc"]
        await asyncio.sleep(0)  # all three at the gate: a went through, b and c wait
        tasks[1].cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return through

    assert asyncio.run(go()) == ["a", "c"]
