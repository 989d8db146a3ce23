"""`dialeval view`: pages over run folders, read in a real headless browser (Debian's chromium)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.viewer_helpers import serving

from dialeval.report.compare import compare_runs
from dialeval.config import ModelSettings, RunConfig
from dialeval.models.client import register_client
from dialeval.evaluation import run
from dialeval.testing.scripted import ScriptedChatModel, prompt_text
from dialeval.cli import main
from dialeval.report.viewer import write_site

INJECTION = '<img src=x onerror="document.title=\'pwned\'">'


def _data(folder: Path) -> Path:
    rows = [
        {"id": "good-1", "question": "What is q1?", "reference": "Paris", "answer": "Paris", "system": "bot"},
        {"id": "vague-2", "question": "What is q2?", "reference": "Rome", "answer": "Milan " + INJECTION, "system": "bot"},
        {"id": "cut-3", "question": "What is q3?", "reference": "Oslo", "answer": "Oslo", "system": "bot"},
        {"id": "good-4", "question": "What is q4?", "reference": "Bern", "answer": "Zurich", "system": "bot"},
    ]
    path = folder / "answers.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _judge(strict: bool):
    def respond(messages):
        k = int(re.search(r"What is q(\d+)\?", prompt_text(messages)).group(1))
        if k == 2:
            return "Hard to say. " + INJECTION  # never JSON: ends unparsed with this raw text
        if k == 3:
            return ('{"rationale": "Oslo is the capital and', "length")  # cut off by the token limit
        return json.dumps({"rationale": "scripted", "score": (5 if k == 1 else 1 if strict else 2)})

    return respond


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("viewer")
    data = _data(root)
    for name, strict in (("lenient-judge", False), ("strict-judge", True)):
        settings = ModelSettings(spec=f"openai:viewer-{name}", max_retries=0)
        register_client(settings, ScriptedChatModel(respond=_judge(strict)))
        config = RunConfig(model=settings, output_dir=str(root / "runs"), cache_path=None, run_id=name, parse_retries=1)
        run("answers", data, config, progress=False)
    compare_runs([root / "runs" / "lenient-judge", root / "runs" / "strict-judge"], root / "runs" / "compare-judges")
    write_site(root / "runs")
    return root / "runs"


def test_pages_are_written_beside_the_runs(site):
    assert (site / "index.html").exists()
    assert sorted(p.name for p in (site / "strict-judge" / "view" / "items").iterdir()) == [f"{k:05d}.html" for k in range(1, 5)]
    assert (site / "compare-judges" / "view" / "index.html").exists()


def table_rows(run_dir: Path) -> list[dict]:
    """The item table's rows, as the run page's scripts load them (``view/rows/*.js``)."""
    rows = []
    for part in sorted((run_dir / "view" / "rows").glob("*.js")):
        text = part.read_text(encoding="utf-8")
        rows += json.loads(text[text.index("push(...") + len("push(..."):text.rindex(");")])
    return rows


def _item_page(site: Path, run_name: str, item_id: str) -> str:
    href = next(r["href"] for r in table_rows(site / run_name) if r["id"] == item_id)
    return (site / run_name / "view" / href).read_text()


def test_model_text_is_escaped_never_markup(site):
    page = _item_page(site, "strict-judge", "vague-2")
    assert INJECTION not in page
    assert "Hard to say. &lt;img src=x onerror=" in page


def test_an_item_page_shows_the_prompt_from_the_run_prompt_store(site):
    page = _item_page(site, "strict-judge", "good-1")
    assert "What is q1?" in page and "prompt (2 messages)" in page
    assert "openai:viewer-strict-judge" in page


def test_a_failed_item_shows_its_error_and_the_calls_it_made(tmp_path):
    run_dir = tmp_path / "runs" / "broken-run"
    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text(json.dumps({"benchmark": "answers"}))
    row = {"id": "q9", "status": "failed", "error": "RuntimeError: judge <b>unreachable</b>", "traceback": "Traceback ...",
           "usage": [{"agent": "answer_judge", "model": "openai:gpt-4o-mini", "status": "error", "input_tokens": 0,
                      "output_tokens": 0, "cost": 0.0, "requests": 0, "cached": 0, "estimated": False}]}
    (run_dir / "results.jsonl").write_text(json.dumps(row) + "\n")
    assert main(["view", str(tmp_path / "runs"), "--no-serve"]) == 0
    page = (run_dir / "view" / "items" / "00001.html").read_text()
    assert "RuntimeError: judge &lt;b&gt;unreachable&lt;/b&gt;" in page
    assert "answer_judge" in page and "openai:gpt-4o-mini" in page and 'data-status="error"' in page


def test_a_fresh_run_of_cache_hits_says_nothing_was_sent_not_that_timings_are_missing(tmp_path):
    """Latency n/a has two causes and the page names the right one."""
    data = _data(tmp_path)
    settings = ModelSettings(spec="openai:viewer-cache-judge", max_retries=0)
    register_client(settings, ScriptedChatModel(respond=lambda messages: '{"rationale": "scripted", "score": 4}'))
    for run_id in ("first", "again"):  # the second run's answers all come from the first one's cache
        config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=str(tmp_path / "cache.sqlite"),
                           run_id=run_id, parse_retries=0)
        run("answers", data, config, progress=False)
    write_site(tmp_path / "runs")
    first = (tmp_path / "runs" / "first" / "view" / "index.html").read_text()
    again = (tmp_path / "runs" / "again" / "view" / "index.html").read_text()
    assert " s</td>" in first and "Latency n/a" not in first
    assert "every call was a response-cache hit or a dry run" in again
    assert "runs from before dialeval recorded them" not in again


def test_a_run_with_a_bad_line_is_skipped_by_name_and_the_others_are_shown(tmp_path, capsys):
    good, bad = tmp_path / "runs" / "good-run", tmp_path / "runs" / "bad-run"
    for run_dir, second in ((good, {"id": "q2", "status": "ok", "result": {"id": "q2", "system": "s", "score": 4, "calls": []}}),
                            (bad, "this line is not JSON")):
        run_dir.mkdir(parents=True)
        (run_dir / "config.json").write_text(json.dumps({"benchmark": "answers"}))
        first = {"id": "q1", "status": "ok", "result": {"id": "q1", "system": "s", "score": 3, "calls": []}}
        (run_dir / "results.jsonl").write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    assert main(["view", str(tmp_path / "runs"), "--no-serve"]) == 0
    err = capsys.readouterr().err
    assert "skipped run bad-run" in err and str(bad / "results.jsonl") in err and "line 2" in err
    index = (tmp_path / "runs" / "index.html").read_text()
    assert "good-run/view/index.html" in index and "bad-run/view/index.html" not in index
    assert (good / "view" / "items" / "00002.html").exists()


def test_view_of_a_missing_folder_exits_2(tmp_path, capsys):
    assert main(["view", str(tmp_path / "nowhere"), "--no-serve"]) == 2
    assert "not a folder of runs" in capsys.readouterr().err


@pytest.fixture(scope="module")
def server(site):
    with serving(site) as base:  # what `dialeval view` serves
        yield base


def test_the_index_lists_the_runs(server, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1200, "height": 700})
    page.goto(f"{server}/index.html")
    names = page.locator("#runs td:first-child a").all_inner_texts()
    assert names == ["lenient-judge", "strict-judge"]
    assert page.locator("#comparisons a").inner_text() == "compare-judges"
    page.screenshot(path=str(tmp_path / "index.png"))


def test_an_item_page_shows_a_calls_raw_answer_and_a_filter_hides_ok_calls(server, browser):
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(f"{server}/strict-judge/view/index.html")
    page.get_by_role("link", name="vague-2").click()
    raw = page.locator("section.call pre.raw").first
    assert raw.inner_text().startswith("Hard to say. <img src=x")  # shown as text...
    assert page.title() != "pwned"  # ...never run as markup

    page.goto(f"{server}/strict-judge/view/index.html")
    page.get_by_role("link", name="good-1").click()
    assert page.locator("section.call.ok").first.is_visible()
    page.locator(".status-filter[value=ok]").uncheck()
    assert not page.locator("section.call.ok").first.is_visible()


def test_the_run_page_filters_items_with_problems(server, browser):
    page = browser.new_page()
    page.goto(f"{server}/strict-judge/view/index.html")
    page.locator("#only-problems").check()
    visible = [row.locator("td a").inner_text() for row in page.locator("tr.item").all() if row.is_visible()]
    assert sorted(visible) == ["cut-3", "vague-2"]


def test_prompts_live_in_the_run_prompt_store_not_in_results(site):
    from dialeval.models.prompt_store import load_prompts
    from dialeval.run.folder import read_results

    run_dir = site / "strict-judge"
    calls = [c for row in read_results(run_dir) for c in row["result"]["calls"]]
    prompts = load_prompts(run_dir)
    assert all(c["prompt_ref"] in prompts for c in calls)
    assert "What is q1?" not in (run_dir / "results.jsonl").read_text()
    # an unparsed call's prompt is its last request: the first answer and the correction included
    vague = next(c for c in calls if c["status"] == "unparsed")
    assert [m["role"] for m in prompts[vague["prompt_ref"]]] == ["system", "human", "ai", "human"]


def test_a_prompt_is_stored_once_and_again_after_its_run_folder_is_deleted(tmp_path):
    import shutil

    from langchain_core.messages import HumanMessage

    from dialeval.models.prompt_store import load_prompts, store_prompt

    run_dir = tmp_path / "run"
    first = store_prompt(run_dir, [HumanMessage("grade this")])
    assert store_prompt(run_dir, [HumanMessage("grade this")]) == first
    assert load_prompts(run_dir) == {first: [{"role": "human", "content": "grade this"}]}
    shutil.rmtree(run_dir)
    store_prompt(run_dir, [HumanMessage("grade this")])
    assert first in load_prompts(run_dir)


def test_inline_image_bytes_are_left_out_of_stored_prompts(tmp_path):
    from langchain_core.messages import HumanMessage

    from dialeval.models.prompt_store import load_prompts, store_prompt

    url = "data:image/png;base64," + "A" * 5000
    message = HumanMessage(content=[{"type": "text", "text": "Which room?"}, {"type": "image_url", "image_url": {"url": url}}])
    ref = store_prompt(tmp_path, [message])
    (stored,) = load_prompts(tmp_path)[ref]
    assert stored["content"][0] == {"type": "text", "text": "Which room?"}
    assert stored["content"][1]["image_url"]["url"] == f"data:image/png;base64,<{len(url)} characters left out>"


def test_each_disagreement_links_to_both_runs_side_by_side(server, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{server}/compare-judges/view/index.html")
    row = page.locator("table.disagreements tr", has_text="good-4")
    assert row.locator("td").nth(1).inner_text() == "2" and row.locator("td").nth(2).inner_text() == "1"
    row.locator("a.pair-link").click()
    sides = page.locator(".side")
    assert sides.nth(0).locator("h2").inner_text() == "lenient-judge" and sides.nth(1).locator("h2").inner_text() == "strict-judge"
    assert sides.nth(0).locator(".pair-score").inner_text().endswith(": 2")
    assert sides.nth(1).locator(".pair-score").inner_text().endswith(": 1")
    assert '"rationale": "scripted"' in sides.nth(1).locator("pre.rationale").first.inner_text()  # the judge's own words
    assert '"question": "What is q4?"' in sides.nth(0).locator("pre.record").inner_text()  # and what it judged
    sides.nth(1).locator("a.item-link").click()  # and on to the item's page in its run
    assert page.locator("h1").inner_text().startswith("item good-4")
    page.screenshot(path=str(tmp_path / "pair.png"))


@pytest.mark.parametrize(("values", "labels"), [
    ([0.5, 0.5, 0.5], ["0.50"]),  # one value: one bar (this drew 0.50 ... 9.50)
    ([0.25, 0.75, 1.0], ["0.00", "0.10", "0.20", "0.30", "0.40", "0.50", "0.60", "0.70", "0.80", "0.90"]),  # a precision: 0-1
    ([0, 3, 5], ["0", "1", "2", "3", "4", "5"]),  # a small integer scale: one bar per value
])
def test_a_histograms_axis_fits_its_values(values, labels):
    from dialeval.report.viewer.run_page import histogram

    bars = histogram(values, "EP, notes off")["bars"]
    assert [b["label"] for b in bars] == labels
    assert sum(b["count"] for b in bars) == len(values)
