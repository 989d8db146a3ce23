"""SPICE and BARTScore: available only with what they need on disk, unavailable (with the reason) otherwise."""

from __future__ import annotations

import math
import stat
import sys
from pathlib import Path

import pytest

from dialeval.metrics.text import (
    bartscore,
    bartscore_scores,
    bartscore_unavailable,
    per_answer_scores,
    resolve_spice_jar,
    spice,
    spice_scores,
    spice_unavailable,
)

FAKE_JAVA = """#!{python}
# Stands in for `java -jar spice-1.0.jar IN -out OUT -subset -silent`: F = share of shared words.
import json, sys
args = sys.argv[1:]
given, out = args[3], args[args.index("-out") + 1]
rows = []
for row in json.load(open(given)):
    test, ref = set(row["test"].lower().split()), set(row["refs"][0].lower().split())
    f = float("nan") if row["test"] == "nothing to parse" else len(test & ref) / len(test | ref)
    rows.append({{"image_id": row["image_id"], "scores": {{"All": {{"f": f, "pr": f, "re": f}}}}}})
json.dump(rows, open(out, "w"))
open(out + ".seen", "w").write(json.dumps([r["test"] for r in json.load(open(given))]))
"""


def _spice_install(tmp_path: Path, models: bool = True) -> tuple[Path, Path]:
    jar = tmp_path / "spice" / "spice-1.0.jar"
    (jar.parent / "lib").mkdir(parents=True)
    jar.write_bytes(b"PK")
    if models:
        (jar.parent / "lib" / "stanford-corenlp-3.6.0-models.jar").write_bytes(b"PK")
    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    java.write_text(FAKE_JAVA.format(python=sys.executable))
    java.chmod(java.stat().st_mode | stat.S_IEXEC)
    return jar, java


def test_spice_says_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.delenv("DIALEVAL_SPICE_JAR", raising=False)
    jar, java = _spice_install(tmp_path, models=False)
    assert "no SPICE jar given" in spice_unavailable(resolve_spice_jar(None))
    assert "does not exist" in spice_unavailable(str(tmp_path / "nope.jar"), java=str(java))
    assert "Java (no-such-java) is not installed" == spice_unavailable(str(jar), java="no-such-java")
    assert "CoreNLP models" in spice_unavailable(str(jar), java=str(java))
    value = spice(["a"], ["a"], None)
    assert value.value is None and "no SPICE jar given" in value.unavailable


def test_the_environment_variable_names_the_jar_when_the_option_does_not(tmp_path, monkeypatch):
    monkeypatch.setenv("DIALEVAL_SPICE_JAR", "/opt/spice/spice-1.0.jar")
    assert resolve_spice_jar(None) == "/opt/spice/spice-1.0.jar"
    assert resolve_spice_jar("/mine.jar") == "/mine.jar"  # an explicit option wins


def test_spice_runs_the_jar_once_and_reads_one_score_per_answer(tmp_path):
    jar, java = _spice_install(tmp_path)
    assert spice_unavailable(str(jar), java=str(java)) is None
    hyps = ["he opens the fridge", "", "nothing to parse", "a red cup"]
    refs = ["he opens the fridge door", "he sits", "he sits", "a blue cup"]
    scores = spice_scores(hyps, refs, str(jar), java=str(java))
    assert scores == [pytest.approx(4 / 5), 0.0, 0.0, pytest.approx(2 / 4)]  # empty: not sent; NaN: 0
    value = spice(hyps, refs, str(jar), java=str(java))
    assert value.value == pytest.approx((4 / 5 + 2 / 4) / 4) and value.unavailable is None


def _tiny_bart(folder: Path) -> Path:
    """A randomly initialised BART a few kilobytes big, with a word-level tokenizer built offline."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace
    from tokenizers.processors import TemplateProcessing

    words = "he she opens closes the fridge door sits on sofa a red blue cup".split()
    vocab = {tok: i for i, tok in enumerate(["<s>", "<pad>", "</s>", "<unk>", *words])}
    core = Tokenizer(WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = Whitespace()
    core.post_processor = TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>"
    )
    torch.manual_seed(0)
    config = transformers.BartConfig(
        vocab_size=len(vocab), d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=64,
        pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2, forced_eos_token_id=2,
    )
    model = transformers.BartForConditionalGeneration(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _log_likelihood(folder: Path, source: str, target: str) -> float:
    """Mean log-probability of the target's tokens given the source, computed one pair at a time."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    src, tgt = tok(source, return_tensors="pt"), tok(target, return_tensors="pt")
    with torch.no_grad():
        logits = model(**src, labels=tgt["input_ids"]).logits[0]
    logp = torch.log_softmax(logits, dim=-1)
    ids = tgt["input_ids"][0]
    return float(sum(logp[i, ids[i]] for i in range(len(ids))) / len(ids))


def test_bartscore_needs_a_local_model_folder(tmp_path):
    assert "no local BART model given" in bartscore_unavailable(None)
    assert "does not exist" in bartscore_unavailable(str(tmp_path / "none"))
    assert bartscore(["a"], ["b"]).value is None


def test_bartscore_averages_both_directions_and_ignores_padding(tmp_path):
    folder = _tiny_bart(tmp_path / "bart")
    assert bartscore_unavailable(str(folder)) is None
    hyps = ["he opens the fridge", "a red cup"]
    refs = ["he opens the fridge door", "she sits on the blue sofa"]  # different lengths: batches are padded
    p = bartscore_scores(hyps, refs, str(folder), direction="P")
    r = bartscore_scores(hyps, refs, str(folder), direction="R")
    f = bartscore_scores(hyps, refs, str(folder))
    for i in range(2):
        assert p[i] == pytest.approx(_log_likelihood(folder, refs[i], hyps[i]), abs=1e-4)
        assert r[i] == pytest.approx(_log_likelihood(folder, hyps[i], refs[i]), abs=1e-4)
        assert f[i] == pytest.approx((p[i] + r[i]) / 2)
        assert f[i] < 0 and math.isfinite(f[i])
    value = bartscore(hyps, refs, str(folder))
    assert value.value == pytest.approx(sum(f) / 2)


def test_per_answer_scores_list_what_is_unavailable(tmp_path):
    folder = _tiny_bart(tmp_path / "bart")
    scores, missing = per_answer_scores(["he sits"], ["he sits on the sofa"], bartscore_model=str(folder))
    assert {"BLEU", "ROUGE-L", "BARTScore"} <= set(scores) and len(scores["BARTScore"]) == 1
    assert set(missing) >= {"SPICE", "BERTScore"}
    assert "no SPICE jar given" in missing["SPICE"]
