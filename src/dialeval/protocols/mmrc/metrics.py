"""MMRC metrics (pure): judge means per ability, EP, IMP, RP, and NOTE-TAKING deltas.

Per question records (one per condition and question) carry the judge score and the
inputs of the objective metrics. Failures, decided here once:

- The system under test: an answer it cut off (``truncated``) is scored as it stands;
  an empty answer (``unparsed``) scores 0 from the judge, names no item (EP 0) and
  refuses nothing. Both are counted beside each figure (``cut_off``, ``empty``).
- The judge or a helper (item extractor, refusal detector): a verdict that cannot be
  read is left out of the means and counted (``judge_failed``, ``helper_failed``).
- An answer whose call errored is no answer: its item fails in the runner; should one
  reach these functions it is left out and counted (``errored``).

Formulas (the paper's Section 4.1 where it defines them):
- EP of a question = |distinct reference items named| / |items named|; an answer that
  names no item scores 0 (the paper's formula is 0/0 there; a system is never rewarded
  for naming nothing), counted as ``named_none``. EP is the mean over IE questions.
- IMP of a question = |hits| / |hits + misses| (named and right / all right images).
- RP = refusals given / refusals expected: over questions whose right behaviour is a
  refusal, the share the model refused. Refusals where an answer was expected are
  counted beside it (``false_refusals`` of ``answerable``), not mixed in.
- Overall is the mean of the six ability means (abilities with no score are left out).
- Every mean over nothing is ``None``, never 0.
"""

from __future__ import annotations

from typing import Any, Iterable

from dialeval.protocols.mmrc.data import ABILITIES
from dialeval.protocols.mmrc.text_rules import image_numbers
from dialeval.metrics.paired import system_tests
from dialeval.metrics.intervals import interval, statistic_with_interval
from dialeval.metrics.scores import mean_or_none

OBJECTIVE = ("EP", "IMP", "RP")


def ep_counts(matches: list[int | None]) -> tuple[int, int]:
    """(items the answer names, distinct reference items among them)."""
    return len(matches), len({m for m in matches if m is not None})


def extraction_precision(n_model: int, n_hit: int) -> float:
    """EP of one answer; 0 when the answer names no item (see the module docstring)."""
    return 0.0 if n_model == 0 else n_hit / n_model


def image_hits(answer: str, expected: Iterable[int]) -> dict[str, Any]:
    """Image numbers named in ``answer`` against the ground truth: hits and misses."""
    truth = sorted(set(expected))
    named = image_numbers(answer)
    hits = [n for n in truth if n in named]
    return {"expected": truth, "predicted": named, "hits": len(hits), "misses": len(truth) - len(hits)}


def image_precision(hits: int, misses: int) -> float | None:
    """IMP of one answer; ``None`` only if there is no ground-truth image at all."""
    return None if hits + misses == 0 else hits / (hits + misses)


def refusal_precision(pairs: Iterable[tuple[bool, bool]]) -> float | None:
    """RP of (expected, refused) pairs: refusals given where expected / refusals expected."""
    given = [refused for expected, refused in pairs if expected]
    return None if not given else sum(given) / len(given)


def _system_failures(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Cut-off and empty answers among the rows a figure rests on (they count in it)."""
    return {
        "cut_off": sum(1 for q in rows if q["answer_status"] == "truncated"),
        "empty": sum(1 for q in rows if q["answer_status"] == "unparsed"),
    }


def _ability(rows: list[dict[str, Any]]) -> dict[str, Any]:
    scored = [q for q in rows if q["score"] is not None]
    return {
        "mean": mean_or_none(q["score"] for q in scored),
        "ci": interval([float(q["score"]) for q in scored]),
        "n": len(scored),
        **_system_failures(scored),
        "judge_failed": sum(1 for q in rows if q["score"] is None and q["answer_status"] != "error"),
        "errored": sum(1 for q in rows if q["answer_status"] == "error"),
    }


def _ep(questions: list[dict[str, Any]]) -> dict[str, Any]:
    rows = [q for q in questions if q.get("ep") is not None]
    usable = [q for q in rows if q["ep"]["status"] == "ok"]
    values = [extraction_precision(q["ep"]["n_model"], q["ep"]["n_hit"]) for q in usable]
    return {
        "value": mean_or_none(values),
        "ci": interval(values),
        "n": len(usable),
        "named_none": sum(1 for q in usable if q["ep"]["n_model"] == 0),
        **_system_failures(usable),
        "helper_failed": len(rows) - len(usable),
        "errored": sum(1 for q in questions if q["ability"] == "IE" and q["answer_status"] == "error"),
    }


def _imp(questions: list[dict[str, Any]]) -> dict[str, Any]:
    rows = [q for q in questions if q.get("imp") is not None]
    values = [image_precision(q["imp"]["hits"], q["imp"]["misses"]) for q in rows]
    return {
        "value": mean_or_none(v for v in values if v is not None),
        "ci": interval([v for v in values if v is not None]),
        "n": sum(1 for v in values if v is not None),
        **_system_failures(rows),
        "errored": sum(1 for q in questions if q["ability"] == "IM" and q["answer_status"] == "error"),
    }


def _rp(questions: list[dict[str, Any]]) -> dict[str, Any]:
    rows = [q for q in questions if q.get("refusal") is not None]
    usable = [q for q in rows if q["refusal"]["status"] == "ok" and q["refusal"]["refused"] is not None]
    pairs = [(bool(q["refusal"]["expected"]), bool(q["refusal"]["refused"])) for q in usable]
    expected = [q for q, (e, _) in zip(usable, pairs) if e]
    answerable = [r for e, r in pairs if not e]
    return {
        "value": refusal_precision(pairs),
        "ci": interval([float(r) for e, r in pairs if e]),  # RP is the mean of refused (0/1) over expected refusals
        "n": len(expected),
        "refused": sum(1 for e, r in pairs if e and r),
        **_system_failures(expected),
        "helper_failed": len(rows) - len(usable),
        "errored": sum(1 for q in questions if q.get("refuse") is not None and q["answer_status"] == "error"),
        "answerable": len(answerable),
        "false_refusals": sum(answerable),
    }


def overall_interval(questions: list[dict[str, Any]]) -> list[float] | None:
    """The 95% interval of the mean of ability means, resampling the scored questions."""
    import numpy as np

    scored = [q for q in questions if q["score"] is not None]
    ability = np.array([ABILITIES.index(q["ability"]) for q in scored], dtype=int)
    scores = np.array([float(q["score"]) for q in scored])

    def mean_of_means(units: Any) -> float | None:
        counts = np.bincount(ability[units], minlength=len(ABILITIES))
        sums = np.bincount(ability[units], weights=scores[units], minlength=len(ABILITIES))
        present = counts > 0
        return float((sums[present] / counts[present]).mean()) if present.any() else None

    def rows_of_means(picks: Any) -> Any:  # every resample of a batch at once: counts and sums per (row, ability)
        rows, k = len(picks), len(ABILITIES)
        cells = (ability[picks] + k * np.arange(rows)[:, None]).ravel()
        counts = np.bincount(cells, minlength=rows * k).reshape(rows, k)
        sums = np.bincount(cells, weights=scores[picks].ravel(), minlength=rows * k).reshape(rows, k)
        present = counts > 0
        return np.where(present, sums / np.maximum(counts, 1), 0.0).sum(axis=1) / present.sum(axis=1)

    return statistic_with_interval(len(scored), mean_of_means, per_batch=rows_of_means, cells_per_unit=3)[1]


def summarize(questions: list[dict[str, Any]]) -> dict[str, Any]:
    """One condition's table row from its per-question records."""
    abilities = {a: _ability([q for q in questions if q["ability"] == a]) for a in ABILITIES}
    statuses: dict[str, int] = {}
    for q in questions:
        statuses[q["answer_status"]] = statuses.get(q["answer_status"], 0) + 1
    notes = [q for q in questions if q.get("notes_mode") is not None]
    return {
        "abilities": abilities,
        "overall": mean_or_none(a["mean"] for a in abilities.values() if a["mean"] is not None),
        "overall_ci": overall_interval(questions),
        "EP": _ep(questions),
        "IMP": _imp(questions),
        "RP": _rp(questions),
        "answers": {"total": len(questions), **statuses},
        "notes_cut": sum(1 for q in notes if q["notes_mode"] != "full"),
    }


def _delta(on: float | None, off: float | None) -> float | None:
    return None if on is None or off is None else on - off


def deltas(off: dict[str, Any], on: dict[str, Any]) -> dict[str, float | None]:
    """NOTE-TAKING on minus off, per ability, overall and objective metric."""
    out: dict[str, float | None] = {a: _delta(on["abilities"][a]["mean"], off["abilities"][a]["mean"]) for a in ABILITIES}
    out["overall"] = _delta(on["overall"], off["overall"])
    for name in OBJECTIVE:
        out[name] = _delta(on[name]["value"], off[name]["value"])
    return out


def aggregate(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Corpus metrics per condition (``off``/``on``) and the deltas when both ran."""
    conditions: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        for q in record["questions"]:
            conditions.setdefault(q["condition"], []).append(q)
    summary = {c: summarize(qs) for c, qs in sorted(conditions.items(), key=lambda kv: kv[0] != "off")}
    updates = [u for r in records for u in r.get("note_updates", [])]
    out: dict[str, Any] = {
        "conversations": len(records),
        "conditions": summary,
        "note_taking": {
            "updates": len(updates),
            "ok": sum(1 for u in updates if u["status"] == "ok"),
            "unusable": sum(1 for u in updates if u["status"] != "ok"),
        },
    }
    if "off" in summary and "on" in summary:
        out["deltas"] = deltas(summary["off"], summary["on"])
        out["condition_tests"] = condition_tests(records)
    return out


def condition_tests(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """NOTE-TAKING on against off, question by question (judge scores 0-5): the paired
    test says whether the overall delta is more than the questions' own spread."""
    scores: dict[str, dict[str, dict[str, float | None]]] = {"off": {"score (0-5)": {}}, "on": {"score (0-5)": {}}}
    for n, record in enumerate(records):
        for q in record["questions"]:
            if q["condition"] in scores:  # a question is its conversation and its place in it
                unit = f"{record.get('id', n)}/{q.get('index', q['ability'])}"
                scores[q["condition"]]["score (0-5)"][unit] = q["score"]
    return system_tests(scores)


def radar_values(summary: dict[str, Any]) -> list[float | None]:
    """The six ability means in the paper's order, for the radar chart."""
    return [summary["abilities"][a]["mean"] for a in ABILITIES]
