"""The trust card on pairwise votes: ``dialeval trust --labels votes.jsonl --option versus=B.jsonl``.

When the labels are votes (A / B / tie, :mod:`dialeval.conversation.votes`), each
candidate compares the two systems on the voted conversations (a ``versus`` run that scores
nothing, ``judge_only=pairs``), and the card gives per candidate the MT-Bench agreement
figures (S1 with ties, S2 without; vote by vote and against the majority), the voters'
own agreement (the ceiling), the verdicts that change with the order and the first-shown
pick rate, and the cost per 1,000 compared pairs. The pick is the cheapest candidate whose
S2 vote-by-vote agreement is within the tolerance of the best and clearly above chance
(its one-sided 95% Clopper-Pearson lower bound above 0.5).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Callable

from dialeval.config import ModelSettings
from dialeval.errors import ConfigError
from dialeval.trust import dialogue
from dialeval.trust.runs import PlannedRun, RunOutcome, check_candidates, execute, tokens_cost

SCHEMA = "dialeval.trust-pairwise/1"
CHANCE = 0.5  # S2 has two classes


def lower_bound(hits: int, n: int, level: float = 0.95) -> float:
    """One-sided Clopper-Pearson lower bound of a share seen ``hits`` times in ``n``."""
    from scipy.stats import beta

    return 0.0 if hits <= 0 else float(beta.ppf(1 - level, hits, n - hits + 1))


def _pairs_cost(outcome: RunOutcome, pairs: int) -> float | None:
    """Cost per 1,000 compared pairs (both orders), every answer priced as if sent."""
    spent = tokens_cost(outcome.planned.candidate.model, outcome.usage, outcome.calls)
    return None if spent is None or not pairs else 1000 * spent / pairs


def is_votes(path: str | Path) -> bool:
    """Whether ``--labels`` holds pairwise votes rather than scores."""
    from dialeval.conversation.votes import holds_votes

    return Path(path).is_file() and holds_votes(path)


def row(candidate: Any, outcome: RunOutcome) -> dict[str, Any]:
    metrics = json.loads((outcome.run_dir / "metrics.json").read_text(encoding="utf-8"))  # the versus run's own figures
    agreement = metrics.get("pairwise_human_agreement") or {}
    s2 = [r["s2"]["vote"] for r in agreement.values() if r["s2"]["vote"]["n"]]
    n, hits = sum(v["n"] for v in s2), round(sum(v["n"] * v["agreement"] for v in s2))
    pairs = sum(r["n"] for r in (metrics.get("pairwise") or {}).values())
    inconsistent = sum(r["order_inconsistent"] for r in agreement.values())
    return {"label": candidate.label, "spec": candidate.spec_dict(), "run": str(outcome.run_dir), "agreement": agreement,
            "s2_vote_agreement": hits / n if n else None, "s2_votes": n, "s2_lower_bound": lower_bound(hits, n) if n else None,
            "order_inconsistent_share": inconsistent / max(1, sum(r["units"] for r in agreement.values())),
            "first_position_rate": {k: r["first_position_rate"] for k, r in (metrics.get("pairwise") or {}).items()},
            "pairs": pairs, "cost_per_1000_pairs": _pairs_cost(outcome, pairs), "failed_items": outcome.failed}


def recommend(rows: list[dict[str, Any]], tolerance: float) -> dict[str, Any]:
    measured = [r for r in rows if r["s2_vote_agreement"] is not None]
    if not measured:
        return {"label": None, "sentence": "No candidate has a verdict on a voted pair: the card supports no recommendation."}
    best = max(r["s2_vote_agreement"] for r in measured)
    close = sorted((r for r in measured if r["s2_vote_agreement"] >= best - tolerance),
                   key=lambda r: (r["cost_per_1000_pairs"] is None, r["cost_per_1000_pairs"] or 0.0))
    pick = next((r for r in close if r["s2_lower_bound"] > CHANCE), None)
    if pick is None:
        return {"label": None, "best": best, "close": [r["label"] for r in close],
                "sentence": f"No candidate is shown to agree with the voters above chance: the 95% lower bound of every close "
                            f"candidate's S2 agreement is at or below {CHANCE:g}. The card supports no recommendation."}
    cost = pick["cost_per_1000_pairs"]
    return {"label": pick["label"], "best": best, "close": [r["label"] for r in close],
            "sentence": f"Use **{pick['label']}**: its agreement with the voters without ties (S2, vote by vote) is "
                        f"{pick['s2_vote_agreement']:.3f} (95% lower bound {pick['s2_lower_bound']:.3f}), within {tolerance:g} of "
                        f"the best ({best:.3f}), and it is the cheapest such candidate"
                        + (f", at ${cost:.4g} per 1,000 pairs." if cost is not None else " (no price known).")
                        + " This is what the figures on these voted pairs support, not a guarantee on other data."}


def render(card: dict[str, Any]) -> str:
    from dialeval.report.tables import cell, markdown_table, num

    lines = [f"# Judge trust card {cell(card['id'])} (pairwise votes)", "", card["recommended"]["sentence"], "",
             f"Voted pairs: {card['units']['pairs']} in {card['units']['conversations']} conversations, {card['units']['votes']} "
             f"votes; versus {cell(card['versus'])}; tolerance {card['tolerance']:g} in S2 agreement.", "", "## Candidates", ""]
    lines += markdown_table(["candidate", "S2 agreement (vote by vote)", "95% lower bound", "order-inconsistent", "$ / 1,000 pairs",
                             "failed items"],
                            [[cell(r["label"]), num(r["s2_vote_agreement"]), num(r["s2_lower_bound"]), num(r["order_inconsistent_share"]),
                              num(r["cost_per_1000_pairs"]), r["failed_items"]] for r in card["candidates"]], "lrrrrr")
    lines += ["", "## Agreement with the votes (S1: ties a third class; S2: ties left out)", ""]
    body = [[cell(r["label"]), cell(key), *(num(a[s][k]["agreement"]) for s in ("s1", "s2") for k in ("vote", "majority", "humans"))]
            for r in card["candidates"] for key, a in r["agreement"].items()]
    lines += markdown_table(["candidate", "level/criterion", "S1 vote", "S1 majority", "S1 humans", "S2 vote", "S2 majority",
                             "S2 humans"], body, "llrrrrrr")
    return "\n".join([*lines, ""])


def build(settings: Any, say: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """Build (or resume) the pairwise card; ``settings`` is the card's :class:`TrustSettings`."""
    from dialeval.conversation.votes import read_votes

    versus = settings.options.get("versus")
    if not versus:
        raise ConfigError(f"{settings.labels}: holds pairwise votes (a / b / tie): give --option versus=OTHER.jsonl")
    if any(not isinstance(c.model, ModelSettings) for c in settings.candidates) or settings.cascades:
        raise ConfigError("dialeval trust: ensembles and cascades on a pairwise card are not built; give single-model judges")
    check_candidates(settings.candidates)
    rubric = dialogue.load_rubric(settings.rubric)
    votes = read_votes(settings.labels, rubric)
    convs = dialogue.load_conversations(settings.data)
    wanted = {unit.split("/", 1)[0] for _, unit in votes}
    digest = hashlib.sha256(Path(settings.data).read_bytes() + Path(settings.labels).read_bytes() + str(versus).encode()
                            + json.dumps([c.spec_dict() for c in settings.candidates], sort_keys=True).encode())
    folder = Path(settings.output_dir) / (settings.card_id or f"trust-pairs-{digest.hexdigest()[:10]}")
    data = dialogue.write_conversations(folder / "data" / "voted.jsonl", [dialogue.to_record(c) for c in convs if c.id in wanted])
    options = {**settings.options, "rubric": settings.rubric, "criteria": sorted({k.split("/", 1)[1] for k, _ in votes}),
               "facts": "off", "judge_only": "pairs", "human_scores": str(settings.labels)}
    runs = [PlannedRun(c, "pairs", data, options) for c in settings.candidates]
    if settings.dry_run:
        priced = execute(runs, folder / "dry-run", None, dry_run=True)
        cost = sum(float(o.usage.get("cost_usd") or 0.0) for o in priced)
        return {"schema": SCHEMA, "id": folder.name, "folder": str(folder), "dry_run": True,
                "estimate": {"cost_usd": cost, "per_candidate": {o.planned.candidate.label: float(o.usage.get("cost_usd") or 0.0)
                                                                 for o in priced}}}
    done = execute(runs, folder / "runs", settings.cache_path, on_run=lambda p: say(f"dialeval trust: {p.run_id}"))
    rows = [row(o.planned.candidate, o) for o in done]
    card = {"schema": SCHEMA, "id": folder.name, "folder": str(folder), "data": str(settings.data), "labels": str(settings.labels),
            "versus": str(versus), "rubric": settings.rubric, "tolerance": settings.tolerance,
            "units": {"pairs": len(votes), "conversations": len(wanted), "votes": sum(len(v) for v in votes.values())},
            "candidates": rows, "recommended": recommend(rows, settings.tolerance),
            "complete": not any(r["failed_items"] for r in rows)}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "card.json").write_text(json.dumps(card, indent=1), encoding="utf-8")
    (folder / "card.md").write_text(render(card), encoding="utf-8")
    return card
