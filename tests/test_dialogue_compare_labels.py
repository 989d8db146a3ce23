"""`dialeval compare RUN --human FILE` from any folder, with several annotators per unit."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest

from dialeval.cli import main
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.dialogue_helpers import write_jsonl
from tests.helpers import http_config

RUBRIC = "criteria:\n  - name: engaging\n    description: Does the reply keep the talk going?\n    scale: [0, 4]\n"
SCORES = {"tea": 4, "cat": 1, "bus": 2, "map": 0}


def reviewer(body: dict) -> str:
    text = prompt_of(body)
    word = next(w for w in SCORES if f"about {w}" in text)
    return json.dumps({"rationale": "scripted", "verdict": SCORES[word]})


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare-labels")
    (root / "project").mkdir()
    (root / "project" / "rubric.yaml").write_text(RUBRIC)
    data = write_jsonl(root / "project" / "chats.jsonl", [
        {"id": w, "messages": [{"role": "user", "content": f"Tell me about {w}."}, {"role": "assistant", "content": f"Here is about {w}."}]}
        for w in SCORES
    ])
    patch = pytest.MonkeyPatch()
    patch.chdir(root / "project")  # the run names its rubric relative to the folder it ran in
    try:
        with OpenAIStub(respond=reviewer) as server:
            config = http_config(root, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                                 options={"rubric": "rubric.yaml"}, run_id="judge")
            run("dialogue", str(data), config, progress=False)
    finally:
        patch.undo()
    return root


def test_compare_reads_the_runs_own_rubric_from_another_folder(judged, monkeypatch, capsys):
    labels = write_jsonl(judged / "labels.jsonl", [
        {"id": w, "turn": 2, "criterion": "engaging", "score": scores}
        for w, scores in {"tea": [4, 3, "N/A"], "cat": [1, 2, 0], "bus": [2, 2, 3], "map": [0, None, 1]}.items()
    ])
    monkeypatch.chdir(judged)  # rubric.yaml is not here
    out = judged / "vs-human"
    assert main(["compare", str(judged / "runs" / "judge"), "--human", str(labels), "--out", str(out), "--no-plots"]) == 0
    result = json.loads((out / "compare.json").read_text())
    [row] = result["comparisons"]
    assert row["n"] == 4 and sorted(row["pairs"]) == [["bus/2", 2.0, 7 / 3], ["cat/2", 1.0, 1.0], ["map/2", 0.0, 0.5], ["tea/2", 4.0, 3.5]]
    ceiling = result["human_ceiling"]["engaging"]  # the annotators' own agreement, beside the judge's
    expected = krippendorff.alpha(reliability_data=[[4, 1, 2, 0], [3, 2, 2, np.nan], [np.nan, 0, 3, 1]], level_of_measurement="ordinal")
    assert (ceiling["annotators"], ceiling["multi_labelled"]) == (3, 4)
    assert ceiling["alpha"]["value"] == pytest.approx(expected)
    text = (out / "compare.md").read_text()
    assert f"| engaging | humans (3 annotators; alpha among them {expected:.3f} [" in text
    judge = ceiling["judges"]["judge"]  # the judge in each annotator's place, never against the mean of all three
    assert judge["units"] == 4 and f"| engaging | judge, in each annotator's place | 4 | {judge['spearman']['value']:.3f} [" in text
    # averaged human labels have no exact agreement: the cell says so and a footnote says why
    assert row["exact_agreement"] is None and "| n/a [1] | n/a [1] |" in text
    assert "[1] human has scores that are not whole numbers" in text and "human_rule=majority or median" in text


def test_a_labels_file_naming_no_scored_unit_is_named(judged, capsys):
    labels = write_jsonl(judged / "other.jsonl", [{"id": "zebra", "turn": 2, "criterion": "engaging", "score": 3}])
    assert main(["compare", str(judged / "runs" / "judge"), "--human", str(labels), "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert "other.jsonl: none of its 1 labelled units is a unit judge scored" in err


def test_the_run_report_and_compare_human_print_one_alpha_for_the_same_pairs(judged, monkeypatch):
    """The averaged labels against the judge's whole numbers: ordinal alpha in the run's own
    report (option human_scores) and in compare --human alike, never interval in one of them."""
    from dialeval.benchmarks import get_benchmark
    from dialeval.report.results import read_run

    labels = write_jsonl(judged / "same.jsonl", [
        {"id": w, "turn": 2, "criterion": "engaging", "score": scores}
        for w, scores in {"tea": [4, 3], "cat": [1, 2], "bus": [2, 3], "map": [0, 1]}.items()
    ])
    monkeypatch.chdir(judged / "project")
    out = judged / "same-vs-human"
    assert main(["compare", str(judged / "runs" / "judge"), "--human", str(labels), "--out", str(out), "--no-plots"]) == 0
    [row] = json.loads((out / "compare.json").read_text())["comparisons"]
    records = read_run(judged / "runs" / "judge").records
    metrics = get_benchmark("dialogue").aggregate(records, {"rubric": "rubric.yaml", "human_scores": str(labels)})
    reported = metrics["human_agreement"]["engaging"]
    expected = krippendorff.alpha(reliability_data=[[4, 1, 2, 0], [3.5, 1.5, 2.5, 0.5]], level_of_measurement="ordinal")
    assert row["krippendorff_alpha"] == pytest.approx(expected) and row["alpha_level"] == "ordinal"
    assert reported["krippendorff_alpha"]["value"] == pytest.approx(expected) and reported["alpha_level"] == "ordinal"
