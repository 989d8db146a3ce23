"""VDAct scores: per-system means (raw and 0-1), question types, human majority votes.

Question types follow the paper's keyword rules (its appendix on performance per
question type): T-SEQ, T-FRQ, EXP, QNT, and binary questions/answers.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from dialeval.metrics.correlation import kendall_tau_b, permutation_test
from dialeval.metrics.intervals import interval
from dialeval.metrics.scores import mean_or_none, scale_to_unit
from dialeval.metrics.text import per_answer_scores

# score dimension -> (lowest, highest); 0-1 scaling is (s - low) / (high - low)
SCALES: dict[str, tuple[int, int]] = {"rating": (1, 3), "LLM-Acc": (0, 1), "LLM-Rel": (0, 5)}
JUDGE_FAILURES = ("unparsed", "truncated", "error")
UNREADABLE = ("unparsed", "truncated")  # the judge answered, but no score can be read

QUESTION_TYPES = ("T-SEQ", "T-FRQ", "EXP", "QNT", "Binary-Q", "Binary-A", "Binary-QA")

_SEQ = re.compile(r"\b(first|last|before|after|next)\b")
_FRQ = re.compile(r"\bhow (long|frequently|often)\b")
_QNT = re.compile(r"\bhow (many|much)\b")
_HOW = re.compile(r"\bhow\b(?! (many|much|long|frequently|often)\b)")
_WHY = re.compile(r"\bwhy\b")
_BINARY_Q = re.compile(r"^(is|are|was|were|do|does|did|has|have|had|can|could|will|would|should)\b")
_BINARY_A = re.compile(r"^(yes|no)\b")


def question_types(question: str, reference: str) -> list[str]:
    """The keyword-rule types of one turn (a turn may have several, or none)."""
    q = question.strip().lower()
    a = reference.strip().lower()
    types = []
    if _SEQ.search(q):
        types.append("T-SEQ")
    if _FRQ.search(q):
        types.append("T-FRQ")
    if _HOW.search(q) or _WHY.search(q):
        types.append("EXP")
    if _QNT.search(q):
        types.append("QNT")
    binary_q, binary_a = bool(_BINARY_Q.search(q)), bool(_BINARY_A.search(a))
    if binary_q:
        types.append("Binary-Q")
    if binary_a:
        types.append("Binary-A")
    if binary_q and binary_a:
        types.append("Binary-QA")
    return types


def majority_vote(scores: Sequence[int] | None) -> int | None:
    """The score most annotators gave; ``None`` when no single score leads (all disagree)."""
    if not scores:
        return None
    ranked = Counter(scores).most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]


def score_summary(
    turns: Sequence[tuple[float | None, str]], low: float, high: float, unreadable_as: float | None = None
) -> dict[str, Any]:
    """Means of one score dimension, with n and every kind of failure beside them.

    ``turns`` are (score, status) pairs. Scored turns are those the judge read (``ok``)
    and those the system left unanswered (``no_answer``, already scored lowest: the
    system's failure). The judge's failures are counted apart: ``unparsed`` and
    ``truncated`` (it answered, unreadably) and ``error`` (no answer at all). The valid
    mean leaves them out; the headline ``mean`` also counts each unreadable answer as
    ``unreadable_as`` when the authors' released scoring has such a rule (errors never).
    """
    counts = Counter(status for _, status in turns)
    valid = [float(s) for s, _ in turns if s is not None]
    unreadable = sum(counts[k] for k in UNREADABLE)
    headline = valid + ([float(unreadable_as)] * unreadable if unreadable_as is not None else [])
    mean, valid_mean = mean_or_none(headline), mean_or_none(valid)
    ci = interval(headline)  # over turns, the units of this benchmark
    return {
        "turns": len(turns),
        "judged": counts["ok"],
        "no_answer": counts["no_answer"],
        **{k: counts[k] for k in JUDGE_FAILURES},
        "other": len(turns) - len(valid) - sum(counts[k] for k in JUDGE_FAILURES),
        "unreadable_as": unreadable_as,
        "n": len(headline),
        "mean": mean,
        "mean_scaled": None if mean is None else scale_to_unit(mean, low, high),
        "ci": ci,
        "ci_scaled": None if ci is None else [scale_to_unit(ci[0], low, high), scale_to_unit(ci[1], low, high)],
        "valid_n": len(valid),
        "valid_mean": valid_mean,
        "valid_mean_scaled": None if valid_mean is None else scale_to_unit(valid_mean, low, high),
    }


def headline_scores(turns: Sequence[tuple[float | None, str]], unreadable_as: float | None) -> list[float | None]:
    """Per-turn scores as the headline counts them: unreadable answers as the rule says, else ``None``."""
    return [
        s if s is not None or unreadable_as is None or status not in UNREADABLE else float(unreadable_as)
        for s, status in turns
    ]


def type_breakdown(
    turns: Sequence[tuple[list[str], float | None, str]], low: float, high: float, unreadable_as: float | None = None
) -> dict[str, dict[str, Any]]:
    """Per question type: scores of turns of that type, and of all other turns ("All-<type>")."""
    out: dict[str, dict[str, Any]] = {}
    for kind in QUESTION_TYPES:
        inside = [(s, st) for types, s, st in turns if kind in types]
        outside = [(s, st) for types, s, st in turns if kind not in types]
        out[kind] = {
            "type": score_summary(inside, low, high, unreadable_as),
            "others": score_summary(outside, low, high, unreadable_as),
        }
    return out


def human_agreement(
    item_ids: list[str],
    turns: list[dict[str, Any]],
    dim: str,
    unreadable_as: float | None,
    *,
    baselines: dict[str, dict[str, float | None]],
    permutations: int,
    seed: int,
    wordnet: Any = None,
    spice_jar: str | None = None,
    bertscore_model: str | None = None,
    bartscore_model: str | None = None,
) -> dict[str, Any] | None:
    """Judge vs human majority vote (Kendall tau-b), and a permutation test against the best other metric.

    ``turns`` are turn records (scores, status, human, candidate, reference) and
    ``item_ids`` the item of each; ``baselines`` are other runs' scores per
    ``<item id>/<turn>``, which join the model-free metrics as candidates.

    As in the paper: turns whose annotators all disagree are left out; the judge's
    scores are the headline ones (unreadable replies as the released scoring rates
    them); the test compares the judge with whichever other metric has the highest tau
    on the same turns (10,000 permutations by default).
    """
    rated = [(i, t) for i, t in zip(item_ids, turns) if t.get("human")]
    if not rated:
        return None
    kept_ids = [i for i, t in rated if majority_vote(t["human"]) is not None]
    kept = [(t, m) for _, t in rated if (m := majority_vote(t["human"])) is not None]
    pairs = [((t["scores"] or {}).get(dim), t["status"]) for t, _ in kept]
    judge = headline_scores(pairs, unreadable_as)
    valid = [s for s, _ in pairs]
    human = [m for _, m in kept]
    corr = kendall_tau_b(judge, human)
    valid_corr = kendall_tau_b(valid, human)
    others, unavailable = per_answer_scores(
        [t["candidate"] for t, _ in kept], [t["reference"] for t, _ in kept], wordnet=wordnet,
        spice_jar=spice_jar, bertscore_model=bertscore_model, bartscore_model=bartscore_model,
    )
    for name, scores in baselines.items():
        others[name] = [scores.get(f"{i}/{t['turn_num']}") for i, (t, _) in zip(kept_ids, kept)]  # type: ignore[misc]
    taus = {name: kendall_tau_b(values, human).tau for name, values in others.items()}
    ranked = sorted(((tau, name) for name, tau in taus.items() if tau is not None), reverse=True)
    out: dict[str, Any] = {
        "rated_turns": len(rated),
        "excluded_no_majority": len(rated) - len(kept),
        "excluded_judge_failure": sum(1 for s in judge if s is None),
        "n": corr.n,
        "kendall_tau_b": corr.tau,
        "p_value": corr.p_value,
        "reason": corr.reason,
        "valid_only": {"n": valid_corr.n, "kendall_tau_b": valid_corr.tau},
        "other_metrics": taus,
        "unavailable": unavailable,
        "best_other": None,
    }
    if ranked:
        best_tau, best = ranked[0]
        test = permutation_test(judge, others[best], human, permutations=permutations, seed=seed)
        out.update(best_other=best, best_other_tau=best_tau, difference=test.difference, vs_best_p_value=test.p_value,
                   permutations=test.permutations)
    return out
