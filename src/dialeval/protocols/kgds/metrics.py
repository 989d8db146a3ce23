"""KGDS metrics (paper Sections 4.3-4.6, Appendix C): pure functions, no model calls.

Edge cases are defined, never divided through:

- no gold supporting paragraph / key fact / clear opinion (the denominator of a recall
  is 0): the metric is undefined, ``None``, and the sample is counted as ``undefined``;
- nothing retrieved or nothing knowable (the denominator of a precision is 0, e.g. an
  empty EBS): precision is 0. An empty summary supports nothing; calling it undefined
  would silently drop exactly the failures from the average;
- precision + recall = 0: F1 is 0;
- the overall geometric mean is ``None`` when either part is ``None``.

Failures are told apart (:data:`OUTCOMES`). A summary the system under test failed to
give (empty, cut off, unreadable, or a reflection round after a failed round) is scored
as an empty summary: no paragraph retrieved, no fact or opinion knowable, so every
score is 0 and the sample stays in the means. A verdict the judge failed to give
(unparsed, truncated) leaves that sample out of the metrics that need it, counted.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from statistics import fmean
from typing import Any, Iterable, Literal, Sequence

from dialeval.metrics.intervals import interval

ERROR_TYPES: dict[str, str] = {
    # code -> name, in the paper's numbering (Error Type1..Type5)
    "OM": "opinion misattribution",
    "IRIC": "implicit reference incorrectly clarified",
    "IRU": "implicit reference unclarified",
    "OSD": "opinion sentiment distortion",
    "OFI": "opinion fact inconsistency",
}


Outcome = Literal["ok", "system_failed", "judge_unparsed", "judge_truncated", "judge_error", "undefined", "not_given"]
# how one sample's metric came out; only ``ok`` and ``system_failed`` carry a value
OUTCOMES: tuple[str, ...] = ("ok", "system_failed", "judge_unparsed", "judge_truncated", "judge_error", "undefined", "not_given")
SCORED = ("ok", "system_failed")  # outcomes that carry a value
READABLE_SUMMARY = ("ok", "given")  # summary statuses that hold the system's answer
_JUDGE = {"error": "judge_error", "truncated": "judge_truncated", "unparsed": "judge_unparsed"}


def judge_failure(statuses: Iterable[str]) -> str | None:
    """The judge failure among call statuses, worst first (error, truncated, unparsed)."""
    seen = set(statuses)
    return next((outcome for status, outcome in _JUDGE.items() if status in seen), None)


@dataclass(frozen=True)
class PRF:
    recall: float
    precision: float
    f1: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def f1_score(precision: float, recall: float) -> float:
    """Harmonic mean; 0 when both are 0."""
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def bsp_scores(selected: Iterable[int], supporting: set[int], nonsupporting: set[int]) -> PRF | None:
    """BSP recall, precision and F1 of an extracted background (Eqs. 12-14).

    Indices outside the sample's paragraphs are ignored, as in Eq. 13 (they are in
    neither S nor N). ``None`` when the sample has no supporting paragraph.
    """
    if not supporting:
        return None
    chosen = set(selected)
    hits = len(chosen & supporting)
    retrieved = len(chosen & (supporting | nonsupporting))
    recall = hits / len(supporting)
    precision = hits / retrieved if retrieved else 0.0
    return PRF(recall, precision, f1_score(precision, recall))


def kbsaf_scores(key_knowable: Sequence[bool], nonsupporting_knowable: Sequence[bool]) -> PRF | None:
    """KBSAF recall, precision and F1 from per-fact verdicts (Eqs. 4-6).

    Precision counts knowable key facts among all knowable scored facts (key and
    non-supporting). ``None`` when the sample has no key fact.
    """
    if not key_knowable:
        return None
    key_hits = sum(bool(v) for v in key_knowable)
    knowable = key_hits + sum(bool(v) for v in nonsupporting_knowable)
    recall = key_hits / len(key_knowable)
    precision = key_hits / knowable if knowable else 0.0
    return PRF(recall, precision, f1_score(precision, recall))


def cao_recall(knowable: Sequence[bool]) -> float | None:
    """Share of clear atomic opinions knowable from the opinion summary (Eq. 8)."""
    if not knowable:
        return None
    return sum(bool(v) for v in knowable) / len(knowable)


def overall_gm(background_f1: float | None, cao: float | None) -> float | None:
    """OP_GM = sqrt(background F1 x CAO recall) (Eqs. 9-10)."""
    if background_f1 is None or cao is None:
        return None
    return math.sqrt(background_f1 * cao)


def error_proportions(types: Sequence[str]) -> dict[str, float] | None:
    """Share of each error type among classified errors; ``None`` when there is none."""
    if not types:
        return None
    return {code: sum(1 for t in types if t == code) / len(types) for code in ERROR_TYPES}


def score_summary(
    pattern: str,
    *,
    system_failed: bool = False,
    background: Sequence[int] | None,
    supporting: set[int],
    nonsupporting: set[int],
    fact_verdicts: list[tuple[str, bool | None, str]] | None,
    opinion_verdicts: list[tuple[bool | None, str]] | None,
    error_checks: list[tuple[str | None, str]],
) -> dict[str, Any]:
    """Every metric of one summary (one sample, pattern and round), with its outcome.

    ``fact_verdicts`` holds ``(kind, knowable, call status)`` per scored fact and
    ``opinion_verdicts`` ``(knowable, call status)`` per clear atomic opinion (``None``
    = the opinion was not given, e.g. a predictions file without opinions);
    ``error_checks`` ``(error type, call status)`` per classified opinion. With
    ``system_failed`` the caller passes the inputs of an empty summary (nothing
    retrieved, nothing knowable), so each score is 0 wherever it is defined.
    """
    outcome: dict[str, str] = {}
    failed = "system_failed" if system_failed else "ok"
    prf: PRF | None = None
    retrieval: dict[str, int] | None = None
    if pattern == "ebs":
        prf = bsp_scores(background or [], supporting, nonsupporting)
        outcome["background"] = failed if prf else "undefined"
        paragraphs = supporting | nonsupporting
        retrieval = {"retrieved": len(set(background or []) & paragraphs), "paragraphs": len(paragraphs)}
    elif fact_verdicts is None:
        outcome["background"] = "not_given"
    else:
        problem = judge_failure(status for _, _, status in fact_verdicts)
        if problem:
            outcome["background"] = problem
        else:
            prf = kbsaf_scores(
                [bool(v) for k, v, _ in fact_verdicts if k == "key"],
                [bool(v) for k, v, _ in fact_verdicts if k == "nonsupporting"],
            )
            outcome["background"] = failed if prf else "undefined"
    cao = None
    if opinion_verdicts is None:
        outcome["cao_recall"] = "not_given"
    else:
        problem = judge_failure(status for _, status in opinion_verdicts)
        if problem:
            outcome["cao_recall"] = problem
        else:
            cao = cao_recall([bool(v) for v, _ in opinion_verdicts])
            outcome["cao_recall"] = failed if cao is not None else "undefined"
    gm = overall_gm(prf.f1 if prf else None, cao)
    if gm is not None:
        outcome["op_gm"] = failed
    else:  # the reason of the missing part; a judge failure first, it is the one to fix
        parts = [o for o in (outcome["background"], outcome["cao_recall"]) if o not in ("ok", "system_failed")]
        outcome["op_gm"] = next((o for o in parts if o.startswith("judge_")), parts[0])
    classified = [t for t, status in error_checks if status == "ok" and t is not None]
    errors = {"types": classified, **{k: sum(1 for _, s in error_checks if s == k) for k in _JUDGE}}
    return {
        "background": prf.as_dict() if prf else None,
        "cao_recall": cao,
        "op_gm": gm,
        "outcome": outcome,
        "system_failed": system_failed,
        "errors": errors,
        "error_proportions": error_proportions(classified),
        "retrieval": retrieval,
    }


def retrieval_ratio(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Share of the sample's paragraphs an EBS retrieves (the paper's Fig. 2), macro over
    samples and pooled over all paragraphs; failed summaries retrieve nothing."""
    counts = [row["retrieval"] for row in rows if row.get("retrieval") and row["retrieval"]["paragraphs"]]
    total = sum(c["paragraphs"] for c in counts)
    return {
        "macro": fmean(c["retrieved"] / c["paragraphs"] for c in counts) if counts else None,
        "pooled": sum(c["retrieved"] for c in counts) / total if total else None,
        "n": len(counts),
    }


def macro(values: Iterable[float | None], outcomes: Iterable[str] | None = None) -> dict[str, Any]:
    """Macro average over samples with a value, and how many samples came out each way.

    ``ci`` is the mean's 95% bootstrap interval over samples (``None`` under two).
    ``n`` counts the samples in the mean, zeros of failed summaries included
    (``system_failed`` says how many); judge failures, undefined and not-given metrics
    are left out and counted by kind.
    """
    values = list(values)
    outcomes = list(outcomes) if outcomes is not None else ["ok" if v is not None else "undefined" for v in values]
    present = [v for v in values if v is not None]
    cell: dict[str, Any] = {"mean": fmean(present) if present else None, "n": len(present), "ci": interval(present)}
    for kind in OUTCOMES[1:]:
        cell[kind] = sum(1 for o in outcomes if o == kind)
    return cell


HEADLINE = ("recall", "precision", "f1", "cao_recall", "op_gm")


def aggregate_scores(per_sample: list[dict[str, dict[str, dict[str, Any]]]]) -> dict[str, Any]:
    """Macro averages per pattern and round from ``[{pattern: {round: score_summary()}}]``.

    A sample without a row for a (pattern, round) that others have (it produced no
    summary there) counts as a failed summary: zeros.
    """
    out: dict[str, Any] = {}
    order = {"ebs": 0, "abs": 1}
    patterns = sorted({p for s in per_sample for p in s}, key=lambda p: (order.get(p, 2), p))
    for pattern in patterns:
        rounds = sorted({int(r) for s in per_sample for r in s.get(pattern, {})})
        by_round: dict[str, Any] = {}
        for r in rounds:
            rows = [s.get(pattern, {}).get(str(r)) or _absent() for s in per_sample]
            bg = [row["background"] for row in rows]
            table = {
                key: macro((b[key] if b else None for b in bg), (row["outcome"]["background"] for row in rows))
                for key in ("recall", "precision", "f1")
            }
            for key in ("cao_recall", "op_gm"):
                table[key] = macro((row[key] for row in rows), (row["outcome"][key] for row in rows))
            table["errors"] = error_table(rows)
            if pattern == "ebs":
                table["retrieval_ratio"] = retrieval_ratio(rows)
            by_round[str(r)] = table
        out[pattern] = {"rounds": by_round, "change": _change(by_round)}
    return out


def _absent() -> dict[str, Any]:
    zero = {"recall": 0.0, "precision": 0.0, "f1": 0.0}
    failed = {k: "system_failed" for k in ("background", "cao_recall", "op_gm")}
    errors = {"types": [], **{k: 0 for k in _JUDGE}}
    return {"background": zero, "cao_recall": 0.0, "op_gm": 0.0, "outcome": failed, "system_failed": True,
            "errors": errors, "error_proportions": None, "retrieval": None}


def error_table(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Error-type shares two ways, both reported and labelled.

    ``macro``: the mean over samples (with at least one classified error) of each
    sample's shares, every sample weighing the same as in the paper's Table 1;
    ``pooled``: all classified errors of all samples counted together.
    """
    props = [row["error_proportions"] for row in rows if row["error_proportions"] is not None]
    types = [t for row in rows for t in row["errors"]["types"]]
    return {
        "macro": {code: fmean(p[code] for p in props) if props else None for code in ERROR_TYPES},
        "pooled": error_proportions(types) or {code: None for code in ERROR_TYPES},
        "samples": len(props),
        "classified": len(types),
        **{f"judge_{k}": sum(row["errors"][k] for row in rows) for k in _JUDGE},
        "system_failed": sum(1 for row in rows if row["system_failed"]),
    }


def _change(by_round: dict[str, Any]) -> dict[str, Any] | None:
    """Last round minus round 0 for each headline metric (the paper's arrows)."""
    if "0" not in by_round or len(by_round) < 2:
        return None
    first, last = by_round["0"], by_round[max(by_round, key=int)]

    def diff(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else b - a

    out: dict[str, Any] = {key: diff(first[key]["mean"], last[key]["mean"]) for key in HEADLINE}
    for way in ("macro", "pooled"):
        out[way] = {code: diff(first["errors"][way][code], last["errors"][way][code]) for code in ERROR_TYPES}
    return out


def win_rate(winners: Sequence[str | None], statuses: Sequence[str] | None = None) -> dict[str, Any]:
    """Gold win rate of the EBS feedback judgement; unreadable judgements are left out
    and counted by call status (``unreadable`` is their total)."""
    read = [w for w in winners if w is not None]
    gold = sum(1 for w in read if w == "gold")
    if statuses is None:
        statuses = ["ok" if w is not None else "unparsed" for w in winners]
    failed = [s for s in statuses if s != "ok"]
    return {
        "gold_win_rate": gold / len(read) if read else None,
        "judged": len(read),
        "gold_wins": gold,
        "unreadable": len(winners) - len(read),
        **{f"judge_{k}": failed.count(k) for k in _JUDGE},
    }


def sample_scores(
    *,
    supporting: set[int],
    nonsupporting: set[int],
    n_opinions: int,
    key_facts: int,
    summaries: list[dict[str, Any]],
    fact_checks: list[dict[str, Any]],
    opinion_checks: list[dict[str, Any]],
    error_checks: list[dict[str, Any]],
    fact_gaps: Sequence[int] = (),
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{pattern: {round: score_summary(...)}}`` for one sample from the graph's checks.

    A summary whose status is not readable (``unparsed``, ``truncated``, ``skipped``
    after a failed round, ``missing`` from a predictions file) is the system's failure
    and is scored as an empty one. An empty opinion or background text is scored as
    what it is: nothing knowable.
    """
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for summary in summaries:
        pattern, r = summary["pattern"], summary["round"]
        failed = summary.get("status") not in READABLE_SUMMARY
        mine = lambda rows: [x for x in rows if x["pattern"] == pattern and x["round"] == r]  # noqa: E731
        background = None if failed else summary.get("background")
        facts: list[tuple[str, bool | None, str]] | None = None
        if pattern == "abs":
            if failed or not (background or "").strip():
                facts = [("key", False, "ok")] * key_facts
            else:
                facts = [
                    (kind, ok, c["call"]["status"]) for c in mine(fact_checks) for kind, ok in zip(c["kinds"], c["knowable"])
                ]
                if fact_gaps:  # some paragraph's facts are unknown (decomposition failed)
                    facts.append(("key", None, "unparsed"))
        opinion = None if failed else summary.get("opinion")
        opinions: list[tuple[bool | None, str]] | None
        if failed or (opinion is not None and not opinion.strip()):
            opinions = [(False, "ok")] * n_opinions
        elif opinion is None:
            opinions = None
        else:
            by_index = {c["opinion"]: (c["knowable"], c["call"]["status"]) for c in mine(opinion_checks)}
            opinions = [by_index.get(i, (None, "unparsed")) for i in range(n_opinions)]
        result = score_summary(
            pattern,
            system_failed=failed,
            background=background if pattern == "ebs" else None,
            supporting=supporting,
            nonsupporting=nonsupporting,
            fact_verdicts=facts,
            opinion_verdicts=opinions,
            error_checks=[] if failed else [(c["error_type"], c["call"]["status"]) for c in mine(error_checks)],
        )
        result["summary_status"] = summary.get("status")
        out.setdefault(pattern, {})[str(r)] = result
    return out
