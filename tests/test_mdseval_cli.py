"""`dialeval metrics mdseval-agreement` and a dry run that prices the whole benchmark."""

from __future__ import annotations

from pathlib import Path

from dialeval.cli import main

DEMO = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "mdseval_demo.json"


def test_agreement_prints_one_row_per_aspect(capsys):
    assert main(["metrics", "mdseval-agreement", "--data", str(DEMO)]) == 0
    out = capsys.readouterr().out
    for short in ("COH", "CON", "COV-I", "COV-T", "COV-O", "BAL", "PROG", "FAI"):
        assert f"| {short} (" in out
    assert "without a label: 2 sentences" in out


def test_agreement_on_the_real_file(capsys, shared_data):
    assert main(["metrics", "mdseval-agreement", "--data", str(shared_data / "mdseval" / "MDSEval_annotations.json")]) == 0
    out = capsys.readouterr().out
    assert "198 dialogues, 990 summaries" in out and "| COV-T (coverage-text) | 990 |" in out


def test_a_limited_dry_run_prices_the_whole_file(capsys, shared_data, tmp_path):
    data = shared_data / "mdseval" / "MDSEval_annotations.json"
    code = main(
        ["run", "mdseval", "--data", str(data), "--limit", "1", "--model", "dry-run:gpt-4o-mini", "--no-progress",
         "--output-dir", str(tmp_path), "--no-cache", "--option", 'aspects=["coherence"]']
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "Spearman rho x100" in out and "Positional bias" in out and "Faithfulness" in out
    assert "Cost of the whole file (198 dialogues, extrapolated from 1 judged)" in out
