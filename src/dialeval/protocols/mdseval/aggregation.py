"""MDSEval records to numbers: each evaluator against the human means (Tables 3-5), pairwise bias, faithfulness, cost of the file."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from dialeval.protocols.mdseval.data import ASPECTS, SCALES
from dialeval.protocols.mdseval import metrics as mm

SCORE_EVALUATORS = ("pointwise", "image_prompt", "checklist")
LABEL = {"pointwise": "MLLM-as-a-judge", "image_prompt": "Image-to-Prompt", "checklist": "Checklist-CoT", "pairwise": "MLLM-as-a-judge (pairwise)", "faithfulness": "MLLM-as-a-judge"}


def _score_table(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    evaluators = sorted({r["evaluator"] for rec in records for r in rec["scores"]}, key=SCORE_EVALUATORS.index)
    for ev in evaluators:
        out[ev] = {}
        aspects = [a for a in ASPECTS if any(r["aspect"] == a and r["evaluator"] == ev for rec in records for r in rec["scores"])]
        for aspect in aspects:
            groups, unreadable = [], 0
            for rec in records:
                means = rec["human"]["means"][aspect] if rec["human"] else None
                pairs = []
                for r in rec["scores"]:
                    if r["evaluator"] != ev or r["aspect"] != aspect:
                        continue
                    if r["score"] is None:
                        unreadable += 1
                    elif means and means[r["summary"]] is not None:
                        pairs.append((float(r["score"]), means[r["summary"]]))
                groups.append(pairs)
            out[ev][aspect] = mm.score_figures(groups, unreadable)
    return out


def _pairwise(records: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    aspects = [a for a in ASPECTS if any(p["aspect"] == a for rec in records for p in rec["preferences"])]
    for aspect in aspects:
        picks: dict[str, list[list[tuple[int, int]]]] = {"both": [], "original": [], "swapped": []}
        firsts: dict[str, list[list[int]]] = {"original": [], "swapped": []}
        human_first: dict[str, list[list[int]]] = {"original": [], "swapped": []}
        unreadable = ties = consistent = both_readable = 0
        for rec in records:
            means = rec["human"]["means"][aspect] if rec["human"] else None
            per: dict[str, list[tuple[int, int]]] = {k: [] for k in picks}
            first_share: dict[str, list[int]] = {k: [] for k in firsts}
            human_share: dict[str, list[int]] = {k: [] for k in firsts}
            chosen: dict[tuple[int, int], list[int]] = defaultdict(list)
            for p in rec["preferences"]:
                if p["aspect"] != aspect:
                    continue
                order = "swapped" if p["swapped"] else "original"
                shown = (p["first"], p["second"])
                if p["pick"] is None:
                    unreadable += 1
                    continue
                first_share[order].append(p["pick"])
                chosen[tuple(sorted(shown))].append(shown[p["pick"]])
                human = mm.human_preference(means[shown[0]], means[shown[1]]) if means else None
                if human is None:
                    ties += 1
                    continue
                human_share[order].append(human)
                per["both"].append((shown[p["pick"]], shown[human]))
                per[order].append((shown[p["pick"]], shown[human]))
            for k in picks:
                picks[k].append(per[k])
            for k in firsts:
                firsts[k].append(first_share[k])
                human_first[k].append(human_share[k])
            for answers in chosen.values():
                if len(answers) == 2:
                    both_readable += 1
                    consistent += answers[0] == answers[1]
        out[aspect] = {
            "accuracy": mm.estimate(picks["both"], mm.accuracy, n=sum(map(len, picks["both"]))),
            "accuracy_original": mm.estimate(picks["original"], mm.accuracy, n=sum(map(len, picks["original"]))),
            "accuracy_swapped": mm.estimate(picks["swapped"], mm.accuracy, n=sum(map(len, picks["swapped"]))),
            "first_share": {k: mm.estimate(firsts[k], mm.share_first, n=sum(map(len, firsts[k]))) for k in firsts},
            "human_first_share": {k: mm.share_first(human_first[k]) for k in firsts},
            "consistency": 100 * consistent / both_readable if both_readable else None,
            "pairs_both_readable": both_readable,
            "unreadable": unreadable,
            "human_ties": ties,
        }
    return out


def _faithfulness(records: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for level in ("summary", "sentence"):
        rows = [(rec, f) for rec in records for f in rec["faithfulness"] if f["level"] == level]
        if not rows:
            continue
        groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
        unreadable = no_human = 0
        for rec, f in rows:
            groups[rec["id"]]  # every dialogue is a group, even an empty one
            if f["label"] is None:
                unreadable += 1
                continue
            human = None
            if rec["human"]:
                human = (
                    rec["human"]["summary_labels"][f["summary"]]
                    if level == "summary"
                    else rec["human"]["sentence_labels"][f["summary"]][f["sentence"]]
                )
            if human is None:
                no_human += 1
                continue
            groups[rec["id"]].append((f["label"], human))
        g = list(groups.values())
        pairs = [p for grp in g for p in grp]
        out[level] = {
            "balanced_accuracy": mm.estimate(g, mm.balanced_accuracy),
            "f1": mm.estimate(g, mm.macro_f1),
            "n": len(pairs),
            "unreadable": unreadable,
            "no_human_label": no_human,
            "judge_labels": dict(Counter(p[0] for p in pairs)),
            "human_labels": dict(Counter(p[1] for p in pairs)),
        }
    return out


def _usage(records: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(records)
    total: Counter = Counter()
    for r in records:
        total.update({k: v for k, v in r.get("usage", {}).items()})
    per = {k: total[k] / n for k in ("calls", "requests", "input_tokens", "output_tokens", "cost_usd")}
    file_n = max(r.get("file_dialogues", 1) for r in records)
    return {
        "dialogues": n,
        "file_dialogues": file_n,
        "per_dialogue": per,
        "file_estimate": {k: per[k] * file_n for k in ("calls", "input_tokens", "output_tokens", "cost_usd")},
        "extrapolated": n < file_n,
        "cost_known": not total["unpriced_calls"],  # a model without a price: cost unknown, not 0
        "from_cache": bool(total["cached"]),  # cache hits cost nothing now: the file's cost is not measured
    }


def aggregate(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    seen = Counter(label for r in records for label in r["judge_input"])
    captions = Counter(c["from"] for r in records for c in r["captions"])
    return {
        "judge_input": dict(seen),
        "captioner_input": dict(captions),
        "scores": _score_table(records),
        "pairwise": _pairwise(records),
        "faithfulness": _faithfulness(records),
        "usage": _usage(records),
        "with_human_scores": sum(1 for r in records if r["human"]),
    }


def score_dimensions(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = defaultdict(list)
    for rec in records:
        for r in rec["scores"]:
            if r["score"] is not None:
                low, high = SCALES[r["aspect"]]
                out[f"{r['evaluator']} {r['aspect']} ({low}-{high})"].append(r["score"])
    return dict(sorted(out.items()))


def item_scores(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per evaluator and aspect, the score of each summary (unit ``<dialogue id>/<summary>``)."""
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for rec in records:
        for r in rec["scores"]:
            if r["score"] is not None:
                out[f"{r['evaluator']} {r['aspect']}"][f"{rec['id']}/{r['summary']}"] = float(r["score"])
    return dict(out)
