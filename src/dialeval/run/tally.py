"""What a run keeps as its items finish: the results file, the rows, the live totals, the bar."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from dialeval.models.progress import limit_text
from dialeval.models.usage import CallRecord, summarize_calls
from dialeval.run.folder import ResultsWriter


class RunTally:
    """Appends each finished row to ``results.jsonl`` and keeps the progress bar's figures."""

    def __init__(self, results: Path, done: dict[str, dict[str, Any]], bar: Any = None, concurrency: int | None = None):
        self.writer = ResultsWriter(results)
        self.concurrency = concurrency  # the run's own bound on requests in flight
        self.done = done  # item id -> its latest row (those read back at start included)
        self.bar = bar
        self.live: Counter[str] = Counter()
        self.usd = 0.0
        self.unpriced = False

    def record(self, row: dict[str, Any]) -> None:
        """One finished item: on disk first, then counted and shown."""
        self.writer.append(row)
        self.done[row["id"]] = row
        totals = summarize_calls(row["usage"])
        self.live["tokens"] += int(totals["input_tokens"] + totals["output_tokens"])
        self.usd += totals["cost_usd"]
        self.unpriced = self.unpriced or bool(totals["unpriced_calls"])
        self.live["failed"] += row["status"] != "ok"
        self.show()
        if self.bar is not None:
            self.bar.update(1)

    def call_ended(self, call: CallRecord) -> None:
        if call.status == "error":
            self.errored_calls(1)

    def errored_calls(self, count: int) -> None:
        self.live["errors"] += count
        self.show()

    def show(self) -> None:
        if self.bar is None:
            return
        from dialeval.models.client import active_limits

        cost = "unknown" if self.unpriced else f"{self.usd:.4f}"
        # a model's request limit (adapts to 429s), and why it fell, where it bounds the run more
        # than --concurrency does: `limit=64` beside `--concurrency 4` read as if the flag were ignored
        bound = self.concurrency or float("inf")
        limits = {label: x for label, x in active_limits().items() if x.current < bound}
        self.bar.set_postfix(
            failed=self.live["failed"],
            errors=self.live["errors"],
            tokens=self.live["tokens"],
            usd=cost,
            **({"limit": "; ".join(limit_text(x.current, x.maximum, x.reason) for x in limits.values())} if limits else {}),
            refresh=True,
        )

    def finished(self, items: list[Any]) -> int:
        """How many of ``items`` ended ``ok`` so far."""
        return sum(1 for item in items if self.done.get(item.id, {}).get("status") == "ok")

    def close(self) -> None:
        self.writer.close()
        if self.bar is not None:
            self.bar.close()
