"""The card's runs: which dialogue runs each candidate needs, priced by a dry run, then run.

Every run goes through the public :func:`dialeval.evaluate` into its own folder
(``<card>/runs/<candidate>-<probe>``), with the shared response cache, so a card built
again resumes where it stopped and pays nothing twice. Repeats for the consistency probe
run without the cache: a cached answer is the same answer, not a second reading.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dialeval.config import ModelSettings, as_dry_run, primary, resolve_config
from dialeval.judge_spec import Composite, mapped
from dialeval.trust.candidates import Candidate
from dialeval.trust.dialogue import LabelWarning


@dataclass(frozen=True)
class PlannedRun:
    """One dialogue run of one candidate for one probe (``base``: agreement and cost)."""

    candidate: Candidate
    probe: str
    data: Path
    options: dict[str, Any]
    cached: bool = True

    @property
    def run_id(self) -> str:
        return f"{self.candidate.slug}-{self.probe}"

    def config(self, root: Path, cache_path: str | None, model: ModelSettings | Composite | None = None) -> dict[str, Any]:
        """The run config: the candidate's model (or ``model``: its dry run), context and template.
        An ensemble or cascade judges (``models.judge``); its first member plays the other roles."""
        options = {**self.options, **({"context": self.candidate.context} if self.candidate.context else {})}
        judge = model or self.candidate.model
        composite = {} if isinstance(judge, ModelSettings) else {"models": {"judge": judge.model_dump(exclude_unset=True)}}
        return {
            **composite,
            "model": primary(judge).model_dump(exclude_unset=True),
            "templates": {"judge": self.candidate.template} if self.candidate.template else {},
            "options": options,
            "output_dir": str(root),
            "run_id": self.run_id,
            "cache_path": cache_path if self.cached else None,
            "figures": False,  # the card reads results.jsonl; a figure costs about 0.1 s of CPU to render
        }


@dataclass
class RunOutcome:
    """What the card reads of one finished run."""

    planned: PlannedRun
    run_dir: Path
    records: list[dict[str, Any]]
    usage: dict[str, Any]
    calls: list[dict[str, Any]] = field(default_factory=list)
    failed: int = 0


def check_candidates(candidates: list[Candidate]) -> None:
    """Every candidate's key and URL, as ``dialeval run`` checks them before its first call
    (no round trip), all at once: a missing key stops the card, its dry run too, before
    any candidate's first request, naming every candidate that lacks something."""
    from dialeval.errors import ConfigError
    from dialeval.run.preflight import missing_requirements

    failed = missing_requirements((c.label, m) for c in candidates for m in members_of(c.model))
    if failed:
        raise ConfigError("dialeval trust: " + "; ".join(f"candidate {label!r}: {err}" for label, err in failed)
                          + "; nothing was sent")


def execute(plan: list[PlannedRun], root: Path, cache_path: str | None, *, dry_run: bool = False,
            on_run: Any = None) -> list[RunOutcome]:
    """Run (or, ``dry_run``, price) every planned run in order; a run with failed items is
    kept with its count, so the card can say so and a re-run retries it."""
    from dialeval.evaluation import run_here
    from dialeval.report.results import read_run

    out = []
    for planned in plan:
        model = dry(planned.candidate.model) if dry_run else None
        config = planned.config(root, cache_path, model)
        if on_run is not None:
            on_run(planned)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # failed items are counted on the card
            warnings.simplefilter("ignore", LabelWarning)  # the card warned of its labels once, before the runs
            result = run_here("dialogue", planned.data, resolve_config(config, {}))
        run = read_run(result.run_dir)
        calls = [c for item in run.items for c in item.calls]
        usage = (result.metrics.get("run") or {}).get("usage") or {}
        out.append(RunOutcome(planned, result.run_dir, result.records, usage, calls, result.failed + result.not_evaluated))
    return out


def without_versus(options: dict[str, Any]) -> dict[str, Any]:
    """The user's options without ``versus``: another system's replies go to the position
    probe only (it replaces the padded copy there), never into the runs that score."""
    return {k: v for k, v in options.items() if k != "versus"}


def every_unit(options: dict[str, Any]) -> dict[str, Any]:
    """The options of a run over units the labels do not name (the corpus run, the needle
    probe's planted conversations): every unit judged, no labels read."""
    return {**{k: v for k, v in options.items() if k != "human_scores"}, "judge_only": "all"}


def members_of(model: ModelSettings | Composite) -> list[ModelSettings]:
    return [model] if isinstance(model, ModelSettings) else model.models


def dry(model: ModelSettings | Composite) -> ModelSettings | Composite:
    """The candidate as a dry run priced as itself (an ensemble's or cascade's members each)."""
    return as_dry_run(model) if isinstance(model, ModelSettings) else mapped(model, as_dry_run)


def judged_units(records: list[dict[str, Any]]) -> int:
    """Units the judge was asked about (not those a criterion does not apply to)."""
    return sum(1 for r in records for u in list(r.get("turn_units", [])) + list(r.get("conversation_units", []))
               if u.get("status") != "not_applicable")


def unreadable(records: list[dict[str, Any]]) -> int:
    return sum(1 for r in records for u in list(r.get("turn_units", [])) + list(r.get("conversation_units", []))
               if u.get("status") in ("unparsed", "truncated"))


def price_of(model: ModelSettings) -> Any:
    """The candidate's price: its own ``price``, else the price table's for ``price_as`` or its name."""
    from dialeval.models.pricing import Price, price_of as lookup

    if model.price is not None:
        return Price.of(model.price)
    return lookup(model.price_as or model.spec)


def tokens_cost(model: ModelSettings | Composite, usage: dict[str, Any], calls: list[dict[str, Any]]) -> float | None:
    """What the run's tokens cost at the candidate's price; an ensemble's or cascade's calls
    each at their member's price (``None``: some member has none)."""
    keys = ("input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens")
    if isinstance(model, ModelSettings):
        price = price_of(model)
        return None if price is None else float(price.cost(*(int(usage.get(k, 0)) for k in keys)))
    total = 0.0
    for member in {m.spec: m for m in model.models}.values():
        price = price_of(member)
        mine = [c for c in calls if c.get("model") == member.spec]
        if price is None:
            return None if mine else total
        total += sum(price.cost(*(int(c.get(k) or 0) for k in keys)) for c in mine)
    return total


def per_thousand(outcome: RunOutcome) -> dict[str, float | None]:
    """Cost and model time per 1,000 judged units, from the run's tokens (cached answers
    included: a resumed card costs what a fresh one would) and its calls' latencies."""
    units = judged_units(outcome.records)
    cost = None
    if units:
        spent = tokens_cost(outcome.planned.candidate.model, outcome.usage, outcome.calls)
        cost = None if spent is None else 1000 * spent / units
    sent = [c["latency_s"] for c in outcome.calls if not c.get("cached") and c.get("latency_s") is not None]
    calls_per_unit = len(outcome.calls) / units if units else 0.0
    seconds = 1000 * calls_per_unit * sum(sent) / len(sent) if sent else None
    return {"cost_per_1000_units": cost, "seconds_per_1000_units": seconds, "units": float(units)}
