"""``dialeval trust``: judge the labelled units with every candidate, probe them, write the card.

Steps: read the data, rubric and labels (stops on bad input before any call); write the
probes' derived data files under ``trust/<id>/data``; price every planned run by a dry
run; run them; compute agreement, probes, cost; recommend; write ``card.json``,
``card.md`` and plots. See docs/trust.md.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from dialeval.config import DEFAULT_CACHE, ModelSettings
from dialeval.models.usage import priced_cost
from dialeval.trust import cascades, dialogue, perturb, probes, recommend
from dialeval.trust.probe_catalog import all_probes, get_probe
from dialeval.trust.probe_registry import PROBES, Measuring, Planning, Probe
from dialeval.trust.agreement import agreement, headline
from dialeval.trust.candidates import Candidate
from dialeval.trust.corpus import corpus_estimates, corpus_run
from dialeval.trust.runs import (
    PlannedRun, RunOutcome, check_candidates, every_unit, execute, members_of, per_thousand, price_of, unreadable, without_versus,
)
from dialeval.trust.stats import RESAMPLES

SCHEMA = "dialeval.trust/1"



@dataclass
class TrustSettings:
    """Everything ``dialeval trust`` is given (see the CLI's help for each)."""

    data: Path
    labels: Path
    rubric: str
    candidates: list[Candidate]
    tolerance: float = recommend.TOLERANCE
    repeats: int = 2  # readings for the consistency probe (1: no probe)
    probes: tuple[str, ...] = PROBES
    options: dict[str, Any] = field(default_factory=dict)
    output_dir: Path = Path("trust")
    card_id: str | None = None
    cache_path: str | None = DEFAULT_CACHE
    needle_min_replies: int = 3
    resamples: int = RESAMPLES
    dry_run: bool = False  # price the card and stop
    corpus: bool = False  # judge the whole data file with the recommended candidate: prediction-powered means
    budget: float | None = None  # USD: stop before the first call when the dry run prices the card above it
    cascades: bool = False  # issue 49: add cascades and a jury of the candidates, and calibrate the cascades
    max_calls: int | None = None  # stop before the first call when the dry run counts more calls (unpriced candidates)


@dataclass
class Inputs:
    conversations: list[dict[str, Any]]  # the labelled conversations as data records
    labels: dialogue.HumanLabels
    rubric: Any


def read_inputs(settings: TrustSettings) -> Inputs:
    """The labelled conversations and their labels; every check before the first call."""
    rubric = dialogue.load_rubric(settings.rubric)
    convs = dialogue.load_conversations(settings.data)
    labels = dialogue.read_labels(settings.labels, rubric, convs)
    wanted = set(labels.conversations())
    return Inputs([dialogue.to_record(c) for c in convs if c.id in wanted], labels, rubric)


def card_id(settings: TrustSettings) -> str:
    """From the data, the labels, the rubric and the candidates: the same card resumes."""
    digest = hashlib.sha256()
    for path in (settings.data, settings.labels):
        digest.update(Path(path).read_bytes())
    rubric = Path(settings.rubric)
    digest.update(rubric.read_bytes() if rubric.is_file() else settings.rubric.encode())
    digest.update(json.dumps([c.spec_dict() for c in settings.candidates], sort_keys=True).encode())
    digest.update(json.dumps([settings.options, settings.repeats, sorted(settings.probes)], sort_keys=True, default=str).encode())
    return f"trust-{digest.hexdigest()[:10]}"


def plan(settings: TrustSettings, inputs: Inputs, folder: Path) -> tuple[list[PlannedRun], dict[str, int]]:
    """Every run of every candidate, and where the needles were planted."""
    data = folder / "data"
    labelled = dialogue.write_conversations(data / "labelled.jsonl", inputs.conversations)
    padded = dialogue.write_conversations(data / "padded.jsonl", perturb.padded(inputs.conversations))
    needle_records, needles = perturb.planted(inputs.conversations, settings.needle_min_replies)
    base = base_options(settings, inputs)
    runs: list[PlannedRun] = []
    for candidate in settings.candidates:
        runs.append(PlannedRun(candidate, "base", labelled, base))
        planning = Planning(candidate, settings, inputs, data, labelled, base, padded, needle_records)
        for probe in chosen_probes(settings):
            runs += probe.runs(planning)
    return runs, needles


def chosen_probes(settings: TrustSettings) -> list[Probe]:
    """The probes ``settings`` asks for, in the registry's order (unknown names stop here)."""
    for name in settings.probes:
        get_probe(name)
    return [probe for name, probe in all_probes().items() if name in settings.probes]


def base_options(settings: TrustSettings, inputs: Inputs) -> dict[str, Any]:
    """The dialogue options of a candidate's plain run: the labelled criteria, no fact checks,
    and (``judge_only=labelled``, unless the options say ``all``) only the labelled units:
    a turn nobody labelled adds calls and no figure."""
    options = {**without_versus(settings.options), "rubric": settings.rubric, "criteria": inputs.labels.rubric_criteria(), "facts": "off"}
    if options.setdefault("judge_only", "labelled") == "labelled":
        options["human_scores"] = str(Path(settings.labels).resolve())
    return options


def candidate_card(candidate: Candidate, outcomes: dict[str, RunOutcome], inputs: Inputs, needles: dict[str, int],
                   settings: TrustSettings) -> dict[str, Any]:
    """One candidate's row of the card: agreement, probes, cost, and where its runs are."""
    base = outcomes["base"]
    scores = dialogue.scores_by_unit(base.records)
    figures = agreement(scores, inputs.labels.by_unit, inputs.labels.levels, settings.resamples)
    consensus: dict[str, dict[str, float]] = {}
    for (unit, criterion), value in inputs.labels.consensus().items():
        consensus.setdefault(criterion, {})[unit] = value
    measuring = Measuring(candidate, settings, inputs, outcomes, scores, consensus, inputs.labels.scales, needles)
    found = {probe.name: probe.measure(measuring) for probe in chosen_probes(settings)}
    costs = per_thousand(base)
    return {
        "spec": candidate.spec_dict(),
        "label": candidate.label,
        "runs": {name: str(o.run_dir) for name, o in outcomes.items()},
        "agreement": figures,
        "alpha": headline(figures),
        "probes": found,
        "failed_probes": probes.failed(found),
        "cost_per_1000_units": costs["cost_per_1000_units"],
        "seconds_per_1000_units": costs["seconds_per_1000_units"],
        "units_judged": int(costs["units"] or 0),
        "unreadable": unreadable(base.records),
        "failed_items": sum(o.failed for o in outcomes.values()),
        "usage": {name: {k: o.usage.get(k) for k in ("calls", "requests", "cached", "input_tokens", "output_tokens", "cost_usd")}
                  for name, o in outcomes.items()},
        **cascades.row_extras(candidate, base.records),
    }


def estimate(outcomes: list[RunOutcome]) -> dict[str, Any]:
    """What the dry run says the card's calls cost and how many they are, per candidate
    and in all; the corpus run (``--corpus``) is priced apart for each candidate, since
    only the pick makes it."""
    per: dict[str, float] = {}
    corpus: dict[str, float] = {}
    calls: dict[str, int] = {}
    corpus_calls: dict[str, int] = {}
    unpriced: set[str] = set()
    for o in outcomes:
        label = o.planned.candidate.label
        into, count = (corpus, corpus_calls) if o.planned.probe == "corpus" else (per, calls)
        into[label] = into.get(label, 0.0) + priced_cost(o.usage)
        count[label] = count.get(label, 0) + int(o.usage.get("calls") or 0)
        unpriced.update(o.usage.get("unpriced_models") or [])
    out = {"cost_usd": round(sum(per.values()), 6), "per_candidate": {k: round(v, 6) for k, v in per.items()},
           "calls": sum(calls.values()), "calls_per_candidate": calls,
           "unpriced_models": sorted(unpriced), "runs": len(outcomes) - len(corpus)}
    return {**out, "corpus_per_candidate": {k: round(v, 6) for k, v in corpus.items()},
            "corpus_calls_per_candidate": corpus_calls} if corpus else out


def priced_once(runs: list[PlannedRun], root: Path) -> dict[str, Any]:
    """The dry run's estimate, made once per plan: a resumed card reads it back (its key
    covers every run's id, data, options and model, so any change prices it again)."""
    digest = hashlib.sha256()
    for r in runs:
        data = hashlib.sha256(r.data.read_bytes()).hexdigest()
        digest.update(json.dumps([r.run_id, data, r.config(root, None)], sort_keys=True, default=str).encode())
    saved = root / "estimate.json"
    if saved.is_file():
        kept = json.loads(saved.read_text(encoding="utf-8"))
        if kept.get("key") == digest.hexdigest() and "calls" in kept["estimate"]:  # older estimates did not count calls
            return dict(kept["estimate"])
    priced = estimate(execute(runs, root, None, dry_run=True))
    saved.write_text(json.dumps({"key": digest.hexdigest(), "estimate": priced}, indent=1), encoding="utf-8")
    return priced


def calibrate_cascades(settings: TrustSettings, inputs: Inputs, by_candidate: dict[str, dict[str, RunOutcome]],
                       folder: Path, needles: dict[str, int], say: Callable[[str], None]) -> list[dict[str, Any]]:
    """Each cascade's calibrated threshold (:func:`cascades.calibrate`), then the calibrated
    cascade's runs (its cheap calls and most strong ones are in the response cache already)."""
    from dialeval.judge_spec import Cascade

    found_all, added = [], []
    consensus: dict[str, dict[str, float]] = {}
    for (unit, criterion), value in inputs.labels.consensus().items():
        consensus.setdefault(criterion, {})[unit] = value
    for c in list(settings.candidates):
        if not isinstance(c.model, Cascade) or c.model.escalate.when != "disagree":
            continue
        strong = next(s for s in settings.candidates if isinstance(s.model, ModelSettings) and s.model == c.model.cascade[1])
        found = cascades.calibrate(by_candidate[c.label]["base"].records,
                                   dialogue.scores_by_unit(by_candidate[strong.label]["base"].records), consensus, settings.tolerance)
        found_all.append({"cascade": c.label, **found})
        tuned = cascades.calibrated(c, found, settings.tolerance)
        if tuned is not None:
            found_all[-1]["candidate"] = tuned.label
            added.append(tuned)
    if added:
        runs = [r for r in plan(TrustSettings(**{**settings.__dict__, "candidates": added}), inputs, folder)[0]]
        for o in execute(runs, folder / "runs", settings.cache_path, on_run=lambda p: say(f"dialeval trust: {p.run_id}")):
            by_candidate.setdefault(o.planned.candidate.label, {})[o.planned.probe] = o
        settings.candidates = settings.candidates + added
    return found_all


def check_budget(settings: TrustSettings) -> None:
    """Before anything is read or sent: a budget is a finite amount of dollars, and a
    candidate without a price (its cost would count as $0) is bounded by ``max_calls``."""
    from dialeval.errors import ConfigError

    if settings.budget is not None and not (math.isfinite(settings.budget) and settings.budget >= 0):
        raise ConfigError(f"dialeval trust: --budget {settings.budget!r}: give a finite amount of dollars, 0 or more")
    if settings.max_calls is not None and settings.max_calls < 1:
        raise ConfigError(f"dialeval trust: --max-calls {settings.max_calls}: give at least 1")
    unpriced = [c.label for c in settings.candidates if any(price_of(m) is None for m in members_of(c.model))]
    if settings.budget is not None and unpriced and settings.max_calls is None:
        raise ConfigError(f"dialeval trust: --budget cannot bound {', '.join(map(repr, unpriced))}: no price is known for "
                          "it, so its calls would count as $0; give its price in the candidate spec (model: {spec: ..., "
                          "price: [input, output] USD per million tokens}) or bound the calls with --max-calls N; nothing was sent")


def over_budget(settings: TrustSettings, priced: dict[str, Any]) -> None:
    """Stop before the first call when the dry run prices the card (and the corpus run of
    the dearest pick, with ``corpus``) above the budget, or counts more calls than allowed."""
    from dialeval.errors import ConfigError

    cost = priced["cost_usd"] + max(priced.get("corpus_per_candidate", {}).values(), default=0.0)
    calls = priced["calls"] + max(priced.get("corpus_calls_per_candidate", {}).values(), default=0)
    if settings.budget is not None and cost > settings.budget:
        raise ConfigError(f"dialeval trust: the dry run prices the card at ${cost:.4f}, over the budget of "
                          f"${settings.budget:g}; nothing was sent (drop candidates or probes, or raise --budget)")
    if settings.max_calls is not None and calls > settings.max_calls:
        raise ConfigError(f"dialeval trust: the dry run counts {calls} model calls for the card, over --max-calls "
                          f"{settings.max_calls}; nothing was sent (drop candidates or probes, or raise --max-calls)")


def build(settings: TrustSettings, say: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """Build (or resume) the card; returns card.json's content, with ``folder`` set."""
    from dialeval.trust import pairwise
    from dialeval.trust.render import write_card

    if pairwise.is_votes(settings.labels):  # issue 49: votes A / B / tie: the card on a versus run's pairs
        return pairwise.build(settings, say)
    if settings.cascades and not any(c.label.startswith("jury-") for c in settings.candidates):
        settings.candidates = cascades.extend(settings.candidates)
    check_budget(settings)
    check_candidates(settings.candidates)
    inputs = read_inputs(settings)
    folder = Path(settings.output_dir) / (settings.card_id or card_id(settings))
    runs, needles = plan(settings, inputs, folder)
    extra = [corpus_run(c, settings.data, every_unit(base_options(settings, inputs))) for c in settings.candidates] if settings.corpus else []
    priced = priced_once(runs + extra, folder / "dry-run")
    say(f"dialeval trust: {len(runs)} runs for {len(settings.candidates)} candidates; dry-run estimate "
        f"${priced['cost_usd']:.4f}, {priced['calls']} calls"
        + (f" (no price for {', '.join(priced['unpriced_models'])})" if priced["unpriced_models"] else ""))
    over_budget(settings, priced)
    if settings.dry_run:
        return {"schema": SCHEMA, "id": folder.name, "folder": str(folder), "estimate": priced, "dry_run": True}
    done = execute(runs, folder / "runs", settings.cache_path, on_run=lambda p: say(f"dialeval trust: {p.run_id}"))
    by_candidate: dict[str, dict[str, RunOutcome]] = {}
    for o in done:
        by_candidate.setdefault(o.planned.candidate.label, {})[o.planned.probe] = o
    calibration = calibrate_cascades(settings, inputs, by_candidate, folder, needles, say) if settings.cascades else []
    rows = [candidate_card(c, by_candidate[c.label], inputs, needles, settings) for c in settings.candidates]
    card: dict[str, Any] = {
        "schema": SCHEMA,
        "id": folder.name,
        "folder": str(folder),
        "data": str(settings.data), "labels": str(settings.labels), "rubric": settings.rubric,
        "units": {"conversations": len(inputs.conversations), "labelled": len(inputs.labels.by_unit),
                  "labels": sum(len(s) for s in inputs.labels.by_unit.values()),
                  "annotators": len({a for s in inputs.labels.by_unit.values() for a in s}), **inputs.labels.summary},
        "label_warnings": inputs.labels.warnings[:20],
        "label_warning_count": len(inputs.labels.warnings),
        "tolerance": settings.tolerance,
        "probes_run": list(settings.probes),
        "limits": {name: get_probe(name).limit for name in settings.probes},
        "estimate": priced,
        "candidates": rows,
        "recommended": recommend.recommend(rows, settings.tolerance),
        "complete": not any(r["failed_items"] for r in rows),
        **({"calibration": calibration} if settings.cascades else {}),
    }
    pick = next((c for c in settings.candidates if c.label == card["recommended"]["label"]), None)
    if settings.corpus and pick is not None:
        say(f"dialeval trust: judging every conversation of {settings.data} with {pick.label}")
        card["prediction_powered"] = corpus_estimates(corpus_run(pick, settings.data, every_unit(base_options(settings, inputs))),
                                                      inputs.labels, folder / "runs", settings.cache_path)
        card["complete"] = card["complete"] and not card["prediction_powered"]["failed_items"]
    write_card(card, folder)
    return card
