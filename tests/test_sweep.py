"""`dialeval sweep`: three judges over HTTP with known differences, ranked with intervals and
ties; the sweep resumes after kill -9, and its dry run prices it without a request."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import dialeval
from dialeval.cli import main
from dialeval.testing.openai_server import OpenAIStub, prompt_of

ITEMS = 12
MODELS = ["openai-compatible:alpha", "openai-compatible:beta", "openai-compatible:gamma"]


def grade(body: dict) -> str:
    """alpha gives 5 everywhere; beta 5 but 4 on q7 (too close to tell apart from alpha);
    gamma 2 everywhere (far below both)."""
    k = int(re.search(r"What is q(\d+)\?", prompt_of(body)).group(1))
    score = {"alpha": 5, "beta": 4 if k == 7 else 5, "gamma": 2}[body["model"]]
    return json.dumps({"rationale": "scripted", "score": score})


def _data(folder: Path) -> Path:
    rows = [{"id": f"q{k}", "question": f"What is q{k}?", "reference": f"r{k}", "answer": f"a{k}", "system": "bot"}
            for k in range(ITEMS)]
    path = folder / "answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _sweep_file(folder: Path, base_url: str, **extra) -> Path:
    """A YAML sweep file: the three models, priced so that a dry run has a cost."""
    models = [{"spec": m, "base_url": base_url, "price": [1.0, 2.0]} for m in MODELS]
    body = {"benchmark": "answers", "data": "answers.jsonl", "models": models, "output_dir": "runs", **extra}
    path = folder / "sweep.yaml"
    path.write_text(json.dumps(body))  # JSON is YAML
    return path


@pytest.mark.timeout(180)
@pytest.mark.figures  # the leaderboard's plot
def test_three_judges_are_ranked_with_intervals_and_ties(tmp_path):
    data = _data(tmp_path)
    with OpenAIStub(respond=grade) as server:
        result = dialeval.sweep("answers", data, [{"spec": m, "base_url": server.base_url, "price": [1.0, 2.0]} for m in MODELS],
                                output_dir=str(tmp_path / "runs"), cache_path=str(tmp_path / "cache.sqlite"), preflight=False)
    board = result.leaderboard
    ranks = {m["model"]: (m["rank"], m["tied"]) for m in board["models"]}
    assert ranks == {"openai-compatible:alpha": (1, True), "openai-compatible:beta": (1, True), "openai-compatible:gamma": (3, False)}
    assert [m["model"] for m in board["models"]] == MODELS  # rank, then mean
    figures = {m["model"]: m["figures"]["score (1-5)"] for m in board["models"]}
    assert figures["openai-compatible:alpha"] == {"mean": 5.0, "ci": None, "n": ITEMS, "ci_reason": f"{ITEMS} unit(s), every one scored the same"}
    beta = figures["openai-compatible:beta"]
    assert beta["mean"] == pytest.approx(5 - 1 / ITEMS) and beta["ci"][0] < beta["mean"] <= beta["ci"][1] <= 5.0
    pairs = {(p["a"], p["b"]): p for p in board["pairs"]}
    assert not pairs[MODELS[0], MODELS[1]]["separated"]
    assert pairs[MODELS[0], MODELS[2]]["better"] == MODELS[0] and pairs[MODELS[1], MODELS[2]]["better"] == MODELS[1]
    assert pairs[MODELS[0], MODELS[2]]["p_holm"] == pytest.approx(min(1.0, 3 * pairs[MODELS[0], MODELS[2]]["p"]))
    assert all(m["complete"] and m["cost_usd"] > 0 and m["seconds"] > 0 for m in board["models"])
    sweep = result.sweep_dir
    assert sweep.parent.name == "sweeps" and sweep.parent.parent == tmp_path
    assert json.loads((sweep / "leaderboard.json").read_text()) == board
    text = (sweep / "leaderboard.md").read_text()
    assert "| 1 (tie) | `openai-compatible:alpha` | 5.000 | n/a (12 unit(s), every one scored the same) | 12 |" in text
    assert "| 3 | `openai-compatible:gamma` | 2.000 | n/a (12 unit(s), every one scored the same) | 12 |" in text
    assert "[5.000, 5.000]" not in text  # never a zero-width interval
    assert "not separated" in text and "../../runs/" in text  # each run's report linked
    assert (sweep / "plots" / "leaderboard.png").stat().st_size > 1000
    page = (sweep / "index.html").read_text()
    assert page.count("/view/index.html") == 3 and "(tie)" in page
    for run in result.runs:  # ordinary run folders, each with its viewer pages
        assert (run / "metrics.json").is_file() and (run / "view" / "index.html").is_file()


@pytest.mark.timeout(300)
def test_the_sweep_resumes_after_kill_9_and_sends_no_finished_item_again(tmp_path):
    _data(tmp_path)
    with OpenAIStub(respond=grade, latency=0.2) as server:
        sweep_file = _sweep_file(tmp_path, server.base_url)
        command = [sys.executable, "-m", "dialeval", "sweep", str(sweep_file), "--no-progress"]
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
        process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and len(_finished(tmp_path)) < 2 and process.poll() is None:
                time.sleep(0.1)
            os.killpg(process.pid, signal.SIGKILL)  # kill -9, mid-run
        finally:
            process.wait()
        finished_before = _finished(tmp_path)
        assert process.returncode == -signal.SIGKILL and 2 <= len(finished_before) < ITEMS * len(MODELS)
        sent_before = len(server.completions)
        assert main(["sweep", str(sweep_file), "--no-progress"]) == 0
        resent = [json.dumps(b["model"]) + prompt_of(b) for b in server.completions[sent_before:]]
    asked_again = {key for key in finished_before if any(key in r for r in resent)}
    assert not asked_again  # every finished item was kept; only the rest was sent
    board = json.loads(next((tmp_path / "sweeps").glob("*/leaderboard.json")).read_text())
    assert [(m["model"], m["rank"], m["figures"]["score (1-5)"]["n"]) for m in board["models"]] == [
        (MODELS[0], 1, ITEMS), (MODELS[1], 1, ITEMS), (MODELS[2], 3, ITEMS)]


def _finished(root: Path) -> set[str]:
    """``"model"What is qK?`` of every item the runs under ``root/runs`` have written."""
    out = set()
    for results in (root / "runs").glob("*/results.jsonl"):
        model = json.loads((results.parent / "config.json").read_text())["context"]["default_model"]["spec"].split(":", 1)[1]
        for line in results.read_text().splitlines():
            if line.strip():
                out.add(json.dumps(model) + f"What is {json.loads(line)['id']}?")
    return out


def test_the_dry_run_prices_the_whole_sweep_without_a_request(tmp_path, capsys):
    _data(tmp_path)
    with OpenAIStub(respond=grade) as server:
        assert main(["sweep", str(_sweep_file(tmp_path, server.base_url)), "--dry-run", "--no-progress"]) == 0
        assert server.completions == []
    out = capsys.readouterr().out
    costs = {m: float(c) for m, c in re.findall(r"\| `([^`]+)` \| \d+ \| \d+ \| \d+ \| ([0-9.]+) \|", out)}
    assert set(costs) == set(MODELS) and all(c > 0 for c in costs.values())
    total = float(re.search(r"\| \*\*sweep\*\* \| \d+ \| \d+ \| \d+ \| ([0-9.]+) \|", out).group(1))
    assert total == pytest.approx(sum(costs.values()), abs=1e-4)
    assert "no model was called" in out


def test_a_sweep_without_a_model_or_with_an_unknown_rank_dimension_stops_before_any_run(tmp_path, capsys):
    data = _data(tmp_path)
    assert main(["sweep", "answers", "--data", str(data), "--output-dir", str(tmp_path / "runs")]) == 2
    assert "no model given" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_a_sweep_of_dry_run_specs_prices_them_and_ranks_nothing(tmp_path, capsys):
    data, runs = _data(tmp_path), str(tmp_path / "runs")
    dry = ["dry-run:gpt-4o-mini", "dry-run:gpt-4o"]
    assert main(["sweep", "answers", "--data", str(data), "--model", dry[0], "--model", dry[1], "--output-dir", runs, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "Dry run of the sweep (answers): no model was called" in out and "rank" not in out
    assert {m for m in re.findall(r"\| `([^`]+)` \| \d+ \|", out)} == set(dry)
    assert not (tmp_path / "sweeps").exists()  # no leaderboard of placeholder scores
    priced = dialeval.sweep("answers", data, dry, output_dir=runs)  # the API does the same: the estimate, no leaderboard
    assert isinstance(priced, dict) and [m["model"] for m in priced["models"]] == dry and not (tmp_path / "sweeps").exists()
    mixed = ["sweep", "answers", "--data", str(data), "--model", dry[0], "--model", "openai:gpt-4o", "--output-dir", str(tmp_path / "mixed")]
    assert main(mixed) == 2
    assert "dry-run:gpt-4o-mini: a dry run's scores are placeholders, not results to rank" in capsys.readouterr().err
    assert not (tmp_path / "mixed").exists()


def test_a_leaderboard_refuses_a_run_that_was_a_dry_run(tmp_path):
    from dialeval.config import ConfigError
    from dialeval.sweeps.runs import write_leaderboard

    dry = dialeval.evaluate("answers", _data(tmp_path), model="dry-run:gpt-4o-mini", output_dir=str(tmp_path / "runs")).run_dir
    with pytest.raises(ConfigError, match=r"alpha \(run .*\): a dry run's scores are placeholders"):
        write_leaderboard("answers", tmp_path / "answers.jsonl", [("alpha", Path(dry))], tmp_path / "sweeps" / "s")
    assert not (tmp_path / "sweeps").exists()


def test_holm_steps_down_and_never_lowers_a_later_p_value():
    from dialeval.metrics.multiple import holm

    assert holm([0.01, 0.04, 0.03, None]) == pytest.approx([0.03, 0.06, 0.06, None])
    assert holm([0.5, 0.6]) == [1.0, 1.0]
