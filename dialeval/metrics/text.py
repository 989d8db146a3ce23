"""Classic reference-based text metrics: BLEU, ROUGE-L, METEOR, BERTScore (when local).

Pure functions over lists of system answers and references; no model calls, nothing
downloaded. A metric whose resources are missing (METEOR without NLTK's WordNet data,
BERTScore without a local model) is reported as unavailable with the reason, never 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from statistics import fmean
from typing import Any, Sequence

_WORD = re.compile(r"\w+|[^\w\s]")

WORDNET_MISSING = (
    "NLTK's WordNet data is not installed (nltk.corpus.wordnet); dialeval never downloads it at run time: "
    "`make setup` (scripts/install_wordnet.py) lays it out from Debian's WordNet packages"
)


@dataclass(frozen=True)
class MetricValue:
    """A corpus-level score in 0-1, or ``None`` with the reason it could not be computed."""

    name: str
    value: float | None
    n: int
    unavailable: str | None = None
    note: str | None = None


def _check(hypotheses: Sequence[str], references: Sequence[str]) -> None:
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} answers but {len(references)} references")


def tokens(text: str) -> list[str]:
    """Lower-cased words and punctuation marks; needs no NLTK tokenizer data."""
    return _WORD.findall(text.lower())


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> MetricValue:
    """Corpus BLEU-4 (sacrebleu, one reference per answer, its default 13a tokenizer), in 0-1."""
    import sacrebleu

    _check(hypotheses, references)
    if not hypotheses:
        return MetricValue("BLEU", None, 0, unavailable="no answers")
    metric = sacrebleu.BLEU()
    score = metric.corpus_score(list(hypotheses), [list(references)])
    return MetricValue("BLEU", score.score / 100, len(hypotheses), note=str(metric.get_signature()))


def sentence_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> list[float]:
    """Smoothed sentence BLEU (sacrebleu, exp smoothing) per answer, in 0-1, for correlations."""
    import sacrebleu

    _check(hypotheses, references)
    metric = sacrebleu.BLEU(effective_order=True)
    return [metric.sentence_score(h, [r]).score / 100 for h, r in zip(hypotheses, references)]


def rouge_l_scores(hypotheses: Sequence[str], references: Sequence[str]) -> list[float]:
    """ROUGE-L F-measure per answer (rouge-score, no stemming)."""
    from rouge_score import rouge_scorer

    _check(hypotheses, references)
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    return [scorer.score(r, h)["rougeL"].fmeasure for h, r in zip(hypotheses, references)]


def rouge_l(hypotheses: Sequence[str], references: Sequence[str]) -> MetricValue:
    """Mean ROUGE-L F-measure over answers, in 0-1."""
    scores = rouge_l_scores(hypotheses, references)
    if not scores:
        return MetricValue("ROUGE-L", None, 0, unavailable="no answers")
    return MetricValue("ROUGE-L", fmean(scores), len(scores))


def load_wordnet() -> tuple[Any | None, str | None]:
    """NLTK's WordNet reader if its data is installed, else ``(None, reason)``."""
    from nltk.corpus import wordnet

    try:
        wordnet.synsets("dog")
    except LookupError:
        return None, WORDNET_MISSING
    return wordnet, None


def meteor_scores(hypotheses: Sequence[str], references: Sequence[str], wordnet: Any) -> list[float]:
    """METEOR (nltk) per answer; an empty answer or reference scores 0 (nothing can match)."""
    from nltk.translate.meteor_score import single_meteor_score

    _check(hypotheses, references)
    out = []
    for h, r in zip(hypotheses, references):
        ht, rt = tokens(h), tokens(r)
        out.append(single_meteor_score(rt, ht, wordnet=wordnet) if ht and rt else 0.0)
    return out


def meteor(hypotheses: Sequence[str], references: Sequence[str], wordnet: Any | None = None) -> MetricValue:
    """Mean METEOR over answers, in 0-1; unavailable (not 0) without WordNet data.

    ``wordnet`` may be any object with NLTK's ``synsets(word)`` method; by default
    NLTK's own corpus reader is used when its data is installed.
    """
    if wordnet is None:
        wordnet, reason = load_wordnet()
        if wordnet is None:
            return MetricValue("METEOR", None, len(hypotheses), unavailable=reason)
    scores = meteor_scores(hypotheses, references, wordnet)
    if not scores:
        return MetricValue("METEOR", None, 0, unavailable="no answers")
    return MetricValue("METEOR", fmean(scores), len(scores))


def bertscore(
    hypotheses: Sequence[str], references: Sequence[str], model_path: str | None = None, num_layers: int | None = None
) -> MetricValue:
    """Mean BERTScore F1 with a model already on disk; unavailable otherwise.

    Needs the ``bert-score`` package and a local model folder (``model_path``);
    nothing is fetched from a hub.
    """
    from pathlib import Path

    if model_path is None:
        return MetricValue("BERTScore", None, len(hypotheses), unavailable="no local model given (option bertscore_model)")
    if not Path(model_path).is_dir():
        return MetricValue("BERTScore", None, len(hypotheses), unavailable=f"model folder {model_path} does not exist")
    try:
        import bert_score
    except ImportError:
        return MetricValue("BERTScore", None, len(hypotheses), unavailable="the bert-score package is not installed")
    _check(hypotheses, references)
    _, _, f1 = bert_score.score(list(hypotheses), list(references), model_type=model_path, num_layers=num_layers, device="cpu")
    return MetricValue("BERTScore", float(f1.mean()), len(hypotheses))


def classic_metrics(
    hypotheses: Sequence[str], references: Sequence[str], *, bertscore_model: str | None = None, wordnet: Any | None = None
) -> list[MetricValue]:
    """The paper's Table 5 classic columns for one system."""
    return [
        corpus_bleu(hypotheses, references),
        rouge_l(hypotheses, references),
        meteor(hypotheses, references, wordnet=wordnet),
        bertscore(hypotheses, references, bertscore_model),
    ]
