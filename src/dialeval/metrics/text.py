"""Classic reference-based text metrics: BLEU, ROUGE-L, METEOR, SPICE, BERTScore, BARTScore.

Pure functions over lists of system answers and references; no model calls, nothing
downloaded. A metric whose resources are missing (METEOR without NLTK's WordNet data,
SPICE without Java and its jar, BERTScore or BARTScore without a local model) is
reported as unavailable with the reason, never 0.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
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


def bertscore_unavailable(model_path: str | None) -> str | None:
    """Why BERTScore cannot run here, or ``None``."""
    if model_path is None:
        return "no local model given (option bertscore_model)"
    if not Path(model_path).is_dir():
        return f"model folder {model_path} does not exist"
    try:
        import bert_score  # noqa: F401
    except ImportError:
        return "the bert-score package is not installed"
    return None


def bertscore_scores(
    hypotheses: Sequence[str], references: Sequence[str], model_path: str, num_layers: int | None = None
) -> list[float]:
    """BERTScore F1 per answer with a model already on disk (nothing is fetched from a hub)."""
    import bert_score

    _check(hypotheses, references)
    _, _, f1 = bert_score.score(list(hypotheses), list(references), model_type=model_path, num_layers=num_layers, device="cpu")
    return [float(x) for x in f1]


def bertscore(
    hypotheses: Sequence[str], references: Sequence[str], model_path: str | None = None, num_layers: int | None = None
) -> MetricValue:
    """Mean BERTScore F1 with a local model folder; unavailable otherwise."""
    reason = bertscore_unavailable(model_path)
    if reason is not None:
        return MetricValue("BERTScore", None, len(hypotheses), unavailable=reason)
    scores = bertscore_scores(hypotheses, references, model_path, num_layers)  # type: ignore[arg-type]
    return MetricValue("BERTScore", fmean(scores) if scores else None, len(scores))


# ---------------------------------------------------------------- SPICE

SPICE_ENV = "DIALEVAL_SPICE_JAR"


def spice_unavailable(jar: str | None, java: str = "java") -> str | None:
    """Why SPICE cannot run here, or ``None`` when Java, the jar and its CoreNLP jars are present.

    SPICE (Anderson et al. 2016) is a Java program: ``spice-1.0.jar`` with Stanford
    CoreNLP and its models in the ``lib/`` folder beside it (what its own setup script
    downloads). dialeval downloads none of it.
    """
    if jar is None:
        return f"no SPICE jar given (option spice_jar or environment variable {SPICE_ENV})"
    if shutil.which(java) is None:
        return f"Java ({java}) is not installed"
    path = Path(jar)
    if not path.is_file():
        return f"SPICE jar {jar} does not exist"
    lib = path.parent / "lib"
    if not list(lib.glob("stanford-corenlp-*-models.jar")):
        return f"Stanford CoreNLP models (stanford-corenlp-*-models.jar) are missing from {lib}"
    return None


def resolve_spice_jar(option: str | None) -> str | None:
    """The jar named by the option, else by the environment variable."""
    return option or os.environ.get(SPICE_ENV) or None


def spice_scores(hypotheses: Sequence[str], references: Sequence[str], jar: str, java: str = "java") -> list[float]:
    """SPICE F-score per answer, computed by the SPICE jar in one batch (``-subset -silent``).

    An empty answer scores 0 without being sent (SPICE cannot parse it).
    """
    _check(hypotheses, references)
    out = [0.0] * len(hypotheses)
    todo = [i for i, h in enumerate(hypotheses) if h.strip() and references[i].strip()]
    if not todo:
        return out
    with tempfile.TemporaryDirectory(prefix="dialeval-spice-") as tmp:
        given, got = Path(tmp) / "input.json", Path(tmp) / "output.json"
        given.write_text(json.dumps([{"image_id": i, "test": hypotheses[i], "refs": [references[i]]} for i in todo]))
        subprocess.run(
            [java, "-jar", "-Xmx8G", str(jar), str(given), "-out", str(got), "-subset", "-silent"],
            check=True, cwd=str(Path(jar).parent), capture_output=True,
        )
        for row in json.loads(got.read_text()):
            f = row["scores"]["All"]["f"]
            out[int(row["image_id"])] = 0.0 if f is None or f != f else float(f)  # NaN: nothing to match
    return out


def spice(hypotheses: Sequence[str], references: Sequence[str], jar: str | None = None, java: str = "java") -> MetricValue:
    """Mean SPICE F-score over answers, in 0-1; unavailable (not 0) without Java and the jar."""
    reason = spice_unavailable(jar, java)
    if reason is not None:
        return MetricValue("SPICE", None, len(hypotheses), unavailable=reason)
    scores = spice_scores(hypotheses, references, jar, java)  # type: ignore[arg-type]
    if not scores:
        return MetricValue("SPICE", None, 0, unavailable="no answers")
    return MetricValue("SPICE", fmean(scores), len(scores))


# ---------------------------------------------------------------- BARTScore


def bartscore_unavailable(model_path: str | None) -> str | None:
    """Why BARTScore cannot run here, or ``None`` when the local model folder and transformers are present."""
    if model_path is None:
        return "no local BART model given (option bartscore_model)"
    if not Path(model_path).is_dir():
        return f"model folder {model_path} does not exist"
    try:
        import transformers  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return "transformers and torch are not installed (pip install 'dialeval[local]')"
    return None


def bartscore_scores(
    hypotheses: Sequence[str], references: Sequence[str], model_path: str, direction: str = "F", batch_size: int = 8
) -> list[float]:
    """BARTScore (Yuan et al. 2021) per answer: mean log-likelihood per target token under BART.

    ``P`` scores the answer given the reference, ``R`` the reference given the answer,
    ``F`` is their mean (the paper's reference-based F score). Higher is better; values
    are negative log-probabilities, not in 0-1.
    """
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    _check(hypotheses, references)
    if direction not in ("P", "R", "F"):
        raise ValueError("direction is P, R or F")
    tokenizer = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
    model = AutoModelForSeq2SeqLM.from_pretrained(model_path, local_files_only=True).eval()

    def one_way(sources: Sequence[str], targets: Sequence[str]) -> list[float]:
        scores: list[float] = []
        for start in range(0, len(sources), batch_size):
            src = tokenizer(list(sources[start : start + batch_size]), return_tensors="pt", padding=True, truncation=True)
            tgt = tokenizer(list(targets[start : start + batch_size]), return_tensors="pt", padding=True, truncation=True)
            labels = tgt["input_ids"]
            with torch.no_grad():
                logits = model(input_ids=src["input_ids"], attention_mask=src["attention_mask"], labels=labels).logits
            logp = torch.log_softmax(logits, dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)
            mask = tgt["attention_mask"].to(logp.dtype)
            scores += ((logp * mask).sum(dim=1) / mask.sum(dim=1)).tolist()
        return scores

    if direction == "P":
        return one_way(references, hypotheses)
    if direction == "R":
        return one_way(hypotheses, references)
    p, r = one_way(references, hypotheses), one_way(hypotheses, references)
    return [(a + b) / 2 for a, b in zip(p, r)]


def bartscore(hypotheses: Sequence[str], references: Sequence[str], model_path: str | None = None) -> MetricValue:
    """Mean BARTScore (F) over answers with a local model; unavailable otherwise."""
    reason = bartscore_unavailable(model_path)
    if reason is not None:
        return MetricValue("BARTScore", None, len(hypotheses), unavailable=reason)
    scores = bartscore_scores(hypotheses, references, model_path)  # type: ignore[arg-type]
    if not scores:
        return MetricValue("BARTScore", None, 0, unavailable="no answers")
    return MetricValue("BARTScore", fmean(scores), len(scores), note="mean log-likelihood per token (not in 0-1)")


def classic_metrics(
    hypotheses: Sequence[str],
    references: Sequence[str],
    *,
    bertscore_model: str | None = None,
    wordnet: Any | None = None,
    spice_jar: str | None = None,
    bartscore_model: str | None = None,
) -> list[MetricValue]:
    """The paper's classic and similarity-based columns (Tables 5 and 6) for one system."""
    return [
        corpus_bleu(hypotheses, references),
        rouge_l(hypotheses, references),
        meteor(hypotheses, references, wordnet=wordnet),
        spice(hypotheses, references, spice_jar),
        bertscore(hypotheses, references, bertscore_model),
        bartscore(hypotheses, references, bartscore_model),
    ]


def per_answer_scores(
    hypotheses: Sequence[str],
    references: Sequence[str],
    *,
    wordnet: Any | None = None,
    spice_jar: str | None = None,
    bertscore_model: str | None = None,
    bartscore_model: str | None = None,
) -> tuple[dict[str, list[float]], dict[str, str]]:
    """Every available metric's score per answer (for correlations), and why the others are unavailable.

    BLEU is smoothed sentence BLEU here: corpus BLEU has no per-answer value.
    """
    scores: dict[str, list[float]] = {
        "BLEU": sentence_bleu(hypotheses, references),
        "ROUGE-L": rouge_l_scores(hypotheses, references),
    }
    missing: dict[str, str] = {}
    if wordnet is not None:
        scores["METEOR"] = meteor_scores(hypotheses, references, wordnet)
    else:
        missing["METEOR"] = WORDNET_MISSING
    checks = {
        "SPICE": (spice_unavailable(spice_jar), lambda: spice_scores(hypotheses, references, spice_jar)),  # type: ignore[arg-type]
        "BERTScore": (bertscore_unavailable(bertscore_model), lambda: bertscore_scores(hypotheses, references, bertscore_model)),  # type: ignore[arg-type]
        "BARTScore": (bartscore_unavailable(bartscore_model), lambda: bartscore_scores(hypotheses, references, bartscore_model)),  # type: ignore[arg-type]
    }
    for name, (reason, compute) in checks.items():
        if reason is None:
            scores[name] = compute()
        else:
            missing[name] = reason
    return scores, missing
