"""``--option stop_when_decided=true``: judge the compared systems' units in a seeded random
order and stop once an anytime-valid confidence sequence decides every pair of systems.

Why: two systems scored on the same units usually differ clearly long before the last
unit; a confidence sequence (:mod:`dialeval.metrics.sequential`) may be looked at after
every unit, so stopping at the first decision keeps its 95% guarantee. The runner takes
its options out of the benchmark's (:mod:`dialeval.run.run_options`), orders the items to
judge with :meth:`DecisionWatch.resume`, records each finished row through
:meth:`DecisionWatch.recorder` (which halts the run once decided), and, when decided,
leaves the units never judged out of the run and puts :meth:`DecisionWatch.summary` into
``metrics.json``.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from dialeval.errors import ConfigError
from dialeval.metrics.intervals import SEED, unit_order
from dialeval.run.run_options import RunnerOptions

RUN, BASE = "run", "baseline"  # the two sides when the run is compared with a baseline run
BASELINE = "decide_against"


@dataclass
class DecisionWatch:
    """Paired scores per system as rows finish, and the sequential decision they reach."""

    bench: Any
    margin: float = 0.0
    criterion: str | None = None
    seed: int = SEED  # the one resampler's seed (metrics/intervals.py)
    scores: dict[str, dict[str, float]] = field(default_factory=dict)  # system -> unit -> score
    order_of: list[str] = field(default_factory=list)  # units in the order both sides were scored
    ordered: set[str] = field(default_factory=set)
    decision: dict[str, Any] | None = None
    planned: int = 0  # units in the item list, fixed before judging: the sequence is tuned for a quarter of them
    baseline: str | None = None  # a baseline run folder: the run is one system, compared with it (a gate)
    base_hashes: dict[str, str] = field(default_factory=dict)  # baseline unit -> its content hash
    other_content: set[str] = field(default_factory=set)  # run units whose baseline unit asked something else
    sent: Counter[str] = field(default_factory=Counter)  # item id -> requests that left (cancelled in flight: spent)

    @classmethod
    def from_options(cls, bench: Any, runner: RunnerOptions, seed: int = SEED) -> DecisionWatch | None:
        """The watch the runner's options ask for (``None``: judge every unit), its baseline read."""
        if not runner.stop_when_decided:
            return None
        watch = cls(bench, runner.decision_margin, runner.decide_on, seed, baseline=runner.decide_against)
        if watch.baseline is not None:
            watch.read_baseline()
        return watch

    def read_baseline(self) -> None:
        """The baseline run's scores, as the side the run is compared with (before any call)."""
        from pathlib import Path

        from dialeval.run.folder import RESULTS, read_results

        if not (Path(str(self.baseline)) / RESULTS).exists():
            raise ConfigError(f"option {BASELINE}: {self.baseline} is not a run folder with results")
        for row in read_results(str(self.baseline)):
            self.add(row, side=BASE)
        if not self.scores.get(BASE):
            raise ConfigError(f"option {BASELINE}: {self.baseline} has no scored unit{f' of {self.criterion}' if self.criterion else ''}")

    def unit_of(self, item: Any) -> str:
        """The unit an item shares with the other systems' items (answers: the question)."""
        pair = getattr(item, "pair_key", None)
        if pair:
            return str(pair)
        return str(self.bench.sample_key(item)) if self.bench.sample_key else str(item.id)

    def order(self, items: list[Any]) -> list[Any]:
        """The items with their units in a seeded random order (a unit's items together)."""
        units = sorted({self.unit_of(i) for i in items})
        rank = {u: r for r, u in enumerate(unit_order(len(units), self.seed))}
        position = {u: rank[i] for i, u in enumerate(units)}
        return sorted(items, key=lambda i: position[self.unit_of(i)])

    def resume(self, items: list[Any], todo: list[Any], done: dict[str, Any]) -> list[Any]:
        """The items to judge, in the seeded order: the rows already done are read first (a
        run decided before judges only the failed items again, as any run retries them)."""
        self.planned = len({self.unit_of(i) for i in items})
        for item in self.order(items):
            if item.id in done:
                self.seen(done[item.id])
        return [item for item in self.order(todo) if self.decision is None or item.id in done]

    def add(self, row: dict[str, Any], side: str | None = None) -> None:
        """Note a finished row's scores under its system, or ``side`` (a record's ``pair`` names its unit)."""
        record = row.get("result")
        if row.get("status") != "ok" or not isinstance(record, dict):
            return
        if record.get("pairwise_units"):
            self.add_pairwise(record)
            return
        per_dim = self.bench.item_scores([record])
        if self.criterion is None and per_dim:
            self.criterion = sorted(per_dim)[0]
        units = per_dim.get(self.criterion or "", {})
        for unit, score in units.items():
            key = str(record["pair"]) if record.get("pair") and len(units) == 1 else unit
            who = side or (RUN if self.baseline else str(record.get("system")))
            if self.baseline and not self.same_content(who, key, row.get("unit_hash")):
                continue  # the baseline judged other content under this unit id: not the same unit
            self.note(who, key, float(score))

    def same_content(self, side: str, unit: str, content: Any) -> bool:
        """Whether a run's unit asked what the baseline's unit of the same id asked (its row's
        ``unit_hash``); a unit that did not is counted in ``other_content`` and never paired."""
        if not isinstance(content, str):
            return True  # a row from before unit hashes: paired by id
        if side == BASE:
            self.base_hashes[unit] = content
            return True
        if self.base_hashes.get(unit, content) != content:
            self.other_content.add(unit)
            return False
        return True

    def add_pairwise(self, record: dict[str, Any]) -> None:
        """``dialogue`` with ``versus``: a verdict scores A 1 (A wins), 0.5 (tie) or 0, and B the rest."""
        for u in record["pairwise_units"]:
            if u.get("winner") is None:
                continue
            self.criterion = self.criterion or str(u["criterion"])
            if u["criterion"] == self.criterion:
                key = f"{record['id']}/{u['turn']}" if "turn" in u else str(record["id"])
                a = {"a": 1.0, "tie": 0.5, "b": 0.0}[u["winner"]]
                self.note(str(record.get("system") or "A"), key, a)
                self.note("versus", key, 1.0 - a)

    def note(self, system: str, unit: str, score: float) -> None:
        """One score; a unit every system has scored joins the sequence."""
        self.scores.setdefault(system, {})[unit] = score
        if len(self.scores) > 1 and all(unit in s for s in self.scores.values()) and unit not in self.ordered:
            self.order_of.append(unit)
            self.ordered.add(unit)

    def seen(self, row: dict[str, Any]) -> str | None:
        """Add a row; the stop message once every pair of systems is decided, else ``None``."""
        if self.decision is not None:
            return None
        self.add(row)
        return self.check()

    def check(self) -> str | None:
        from dialeval.metrics.sequential import MIN_UNITS, confidence_sequence, decision, regression_decision, score_bound, tuned_for

        if len(self.scores) < 2 or len(self.order_of) < MIN_UNITS:
            return None
        verdicts = []
        seen = [v for units in self.scores.values() for v in units.values()]
        bound = score_bound(self.criterion, dict(self.bench.scales or {}), seen)
        pairs = [(BASE, RUN)] if self.baseline else list(itertools.combinations(sorted(self.scores), 2))
        for a, b in pairs:
            shared = [u for u in self.order_of if u in self.scores[a] and u in self.scores[b]]
            diffs = [self.scores[b][u] - self.scores[a][u] for u in shared]
            low, high = confidence_sequence(diffs, method="asymptotic", bound=bound, tuned_for=tuned_for(self.planned))
            decide = regression_decision if self.baseline else decision
            verdict = decide(float(low[-1]), float(high[-1]), self.margin)
            if verdict is None:
                return None
            verdicts.append({"a": a, "b": b, "decision": verdict, "low": float(low[-1]), "high": float(high[-1]), "units": len(diffs)})
        said = "; ".join(f"{v['b']} - {v['a']}: {v['decision']} [{v['low']:+.3f}, {v['high']:+.3f}]" for v in verdicts)
        said = f"decided on {self.criterion} after {len(self.order_of)} units ({said})"
        self.decision = {"criterion": self.criterion, "margin": self.margin, "pairs": verdicts, "units_used": len(self.order_of), "said": said}
        return said

    def recorder(self, record: Callable[[dict[str, Any]], None], halt: Callable[[str], Any]) -> Callable[[dict[str, Any]], None]:
        """``record`` (the run's tally) followed by :meth:`seen`; ``halt`` stops the run once decided."""
        def on_row(row: dict[str, Any]) -> None:
            record(row)
            message = self.seen(row)
            if message is not None:
                halt(message)

        return on_row

    def request_left(self, item_id: str) -> None:
        """One request of ``item_id`` left for the server (counted: it is spent even if cancelled)."""
        self.sent[item_id] += 1

    def summary(self, items: list[Any], done: dict[str, Any], calls_per_item: Any, options: dict[str, Any]) -> dict[str, Any] | None:
        """The decision with the units and calls it saved, for metrics.json: ``calls_saved`` counts
        the requests that never left, as the server saw it (a request cancelled in flight by the
        decision had left: spent; ``items_cancelled`` had sent some)."""
        if self.decision is None:
            return None
        skipped = [i for i in items if i.id not in done]
        per_item = [calls_per_item(i, options) if calls_per_item else None for i in skipped]
        known = [c for c in per_item if c is not None]
        saved = sum(max(0, int(c) - self.sent[i.id]) for i, c in zip(skipped, known)) if len(known) == len(per_item) else None
        return {**self.decision, "items": len(items), "items_skipped": len(skipped),
                "items_cancelled": sum(1 for i in skipped if self.sent[i.id]), "calls_saved": saved,
                **({"units_other_content": sorted(self.other_content)} if self.other_content else {})}
