"""Report tables and quoting: one table helper, model text that never becomes markup, and
runs read back as typed items (`dialeval.read_run`)."""

from __future__ import annotations

import json
from pathlib import Path

from markdown_it import MarkdownIt

import dialeval
from dialeval.report.tables import cell, code, markdown_table, num, pct, row
from dialeval.evaluation import run
from tests.helpers import scripted
from tests.test_runner import DATA, _config, _grade

HOSTILE = "`</code>` ``` <img src=http://127.0.0.1:9/x> [x](http://e) | a"


def _html(markdown: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def test_a_table_is_header_rule_and_rows_with_numbers_formatted_once():
    lines = markdown_table(["system", "n", "mean", "share"], [["bot", 3, num(2.5), pct(0.25)], ["none", 0, num(None), pct(None)]], "lrrr")
    assert lines == [
        "| system | n | mean | share |",
        "|---|---:|---:|---:|",
        "| bot | 3 | 2.50 | 25.0% |",
        "| none | 0 | n/a | n/a |",
    ]
    assert row(["a", None, ""]) == "| a | |  |"  # None is a blank cell, "" keeps its spaces
    assert (num(0.1234, 3, signed=True), pct(0.5, 2, sign="")) == ("+0.123", "50.00")


def test_plain_names_pass_unchanged_and_markup_is_made_inert():
    assert cell("demo-bot_2 (openai:gpt-4o)") == "demo-bot_2 (openai:gpt-4o)"
    assert code("gpt-4o") == "`gpt-4o`"
    html = _html("\n".join(markdown_table(["a", "b"], [[cell(HOSTILE), code(HOSTILE, table=True)]], "ll")))
    assert "<img" not in html and "<a " not in html
    assert html.count("<td>") == 2  # the `|` in the text split no column


def test_an_unreadable_reply_is_quoted_in_the_report_without_live_markup(tmp_path):
    settings, _ = scripted(respond=lambda messages: HOSTILE)
    result = run("answers", DATA, _config(tmp_path, settings), progress=False)
    report = result.report_path.read_text()
    assert "Answers that could not be used (3)" in report
    html = _html(report)
    assert "<img" not in html and "<a " not in html
    assert "&lt;img src=http://127.0.0.1:9/x&gt;" in html  # the text is still there to read


def test_read_run_gives_typed_items_with_scores_per_dimension(tmp_path):
    settings, _ = scripted(respond=_grade)  # one readable verdict (5), two unreadable
    result = run("answers", DATA, _config(tmp_path, settings), progress=False)
    data = dialeval.read_run(result.run_dir)
    assert data.benchmark == "answers"
    assert data.metrics["systems"]["demo-bot"]["scored"] == 1
    assert data.usage["total"]["calls"] == 3
    scored = [i for i in data.items if i.scores]
    assert len(data.items) == 3 and all(i.status == "ok" and i.system == "demo-bot" for i in data.items)
    assert [i.scores for i in scored] == [{"score (1-5)": {scored[0].id: 5}}]
    assert data.scores() == {"score (1-5)": {scored[0].id: 5}}
    assert all(len(i.calls) == 1 for i in data.items)


def test_a_corrupt_run_file_is_named_in_one_line(tmp_path):
    from dialeval.cli import main

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.json").write_text(json.dumps({"benchmark": "answers"}))
    (run_dir / "results.jsonl").write_text(json.dumps({"id": "x", "status": "ok", "result": {"id": "x", "system": "s", "score": 3, "calls": []}}) + "\n")
    (run_dir / "usage.json").write_text("{not json")
    other = tmp_path / "other"
    other.mkdir()
    for name in ("config.json", "results.jsonl"):
        (other / name).write_text((run_dir / name).read_text())
    try:
        dialeval.read_run(run_dir)
        raise AssertionError("a corrupt usage.json must stop the reader")
    except ValueError as err:
        assert str(Path(run_dir / "usage.json")) in str(err)
    assert main(["compare", str(run_dir), str(other), "--no-plots"]) == 2
