"""Two VDAct systems judged on the same dialogues: runs that align, warn and test their difference."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dialeval.benchmarks import get_benchmark
from dialeval.config import ModelSettings, RunConfig
from dialeval.report.compare import CompareError, compare_runs
from dialeval.evaluation import run
from dialeval.run.items import limit_items, natural_key
from dialeval.testing.openai_server import OpenAIStub, last_user_text

DIALOGUES = ["3333301", "1111101", "2222201", "4444401"]  # file order; sorted: 11111.., 22222.., 33333.., 44444..


def _predictions(folder: Path, system: str, order: list[str], answer: str, turns: int = 3) -> Path:
    """One system's prediction file: the same dialogues and turns, in its own order."""
    records = [
        {"id": f"{dial}-{t}", "dial_id": dial, "turn_num": t, "question": f"question {dial} {t}",
         "ref_answer": f"reference {t}", "gen_answer": f"{answer} {t}"}
        for dial in order for t in range(1, turns + 1)
    ]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"test-{system}.json"
    path.write_text(json.dumps(records))
    return path


def _grade(body: dict) -> str:
    """The stub judge (scale 1-3): a 'better' answer gets 3 on odd turns and 2 on even ones, any other 1."""
    graded = last_user_text(body).split("<turn_to_grade>")[-1]
    question = re.search(r"Question: question \d+ (\d+)", graded)
    if question is None:  # the preflight probe
        return "OK"
    turn = int(question.group(1))
    return f"Judged. So rating={(3 - (turn % 2 == 0)) if 'better' in graded else 1}"


def _config(server: OpenAIStub, tmp_path: Path, **fields) -> RunConfig:
    model = ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=0)
    return RunConfig(model=model, cache_path=None, output_dir=str(tmp_path / "runs"), concurrency=2,
                     options={"judge": "session", "summary": "none"}, **fields)


def test_limit_keeps_the_same_dialogues_in_files_that_order_them_differently(tmp_path):
    a = _predictions(tmp_path / "a", "base", DIALOGUES, "answer")
    b = _predictions(tmp_path / "b", "better", list(reversed(DIALOGUES)), "better answer")
    with OpenAIStub(respond=_grade) as server:
        run_a = run("vdact", a, _config(server, tmp_path, limit=2), progress=False)
        run_b = run("vdact", b, _config(server, tmp_path, limit=2), progress=False)
    assert sorted(r["dial_id"] for r in run_a.records) == ["1111101", "2222201"]
    assert sorted(r["dial_id"] for r in run_b.records) == ["1111101", "2222201"]

    result = compare_runs([run_a.run_dir, run_b.run_dir], tmp_path / "cmp", plots=False)
    assert result["warnings"] == []
    [rating] = result["comparisons"]
    assert rating["n"] == 6 and rating["only_a"] == rating["only_b"] == 0  # 2 dialogues x 3 turns, aligned
    assert {u for u, _, _ in rating["pairs"]} == {f"{d}/{t}" for d in ("1111101", "2222201") for t in (1, 2, 3)}
    assert rating["mean_a"] < rating["mean_b"]


def test_compare_warns_with_the_counts_when_runs_judged_different_dialogues(tmp_path):
    a = _predictions(tmp_path / "a", "base", DIALOGUES, "answer")
    b = _predictions(tmp_path / "b", "better", DIALOGUES, "better answer")
    with OpenAIStub(respond=_grade) as server:
        run_a = run("vdact", a, _config(server, tmp_path, limit=2), progress=False)
        run_b = run("vdact", b, _config(server, tmp_path, limit=3), progress=False)
    result = compare_runs([run_a.run_dir, run_b.run_dir], tmp_path / "cmp", plots=False)
    [warning] = result["warnings"]
    assert "6 and 9 scored units, 6 in common" in warning
    assert result["comparisons"][0]["n"] == 6
    assert "Warning:" in (tmp_path / "cmp" / "compare.md").read_text().splitlines()[4]


def test_compare_refuses_a_dry_run(tmp_path):
    a = _predictions(tmp_path / "a", "base", DIALOGUES[:1], "answer")
    with OpenAIStub(respond=_grade) as server:
        judged = run("vdact", a, _config(server, tmp_path), progress=False)
    dry = run("vdact", a, RunConfig(model="dry-run", cache_path=None, output_dir=str(tmp_path / "runs"),
                                    options={"judge": "session", "summary": "none"}), progress=False)
    with pytest.raises(CompareError, match="dry run"):
        compare_runs([judged.run_dir, dry.run_dir], tmp_path / "cmp", plots=False)


def test_two_systems_in_one_run_get_a_paired_test_and_resume(tmp_path):
    folder = tmp_path / "predictions"
    _predictions(folder, "base", DIALOGUES, "answer")
    _predictions(folder, "better", list(reversed(DIALOGUES)), "better answer")
    with OpenAIStub(respond=_grade) as server:
        result = run("vdact", folder, _config(server, tmp_path, limit=3), progress=False)
        sent = len(server.requests)
        again = run("vdact", folder, _config(server, tmp_path, limit=3), progress=False)
        assert len(server.requests) == sent  # resumed: every item was finished
    assert sent == 2 * 3 * 3  # two systems x the same three dialogues x three turns
    assert _without_times(again.metrics) == _without_times(result.metrics)
    [test] = result.metrics["system_tests"]
    assert (test["dimension"], test["a"], test["b"], test["n"]) == ("rating", "test-base", "test-better", 9)
    assert test["mean_diff"] == pytest.approx(5 / 3)  # differences 2, 1, 2 in each dialogue
    assert test["p_value"] < 0.01 and test["ci_low"] > 0  # 9 turns, all better: exact sign-flip p = 2/512
    assert test["few_units"] is True  # 9 shared turns: marked as few
    report = (result.run_dir / "report.md").read_text()
    assert "Systems compared turn by turn" in report and "9 (few)" in report

    with OpenAIStub(respond=lambda body: "Judged. So rating=2") as server:  # a second judge on the same two systems
        other = run("vdact", folder, _config(server, tmp_path, limit=3, run_id="second-judge"), progress=False)
    [rating] = compare_runs([result.run_dir, other.run_dir], tmp_path / "cmp", plots=False)["comparisons"]
    assert rating["n"] == 18  # each system's turns against the same system's: units are <system>/<dial_id>/<turn>
    assert {u.split("/")[0] for u, _, _ in rating["pairs"]} == {"test-base", "test-better"}


def test_the_limit_rule_is_natural_id_order_for_every_benchmark():
    class Item:
        def __init__(self, id: str):
            self.id = id

    items = [Item(i) for i in ("10", "2", "1", "b", "a")]
    kept = limit_items(get_benchmark("mdseval"), items, 3)
    assert sorted(i.id for i in kept) == ["1", "10", "2"]  # 1, 2, 10 in natural order; kept in file order
    assert [i.id for i in kept] == ["10", "2", "1"]
    assert sorted(["d10", "d2", "d1"], key=natural_key) == ["d1", "d2", "d10"]
    assert limit_items(get_benchmark("mdseval"), items, None) == items


def test_the_readme_comparison_of_two_official_vdact_files(shared_data, tmp_path, capsys):
    """docs/reports.md's commands on the two official files, which order their dialogues differently:
    `--limit` picks the same dialogues, and compare aligns every one of their turns."""
    from dialeval.cli import main

    files = [shared_data / "vdact" / "predictions" / f"test-{name}.json" for name in ("videollama2-8f", "videollava-7b-8f")]
    with OpenAIStub(respond=lambda body: "Judged. So rating=2") as server:
        for path, run_id in zip(files, ("videollama2", "videollava")):
            code = main(["run", "vdact", "--data", str(path), "--limit", "3", "--model", "openai-compatible:stub",
                         "--base-url", server.base_url, "--option", 'summary="none"', "--no-cache", "--no-progress",
                         "--output-dir", str(tmp_path / "runs"), "--run-id", run_id])
            assert code == 0
    assert main(["compare", str(tmp_path / "runs" / "videollama2"), str(tmp_path / "runs" / "videollava"),
                 "--out", str(tmp_path / "cmp"), "--no-plots"]) == 0
    result = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert result["warnings"] == []
    dialogues = {r["dial_id"] for r in json.loads(files[0].read_text())}
    first3 = sorted(dialogues, key=natural_key)[:3]
    turns = sum(1 for r in json.loads(files[0].read_text()) if r["dial_id"] in first3)
    assert result["comparisons"][0]["n"] == turns
    assert "judged different items" not in capsys.readouterr().err


def _without_times(metrics: dict) -> dict:
    """Metrics without the run's provenance: a resumed run started later, the rest is the same."""
    return {**metrics, "run": {k: v for k, v in metrics["run"].items() if k != "provenance"}}
