"""Pure aggregation of dialogue verdicts: per turn and criterion, per conversation, overall.

A verdict counts in a mean only when it was read (status ``ok``); every other outcome is
counted beside the mean by kind (``unparsed``, ``truncated``, ``over_budget``,
``error``), and ``not_applicable`` units are counted apart.
"""

from __future__ import annotations

from collections import Counter
from statistics import fmean
from typing import Any, Iterable

from dialeval.protocols.dialogue.human import agreement_table
from dialeval.protocols.dialogue.pairwise_metrics import pairwise, pairwise_table
from dialeval.conversation.rubric import dimension
from dialeval.report.tables import cell, markdown_table, num

FAILURES = ("unparsed", "truncated", "over_budget", "error")


def summarize(units: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """n, mean score, label counts and failures by kind of some units of one criterion."""
    units = list(units)
    scored = [u for u in units if u.get("score") is not None]
    kinds = Counter(u["status"] for u in units if u["status"] != "ok" or u.get("score") is None)
    labels = Counter(str(u["verdict"]) for u in scored)
    return {
        "n": len(scored),
        "units": len(units),
        "mean": fmean(u["score"] for u in scored) if scored else None,
        "verdicts": dict(sorted(labels.items())),
        "failures": {k: kinds[k] for k in FAILURES if kinds.get(k)},
        "not_applicable": kinds.get("not_applicable", 0),
    }


def by_criterion(units: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    names = list(dict.fromkeys(u["criterion"] for u in units))
    return {name: summarize(u for u in units if u["criterion"] == name) for name in names}


def prompt_sizes(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Largest and mean prompt (tokens) of the judge and the note-taker, and how many were over budget."""
    judge = [u["context"]["prompt_tokens"] for r in records for u in units_of(r) if u.get("context")]
    over = sum(1 for r in records for u in units_of(r) if u.get("status") == "over_budget")
    notes = [n["prompt_tokens"] for r in records for n in r.get("note_updates", [])]
    return {
        "judge_max": max(judge, default=0),
        "judge_mean": round(fmean(judge), 1) if judge else 0,
        "notetaker_max": max(notes, default=0),
        "over_budget": over + sum(1 for r in records for n in r.get("note_updates", []) if n["status"] == "over_budget"),
    }


def grounding(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Factual precision of assistant turns and of summaries: mean over units that were checked."""
    out = {}
    for kind in ("turn", "summary"):
        units = [u for r in records for u in r.get("grounding_units", []) if ("turn" in u) == (kind == "turn")]
        if not units:
            continue
        scored = [u["precision"] for u in units if u.get("precision") is not None]
        out[kind] = {
            "units": len(units),
            "n": len(scored),
            "mean_precision": fmean(scored) if scored else None,
            "facts": sum(len(u["facts"]) for u in units),
            "unsupported": sum(len(u["unsupported"]) for u in units),
            "no_facts": sum(1 for u in units if u["status"] == "ok" and not u["facts"]),
            "failures": dict(Counter(u["status"] for u in units if u["status"] != "ok")),
        }
    return out


def units_of(record: dict[str, Any]) -> list[dict[str, Any]]:
    return list(record.get("turn_units", [])) + list(record.get("conversation_units", []))


def aggregate(records: list[dict[str, Any]], context: dict[str, Any]) -> dict[str, Any]:
    """Corpus metrics; ``context`` is the judge's mode and budget, stated in the report."""
    turn_units = [u for r in records for u in r.get("turn_units", [])]
    whole = [u for r in records for u in r.get("conversation_units", [])]
    conversations = {
        r["id"]: {
            "turns": by_criterion(r.get("turn_units", [])),
            "conversation": {u["criterion"]: u.get("verdict") for u in r.get("conversation_units", [])},
        }
        for r in records
    }
    return {
        "context": context,
        "conversations": len(records),
        "turn_criteria": by_criterion(turn_units),
        "conversation_criteria": by_criterion(whole),
        "per_conversation": conversations,
        "prompts": prompt_sizes(records),
        **({"grounding": grounding(records)} if any(r.get("grounding_units") for r in records) else {}),
        **({"pairwise": pairwise(records)} if any(r.get("pairwise_units") for r in records) else {}),
    }


def verdict_units(record: dict[str, Any]) -> Iterable[tuple[str, str, dict[str, Any]]]:
    """(dimension, unit, verdict record) of every read verdict of one conversation."""
    turn_names = {u["criterion"] for u in record.get("turn_units", [])}
    for u in record.get("turn_units", []):
        if u.get("score") is not None:
            yield u["criterion"], f"{record['id']}/{u['turn']}", u
    for u in record.get("conversation_units", []):
        if u.get("score") is not None:
            yield dimension(u["criterion"], str(u.get("level") or "conversation"), u["criterion"] in turn_names), record["id"], u


def item_scores(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """criterion -> {``<id>/<turn>`` or ``<id>`` -> score}, read verdicts only (for ``compare``)."""
    out: dict[str, dict[str, float]] = {}
    for r in records:
        for name, unit, u in verdict_units(r):
            out.setdefault(name, {})[unit] = u["score"]
        for u in r.get("grounding_units", []):
            if u.get("precision") is not None:
                name, unit = ("factual_precision", f"{r['id']}/{u['turn']}") if "turn" in u else ("summary_factual_precision", r["id"])
                out.setdefault(name, {})[unit] = u["precision"]
    return out


def item_labels(records: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """criterion -> {unit -> verdict} where the verdict is a label (``yes``), named as in
    :func:`item_scores`, so a table can show the word beside its rank."""
    out: dict[str, dict[str, str]] = {}
    for r in records:
        for name, unit, u in verdict_units(r):
            if isinstance(u.get("verdict"), str):
                out.setdefault(name, {})[unit] = u["verdict"]
    return out


def score_dimensions(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    return {name: list(scores.values()) for name, scores in item_scores(records).items()}


def _counts(counts: dict[str, int]) -> str:
    """``label: n, ...`` (labels are the rubric's words, made inert), or ``-``."""
    return ", ".join(f"{cell(k)}: {v}" for k, v in counts.items()) or "-"


def tables(metrics: dict[str, Any]) -> str:
    """Markdown: the context mode and budget, per-criterion results, prompt sizes."""
    ctx = metrics.get("context", {})
    prompts = metrics.get("prompts", {})
    lines = [
        (
            f"Context mode: **{ctx.get('mode')}** (window {ctx.get('window_turns')} turns), "
            f"budget **{ctx.get('budget')}** tokens per prompt. Largest judge prompt: {prompts.get('judge_max')} tokens "
            f"(mean {prompts.get('judge_mean')}); largest note-taker prompt: {prompts.get('notetaker_max')}; "
            f"prompts over budget (not sent): {prompts.get('over_budget')}."
        ),
        "",
    ]
    criteria = [
        [level, cell(name), row["n"], num(row["mean"]), _counts(row["verdicts"]), _counts(row["failures"]), row["not_applicable"]]
        for level, key in (("turn", "turn_criteria"), ("conversation", "conversation_criteria"))
        for name, row in metrics.get(key, {}).items()
    ]
    lines += markdown_table(["level", "criterion", "n", "mean", "verdicts", "failures", "not applicable"], criteria, "llrrllr")
    if metrics.get("grounding"):
        grounding = [
            [kind, row["units"], row["n"], num(row["mean_precision"]), row["facts"], row["unsupported"], row["no_facts"], _counts(row["failures"])]
            for kind, row in metrics["grounding"].items()
        ]
        headers = ["grounding", "units", "checked", "mean factual precision", "facts", "unsupported", "no facts", "failures"]
        lines += ["", *markdown_table(headers, grounding, "lrrrrrrl")]
    if metrics.get("human_agreement"):
        lines += ["", agreement_table(metrics["human_agreement"], metrics.get("human_labels"))]
    if metrics.get("pairwise"):
        lines += ["", pairwise_table(metrics["pairwise"])]
    if metrics.get("pairwise_human_agreement"):
        from dialeval.protocols.dialogue.pairwise_metrics import votes_table

        lines += ["", votes_table(metrics["pairwise_human_agreement"])]
    return "\n".join(lines)
