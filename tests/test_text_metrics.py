"""Classic text metrics: values checked by hand or against the libraries, honest when unavailable."""

from __future__ import annotations

import pytest
import sacrebleu

from dialeval.metrics import text
from dialeval.metrics.text import bertscore, classic_metrics, corpus_bleu, meteor, rouge_l, tokens


class NoSynonyms:
    """A WordNet stand-in with no synonyms: METEOR then matches exact words and stems only."""

    def synsets(self, word: str) -> list:
        return []


def test_bleu_is_corpus_bleu_of_sacrebleu_in_unit_range():
    hyps = ["he opens the fridge and takes the milk", "she sits down"]
    refs = ["he opens the fridge and grabs the milk", "she sits on the sofa"]
    value = corpus_bleu(hyps, refs)
    assert value.value == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score / 100)
    assert corpus_bleu(["a b c d e"], ["a b c d e"]).value == pytest.approx(1.0)
    assert "tok:13a" in value.note


def test_rouge_l_by_hand():
    # LCS("the cat sat", "the cat sat down") = 3 words: P = 1, R = 3/4, F = 2PR / (P + R)
    value = rouge_l(["the cat sat"], ["the cat sat down"])
    assert value.value == pytest.approx(2 * 1 * 0.75 / 1.75)
    assert rouge_l(["", "x"], ["a b", "x"]).value == pytest.approx(0.5)


def test_meteor_with_exact_matches_only_by_hand():
    # 3 of 3 hypothesis words match 3 of 4 reference words in one chunk:
    # P = 1, R = 3/4, Fmean = P R / (0.9 P + 0.1 R), penalty = 0.5 (1 chunk / 3 matches)^3
    p, r = 1.0, 0.75
    fmean = p * r / (0.9 * p + 0.1 * r)
    expected = fmean * (1 - 0.5 * (1 / 3) ** 3)
    value = meteor(["the cat sat"], ["the cat sat down"], wordnet=NoSynonyms())
    assert value.value == pytest.approx(expected)


def test_meteor_of_an_empty_answer_is_zero():
    assert meteor([""], ["he walks"], wordnet=NoSynonyms()).value == 0.0


def test_meteor_without_wordnet_data_is_unavailable_not_zero(monkeypatch):
    monkeypatch.setattr(text, "load_wordnet", lambda: (None, text.WORDNET_MISSING))
    value = meteor(["he walks"], ["he walks"])
    assert value.value is None
    assert "WordNet" in value.unavailable


def test_bertscore_is_unavailable_without_a_local_model(tmp_path):
    assert "no local model" in bertscore(["a"], ["a"]).unavailable
    assert "does not exist" in bertscore(["a"], ["a"], str(tmp_path / "missing")).unavailable


def test_metrics_need_one_reference_per_answer():
    with pytest.raises(ValueError):
        rouge_l(["a", "b"], ["a"])


def test_tokens_need_no_nltk_data():
    assert tokens("He didn't go, did he?") == ["he", "didn", "'", "t", "go", ",", "did", "he", "?"]


def test_classic_metrics_give_the_paper_columns():
    names = [m.name for m in classic_metrics(["he walks"], ["he walks in"], wordnet=NoSynonyms())]
    assert names == ["BLEU", "ROUGE-L", "METEOR", "SPICE", "BERTScore", "BARTScore"]
