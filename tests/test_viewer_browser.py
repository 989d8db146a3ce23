"""The results browser of `dialeval view`: the item table (sort, search, filters, pages), bounded
page sizes, runs that appear while the server runs, and compare's side-by-side pages,
read in headless Chromium where a page needs its script."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.viewer_helpers import serving

from dialeval.report.viewer import write_site
from dialeval.run.folder import RunLock

LONG = "the judge thinks about this at length. " * 400  # 15,600 characters


def _answers_run(runs: Path, name: str, count: int, *, big_item: bool = False) -> Path:
    """A run folder of the `answers` benchmark written as the runner writes it, without a model:
    item k scores k % 5 + 1, every seventh item failed, every fifth one with an unparsed call."""
    from langchain_core.messages import HumanMessage, SystemMessage

    from dialeval.models.prompt_store import store_prompt

    run_dir = runs / name
    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text(json.dumps({"benchmark": "answers", "context": {"default_model": {"spec": "openai:judge-x"}}}))
    lines = []
    for k in range(1, count + 1):
        item_id = f"q{k:04d}"
        agent = "answer_judge" if k % 2 else "strict_judge"
        if k % 7 == 0:
            lines.append({"id": item_id, "status": "failed", "error": "RuntimeError: judge unreachable",
                          "usage": [{"agent": agent, "model": "openai:judge-x", "status": "error", "cost": 0.0}]})
            continue
        status = "unparsed" if k % 5 == 0 else "ok"
        calls = [{"agent": agent, "role": "judge", "status": status, "model": "openai:judge-x", "raw": f"about {item_id}",
                  "value": {"rationale": f"why {item_id}", "score": k % 5 + 1} if status == "ok" else None, "cost": 0.001}]
        if big_item and k == 1:
            ref = store_prompt(run_dir, [SystemMessage(LONG)] + [HumanMessage(f"turn {t}: {LONG}") for t in range(30)])
            calls = [{**calls[0], "raw": LONG, "prompt_ref": ref, "value": {"rationale": LONG, "score": 1}} for _ in range(90)]
        record = {"id": item_id, "system": "bot", "question": f"What is the capital of place {k}?", "reference": "x",
                  "answer": f"answer number {k}", "score": k % 5 + 1 if status == "ok" else None, "calls": calls}
        lines.append({"id": item_id, "status": "ok", "result": record, "seconds": k / 10,
                      "usage": [{"agent": agent, "model": "openai:judge-x", "status": status, "cost": 0.001, "latency_s": 0.5 + k % 3}]})
    (run_dir / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return run_dir


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    from PIL import Image

    runs = tmp_path_factory.mktemp("browser") / "runs"
    run_dir = _answers_run(runs, "big-run", 450, big_item=True)
    (run_dir / "plots").mkdir()
    Image.new("RGB", (40, 30), "navy").save(run_dir / "plots" / "score-histogram.png")  # as the report writes its figures
    (run_dir / "report.md").write_text("# Report\n\n![Scores](plots/score-histogram.png)\n")
    write_site(runs)
    return runs


@pytest.fixture(scope="module")
def server(big):
    with serving(big) as base:
        yield base


def test_no_page_grows_with_the_run_or_with_long_texts(big):
    pages = [p for p in big.rglob("*.html") if not p.parent.name.endswith("-full")]  # full texts are whole on purpose
    largest = max(pages, key=lambda p: p.stat().st_size)
    assert largest.stat().st_size < 300_000, f"{largest} is {largest.stat().st_size} bytes"
    row_files = list((big / "big-run" / "view" / "rows").glob("*.js"))
    assert len(row_files) == 1 and row_files[0].stat().st_size < 200_000
    # the item with 90 calls of 15,600-character answers: calls come 20 a page, texts clipped
    items = big / "big-run" / "view" / "items"
    assert sorted(p.name for p in items.glob("00001-calls-*.html")) == [f"00001-calls-{k}.html" for k in range(2, 6)]
    first = (items / "00001.html").read_text()
    assert LONG not in first and "more characters: full text" in first and "the whole prompt" in first
    full = next((items / "00001-full").glob("*.html")).read_text()
    assert LONG.strip() in full
    # each distinct long text once (8: two prompts messages and four last ones, the whole prompt, the parsed value),
    # not once per call (90 calls)
    assert len(list((items / "00001-full").glob("*.html"))) == 8


def _rows(page) -> list[str]:
    return page.locator("#item-rows tr td:nth-child(2) a").all_inner_texts()


def test_the_item_table_pages_sorts_and_filters(server, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{server}/big-run/view/index.html")
    assert page.locator("#shown").inner_text() == "450 of 450 items"
    assert len(_rows(page)) == 200 and _rows(page)[0] == "q0001"
    assert page.locator("#page-label").inner_text() == "page 1 of 3"
    page.locator("#next-page").click()
    page.locator("#next-page").click()
    assert _rows(page)[0] == "q0401" and len(_rows(page)) == 50

    page.locator("th[data-key='score:score (1-5)']").click()  # a score column sorts highest first
    scores = page.locator("#item-rows td.score").all_inner_texts()
    assert scores[:3] == ["5", "5", "5"] and _rows(page)[0] == "q0004"
    page.locator("th[data-key='score:score (1-5)']").click()
    assert page.locator("#item-rows td.score").first.inner_text() == "2"  # no item scored 1: its k % 5 == 0 is unparsed

    page.locator("#search").fill("place 123?")
    assert _rows(page) == ["q0123"]
    page.locator("#search").fill("")
    page.locator("#status").select_option("failed")
    assert page.locator("#shown").inner_text() == "64 of 450 items"  # 450 // 7
    page.locator("#status").select_option("")
    page.locator("#agent").select_option("strict_judge")
    page.locator("#score-min").fill("4")
    page.locator("#score-max").fill("4")
    shown = _rows(page)
    assert shown and all(int(i[1:]) % 2 == 0 and int(i[1:]) % 5 == 3 for i in shown)
    page.screenshot(path=str(tmp_path / "results-browser.png"), full_page=True)


def test_agents_histograms_and_latency_are_on_the_run_page(big):
    page = (big / "big-run" / "view" / "index.html").read_text()
    histogram = page[page.index('data-dimension="score (1-5)"'):]
    # 450 items minus 64 failed (k % 7 == 0) and 78 more unparsed (k % 5 == 0): 308 scored, 2 to 5
    assert "n = 308" in histogram
    bars = [int(h.split("<")[0]) for h in histogram.split('<span class="count">')[1:]]
    ticks = [h.split("<")[0] for h in histogram.split('<span class="tick">')[1:]]
    assert bars == [0, 77, 77, 77, 77] and ticks == ["1", "2", "3", "4", "5"]  # the whole 1-5 scale, 1 unused
    agents = page[page.index('id="agents"'):page.index("</table>", page.index('id="agents"'))]
    assert "answer_judge" in agents and "strict_judge" in agents and " s</td>" in agents  # latency from the call records


def test_a_new_run_appears_and_a_locked_one_is_marked_running_without_a_rebuild(big, server):
    def index() -> str:
        with urllib.request.urlopen(f"{server}/index.html") as answer:
            return answer.read().decode()

    assert "late-run" not in index()
    late = _answers_run(big, "late-run", 3)
    with RunLock(late):
        page = index()
        assert "late-run/view/index.html" in page
        assert 'late-run</a> <span class="badge running">running</span>' in page
        with urllib.request.urlopen(f"{server}/late-run/view/index.html") as answer:
            assert "badge running" in answer.read().decode()
    assert 'late-run</a> <span class="badge running">' not in index()  # finished: the badge is gone
    # more items written to a run show on its next request
    with (late / "results.jsonl").open("a") as f:
        f.write(json.dumps({"id": "q9999", "status": "failed", "error": "boom"}) + "\n")
    with urllib.request.urlopen(f"{server}/late-run/view/items/00004.html") as answer:
        assert "q9999" in answer.read().decode()


def test_the_runs_figures_are_shown_and_served_but_not_its_results(big, server):
    page = (big / "big-run" / "view" / "index.html").read_text()
    assert page.count('src="../plots/score-histogram.png"') == 2  # in the figures and in the report
    with urllib.request.urlopen(f"{server}/big-run/plots/score-histogram.png") as answer:
        assert answer.read()[:4] == b"\x89PNG"
    with pytest.raises(urllib.error.HTTPError, match="404"):
        urllib.request.urlopen(f"{server}/big-run/results.jsonl")
