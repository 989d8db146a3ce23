"""`dialeval compare RUN --human FILE`: the dialogue judge against human labels, as one more run."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from dialeval.cli import main
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.dialogue_helpers import fake_embed, write_jsonl
from tests.helpers import http_config

FIXTURE = resources.files("dialeval").joinpath("fixtures", "dialogue_demo.jsonl")
RELEVANCE = {("Lisbon", "2"): 5, ("Lisbon", "4"): 2, ("lamp", "2"): 4}  # (conversation hint, turn) -> judge's score


def respond(body: dict) -> str:
    """Relevance differs per reply (so rank statistics are defined); everything else is 'yes' or 4."""
    text = prompt_of(body)
    if "name: relevance" in text:
        turn = re.findall(r'<reply turn="(\d+)">', text)[-1]
        hint = "Lisbon" if "Lisbon" in text else "lamp"
        return json.dumps({"rationale": "scripted", "verdict": RELEVANCE[(hint, turn)]})
    verdict = '"yes"' if re.search(r"one of: \"(yes|appropriate)\"", text) else 4
    return f'{{"rationale": "scripted", "verdict": {verdict}}}'


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare-human")
    patch = pytest.MonkeyPatch()
    patch.setattr("dialeval.memory.embeddings.embed", fake_embed)
    try:
        with OpenAIStub(respond=respond) as server:
            config = http_config(root, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                                 options={"criteria": ["relevance", "goal_completion"]}, run_id="judge")
            run("dialogue", str(FIXTURE), config, progress=False)
    finally:
        patch.undo()
    return root


def test_compare_pairs_the_judge_with_human_labels(judged, capsys):
    labels = write_jsonl(judged / "human.jsonl", [
        {"id": "trip", "turn": 2, "criterion": "relevance", "score": 5},
        {"id": "trip", "turn": 4, "criterion": "relevance", "score": 1},
        {"id": "lamp", "turn": 2, "criterion": "relevance", "score": 3},
    ])
    out = judged / "judge-vs-human"
    assert main(["compare", str(judged / "runs" / "judge"), "--human", str(labels), "--out", str(out), "--no-plots"]) == 0
    printed = capsys.readouterr().out
    result = json.loads((out / "compare.json").read_text())
    [row] = result["comparisons"]  # goal_completion has no human label: no row against the humans
    assert (row["dimension"], row["a"], row["b"], row["n"]) == ("relevance", "judge", "human", 3)
    assert row["spearman"] == pytest.approx(1.0) and row["exact_agreement"] == pytest.approx(1 / 3)
    assert sorted(row["pairs"]) == [["lamp/2", 4.0, 3.0], ["trip/2", 5.0, 5.0], ["trip/4", 2.0, 1.0]]
    assert result["human"] == str(labels.resolve())
    assert "| relevance | judge | human | 3 (too few to read) |" in printed and "Human labels (human)" in printed


def test_a_label_off_the_scale_stops_with_file_record_and_field(judged, capsys):
    labels = write_jsonl(judged / "bad.jsonl", [{"id": "trip", "turn": 2, "criterion": "relevance", "score": 9}])
    assert main(["compare", str(judged / "runs" / "judge"), "--human", str(labels), "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl" in err and "score" in err and "a number from 1 to 5" in err


def test_one_run_without_human_labels_is_not_a_comparison(judged, capsys):
    assert main(["compare", str(judged / "runs" / "judge")]) == 2
    assert "or one and --human FILE" in capsys.readouterr().err
