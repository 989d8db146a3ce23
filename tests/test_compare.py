"""`dialeval compare`: two judges over the same answers, aligned unit by unit."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from scipy import stats

from dialeval.cli import main
from dialeval.report.compare import CompareError, compare_runs
from dialeval.config import RunConfig
from dialeval.metrics.agreement import agreement
from dialeval.evaluation import run
from tests.helpers import scripted

# what two judges say about questions q1..q8 (the second is stricter on q3, q5 and q8)
JUDGE_A = {1: 5, 2: 4, 3: 4, 4: 2, 5: 5, 6: 1, 7: 3, 8: 4}
JUDGE_B = {1: 5, 2: 4, 3: 2, 4: 2, 5: 4, 6: 1, 7: 3, 8: 1}


def _data(tmp_path: Path, n: int = 8) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "answers.jsonl"
    rows = [
        {"id": f"item-{k}", "question": f"What is q{k}?", "reference": f"ref {k}", "answer": f"answer {k}", "system": "bot"}
        for k in range(1, n + 1)
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _judge(scores: dict[int, int]):
    def respond(messages) -> str:
        k = int(re.search(r"What is q(\d+)\?", messages[-1].content).group(1))
        return json.dumps({"rationale": "scripted", "score": scores[k]})

    return respond


def _run(tmp_path: Path, scores: dict[int, int], run_id: str, data: Path | None = None) -> Path:
    settings, _ = scripted(respond=_judge(scores))
    config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, run_id=run_id)
    return run("answers", data or _data(tmp_path), config, progress=False).run_dir


def test_two_judges_are_aligned_item_by_item(tmp_path):
    a, b = _run(tmp_path, JUDGE_A, "judge-a"), _run(tmp_path, JUDGE_B, "judge-b")
    result = compare_runs([a, b], tmp_path / "cmp")

    (c,) = result["comparisons"]
    assert (c["dimension"], c["a"], c["b"], c["n"]) == ("score (1-5)", "judge-a", "judge-b", 8)
    x, y = [JUDGE_A[k] for k in range(1, 9)], [JUDGE_B[k] for k in range(1, 9)]
    assert c["kendall_tau_b"] == pytest.approx(stats.kendalltau(x, y, variant="b").statistic)
    assert c["exact_agreement"] == pytest.approx(5 / 8) and c["adjacent_agreement"] == pytest.approx(6 / 8)
    assert c["mean_diff"] == pytest.approx((sum(y) - sum(x)) / 8)
    assert c["ci_low"] <= c["mean_diff"] <= c["ci_high"]
    # the largest disagreement comes first: q8 (4 vs 1), then q3 (4 vs 2), then q5
    assert [d["unit"] for d in c["disagreements"]] == ["item-8", "item-3", "item-5"]

    runs = {r["label"]: r for r in result["runs"]}
    assert runs["judge-a"]["finished"] == 8 and runs["judge-b"]["calls"] == 8
    assert runs["judge-a"]["models"]["default"].startswith("openai:scripted-")

    files = {p.name for p in (tmp_path / "cmp").iterdir()}
    assert {"compare.md", "compare.json", "agreement-score-1-5.png"} <= files  # named after the dimension
    saved = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert saved["comparisons"][0]["n"] == 8 and saved["comparisons"][0]["disagreements"][0] == {"unit": "item-8", "a": 4, "b": 1}


def test_identical_scores_agree_fully_and_a_constant_shift_is_significant():
    same = agreement([1, 2, 3, 4, 5, 3], [1, 2, 3, 4, 5, 3])
    assert same["exact_agreement"] == 1.0 and same["krippendorff_alpha"] == pytest.approx(1.0)
    assert same["mean_diff"] == 0.0 and same["p_value"] == 1.0

    shifted = agreement([1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4], [2, 3, 4, 5, 2, 3, 4, 5, 2, 3, 4, 5])
    assert shifted["exact_agreement"] == 0.0 and shifted["adjacent_agreement"] == 1.0
    assert shifted["pearson"] == pytest.approx(1.0) and shifted["krippendorff_alpha"] < 1.0
    assert 0.5 < shifted["ci_low"] < 1.0 == shifted["ci_high"]  # not [1, 1]: a rare other change is not ruled out
    assert shifted["p_value"] < 0.01  # every pair moved the same way: 2 of 4096 sign patterns are as extreme
    four = agreement([3, 3, 3, 3], [2, 2, 2, 2], bound=4)  # four identical drops cannot show a change
    assert four["smallest_p"] == 0.0625 and (four["ci_low"], four["ci_high"]) == (-4.0, 4.0)


def test_undefined_statistics_are_none_not_zero():
    flat = agreement([3, 3, 3], [3, 3, 3])
    assert flat["pearson"] is None and flat["kendall_tau_b"] is None and flat["krippendorff_alpha"] is None
    continuous = agreement([0.1, 0.4, 0.8], [0.2, 0.5, 0.7])
    assert continuous["scale"] == "continuous" and continuous["exact_agreement"] is None
    assert continuous["alpha_level"] == "ordinal"  # one level everywhere, whatever the scores


def test_runs_over_partly_different_items_compare_what_they_share(tmp_path):
    a = _run(tmp_path, JUDGE_A, "all")
    b = _run(tmp_path, JUDGE_B, "first-five", data=_data(tmp_path / "small", n=5))
    (c,) = compare_runs([a, b], tmp_path / "cmp", plots=False)["comparisons"]
    assert (c["n"], c["only_a"], c["only_b"]) == (5, 3, 0)


def _fake_run(root: Path, name: str, benchmark: str, records: list[dict]) -> Path:
    run_dir = root / name
    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text(json.dumps({"benchmark": benchmark}))
    lines = [json.dumps({"id": r["id"], "status": "ok", "result": r}) for r in records]
    (run_dir / "results.jsonl").write_text("\n".join(lines) + "\n")
    return run_dir


def test_runs_of_different_benchmarks_or_with_nothing_in_common_exit_2(tmp_path, capsys):
    answers = _fake_run(tmp_path, "answers-run", "answers", [{"id": "x", "system": "s", "score": 3, "calls": []}])
    other = _fake_run(tmp_path, "kgds-run", "kgds", [])
    assert main(["compare", str(answers), str(other)]) == 2
    assert "different benchmarks" in capsys.readouterr().err

    disjoint = _fake_run(tmp_path, "disjoint", "answers", [{"id": "y", "system": "s", "score": 3, "calls": []}])
    assert main(["compare", str(answers), str(disjoint)]) == 2
    assert "share no scored unit" in capsys.readouterr().err

    with pytest.raises(CompareError, match="not a run folder"):
        compare_runs([answers, tmp_path / "nowhere"])


def test_the_cli_prints_the_report_and_names_the_folder(tmp_path, capsys):
    a, b = _run(tmp_path, JUDGE_A, "a"), _run(tmp_path, JUDGE_B, "b")
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "out"), "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "## Agreement" in out and f"Written to {tmp_path / 'out'}" in out
