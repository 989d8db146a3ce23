"""Human side of MDSEval: aggregation as the paper does it, and inter-annotator agreement.

- scored aspects: the mean over a summary's annotators;
- sentence faithfulness: the label more than half of the annotators gave; where three
  annotators gave three labels, the paper had the sentence annotated once more, and the
  released file carries that fourth vote: by default (``tiebreak``) it decides, i.e. the
  label with the most votes wins when exactly one label has the most. The ``majority``
  rule requires more than half and leaves such sentences ``None`` (kept, left out of
  scoring, counted);
- summary faithfulness from the sentence labels by the rules of Appendix F.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from statistics import fmean, pstdev
from typing import Any, Iterable, Literal, Sequence


def human_mean(scores: Sequence[float]) -> float | None:
    """Mean over annotators; ``None`` when nobody scored."""
    return fmean(scores) if scores else None


VoteRule = Literal["tiebreak", "majority"]


def majority_label(votes: Sequence[str], rule: VoteRule = "tiebreak") -> str | None:
    """The sentence's label: more than half of the votes; with ``tiebreak`` (the default)
    also the one label with the most votes (the re-annotation's extra vote broke a
    three-way split); else ``None``."""
    if not votes:
        return None
    ranked = Counter(votes).most_common()
    label, count = ranked[0]
    if count > len(votes) / 2:
        return label
    if rule == "tiebreak" and (len(ranked) == 1 or count > ranked[1][1]):
        return label
    return None


def summary_faithfulness(sentence_labels: Sequence[str | None]) -> str | None:
    """Appendix F: faithful only if every sentence is; not faithful to both if any sentence
    is, or if image- and text-unfaithful sentences both occur; else the one unfaithful type.

    A sentence without a majority (``None``) leaves the summary undetermined (``None``)
    unless the known sentences already make it ``false-both``, which no label can undo.
    """
    known = [label for label in sentence_labels if label is not None]
    kinds = set(known) - {"true"}
    if "false-both" in kinds or {"false-image", "false-text"} <= kinds:
        result = "false-both"
    elif kinds:
        result = kinds.pop()
    else:
        result = "true"
    if result != "false-both" and len(known) < len(sentence_labels):
        return None
    return result


def pairs_within(values: Sequence[Any]) -> list[tuple[Any, Any]]:
    return list(combinations(values, 2))


def adjacent_agreement(score_lists: Iterable[Sequence[int]]) -> tuple[float | None, int]:
    """Share of annotator score pairs (within each summary) that differ by at most 1."""
    pairs = [p for scores in score_lists for p in pairs_within(scores)]
    if not pairs:
        return None, 0
    return sum(abs(a - b) <= 1 for a, b in pairs) / len(pairs), len(pairs)


def exact_agreement(label_lists: Iterable[Sequence[str]]) -> tuple[float | None, int]:
    """Share of annotator label pairs (within each sentence) that are identical."""
    pairs = [p for labels in label_lists for p in pairs_within(labels)]
    if not pairs:
        return None, 0
    return sum(a == b for a, b in pairs) / len(pairs), len(pairs)


def all_agree(label_lists: Iterable[Sequence[str]]) -> tuple[float | None, int]:
    """Share of units on which every annotator gave the same label."""
    units = [labels for labels in label_lists if len(labels) >= 2]
    if not units:
        return None, 0
    return sum(len(set(labels)) == 1 for labels in units) / len(units), len(units)


def aspect_statistics(score_lists: Sequence[Sequence[int]]) -> dict[str, Any]:
    """Annotator statistics of one aspect: counts, annotators per summary, mean, spread."""
    flat = [s for scores in score_lists for s in scores]
    rate, n_pairs = adjacent_agreement(score_lists)
    exact, _ = exact_agreement([[str(s) for s in scores] for scores in score_lists])
    return {
        "summaries": len(score_lists),
        "ratings": len(flat),
        "annotators_per_summary": fmean(len(s) for s in score_lists) if score_lists else None,
        "annotators_histogram": dict(sorted(Counter(len(s) for s in score_lists).items())),
        "mean": fmean(flat) if flat else None,
        "std": pstdev(flat) if flat else None,
        "mean_of_summary_std": fmean(pstdev(s) for s in score_lists if len(s) >= 2) if score_lists else None,
        "distribution": dict(sorted(Counter(flat).items())),
        "adjacent_agreement": rate,
        "exact_agreement": exact,
        "pairs": n_pairs,
    }


def faithfulness_statistics(vote_lists: Sequence[Sequence[str]], rule: VoteRule = "tiebreak") -> dict[str, Any]:
    """Sentence faithfulness: label counts, label found or not (by ``rule``), and agreement."""
    flat = [v for votes in vote_lists for v in votes]
    rate, n_pairs = exact_agreement(vote_lists)
    unanimous, _ = all_agree(vote_lists)
    majorities = [majority_label(votes, rule) for votes in vote_lists]
    strict = [majority_label(votes, "majority") for votes in vote_lists]
    return {
        "sentences": len(vote_lists),
        "ratings": len(flat),
        "annotators_per_summary": fmean(len(v) for v in vote_lists) if vote_lists else None,
        "annotators_histogram": dict(sorted(Counter(len(v) for v in vote_lists).items())),
        "distribution": dict(sorted(Counter(flat).items())),
        "majority_distribution": dict(sorted(Counter(m for m in majorities if m is not None).items())),
        "no_majority": sum(m is None for m in majorities),
        "tie_broken": sum(m is not None and s is None for m, s in zip(majorities, strict)),
        "exact_agreement": rate,
        "unanimous": unanimous,
        "pairs": n_pairs,
    }
