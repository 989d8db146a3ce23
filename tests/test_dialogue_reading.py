"""Reading dialogue results: label verdicts as words, the system's name, runs told apart by options."""

from __future__ import annotations

import json

import pytest

from dialeval.cli import main
from dialeval.report.results import read_run
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub
from tests.dialogue_helpers import write_jsonl
from tests.helpers import http_config

RUBRIC = "criteria:\n  - name: sensible\n    description: Does the reply make sense?\n    scale: [yes, partly, no]\n"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """The same conversations judged twice, in two context modes; the judges disagree."""
    root = tmp_path_factory.mktemp("reading")
    (root / "rubric.yaml").write_text(RUBRIC)
    data = write_jsonl(root / "chats.jsonl", [
        {"id": f"c{i}", "metadata": {"system": "bot-v2"},
         "messages": [{"role": "user", "content": f"Question {i}?"}, {"role": "assistant", "content": f"Answer {i}."}]}
        for i in range(3)
    ])
    verdict = {"value": "yes"}
    folders = {}
    with OpenAIStub(respond=lambda body: json.dumps({"rationale": "scripted", "verdict": verdict["value"]})) as server:
        for mode, answer in (("window", "yes"), ("full", "no")):
            verdict["value"] = answer  # each run its own cache (the two prompts may be alike)
            config = http_config(root / mode, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                                 options={"rubric": str(root / "rubric.yaml"), "context": mode})
            folders[mode] = run("dialogue", str(data), config, progress=False).run_dir  # named by a hash
    return root, folders


def test_to_pandas_has_a_label_beside_the_score_and_the_systems_name(two_runs):
    frame = read_run(two_runs[1]["window"]).to_pandas()
    assert list(frame["label"]) == ["yes", "yes", "yes"] and list(frame["score"]) == [3.0, 3.0, 3.0]
    assert set(frame["system"]) == {"bot-v2"}


def test_compare_tells_runs_apart_by_their_options_and_shows_labels(two_runs, capsys):
    root, folders = two_runs
    out = root / "cmp"
    assert main(["compare", str(folders["window"]), str(folders["full"]), "--out", str(out), "--no-plots"]) == 0
    result = json.loads((out / "compare.json").read_text())
    labels = [r["label"] for r in result["runs"]]
    assert labels[0].endswith("(context=window)") and labels[1].endswith("(context=full)") and "bot-v2" in labels[0]
    [row] = result["comparisons"]
    assert row["disagreements"][0] == {"unit": "c0/2", "a": 3.0, "b": 1.0, "a_label": "yes", "b_label": "no"}
    assert "| 3 (yes) | 1 (no) |" in (out / "compare.md").read_text()


def test_the_viewer_index_shows_each_runs_options(two_runs):
    from dialeval.report.viewer import run_overview, write_site

    root, folders = two_runs
    lines = {mode: run_overview(read_run(folder)) for mode, folder in folders.items()}
    assert lines["window"]["options"] == "context=window, rubric=rubric.yaml"
    assert lines["full"]["options"] == "context=full, rubric=rubric.yaml"
    write_site(folders["full"].parent)
    assert "context=full, rubric=rubric.yaml" in (folders["full"].parent / "index.html").read_text()


def test_the_item_page_shows_a_label_beside_its_rank(two_runs):
    from dialeval.report.viewer import write_site

    root, folders = two_runs
    write_site(folders["window"].parent)
    page = next((folders["window"] / "view" / "items").glob("00001.html")).read_text()
    table = page[page.index('id="item-scores"'):]
    assert '<td class="num">3 (yes)</td>' in table


def test_a_system_field_that_reads_like_a_name_is_a_warning(tmp_path):
    from dialeval.protocols.dialogue.loading import load

    data = write_jsonl(tmp_path / "chats.jsonl", [
        {"id": "a", "system": "bot-v2", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]},
        {"id": "b", "system": "You are a helpful travel agent.", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]},
        {"id": "c", "system": "bot-v2", "metadata": {"system": "bot-v2"}, "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]},
    ])
    with pytest.warns(UserWarning, match=r"field 'system' of 1 conversations \(first 'a': 'bot-v2'\) reads like a system's name"):
        load(data, {})
