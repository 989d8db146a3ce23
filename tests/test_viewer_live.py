"""The viewer's server on a big run that keeps changing: a rewrite touches only the pages
whose item changed, and the index (and every page already there) is served while a run's
pages are being rewritten. The run folder is generated: 10,000 records, above the size
(``site.SMALL_RESULTS``) past which the index no longer waits for a run's pages."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import dialeval.report.viewer.site as site
from dialeval.config import RunConfig
from dialeval.report.viewer import write_site
from dialeval.evaluation import run
from tests.helpers import scripted
from tests.viewer_helpers import serving

DATA = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures" / "answers_demo.jsonl"
ITEMS = 10_000


def record(number: int) -> str:
    """One finished item of the answers benchmark, as the runner writes it (no calls: small)."""
    item = f"item-{number:05d}"
    return json.dumps({"id": item, "status": "ok", "result": {"id": item, "system": "bot", "pair": item, "score": 4, "calls": []}})


@pytest.fixture(scope="module")
def big_run(tmp_path_factory) -> Path:
    """A real run's folder (config, metrics, report) whose results hold 10,000 records: a big run."""
    root = tmp_path_factory.mktemp("big")
    settings, _ = scripted(respond=lambda messages: '{"rationale": "fine", "score": 4}')
    result = run("answers", DATA, RunConfig(model=settings, output_dir=str(root / "runs"), cache_path=None, run_id="big"), progress=False)
    (result.run_dir / "results.jsonl").write_text("".join(record(n) + "\n" for n in range(ITEMS)))
    assert not site.small(result.run_dir)  # big to the viewer: its pages are rewritten in the background
    return result.run_dir


@pytest.fixture
def counted(monkeypatch) -> list[int]:
    """The item numbers whose page was written (a stub page: these tests count pages, not read them)."""
    written: list[int] = []

    def write_item(out: Path, number: int, *args, **kwargs) -> Path:
        page = out / "items" / f"{number:05d}.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        if number == 1:  # the one page the test asks for
            page.write_text(f"item {number}")
        written.append(number)
        return page

    monkeypatch.setattr(site, "write_item", write_item)
    return written


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, ""


def test_only_changed_items_are_rewritten_and_the_index_is_served_meanwhile(big_run, counted, monkeypatch):
    runs = big_run.parent
    write_site(runs)
    assert len(counted) == ITEMS  # the first build writes every page
    counted.clear()

    # the run goes on: its metrics change and one more record comes; only the new item's
    # page and the page before it (which gains a "next" link) are written again
    started, release = threading.Event(), threading.Event()
    real_run_page = site.write_run_page

    def held_run_page(*args, **kwargs):
        started.set()
        release.wait(timeout=120)
        return real_run_page(*args, **kwargs)

    monkeypatch.setattr(site, "write_run_page", held_run_page)
    (big_run / "metrics.json").write_text((big_run / "metrics.json").read_text() + "\n")
    with (big_run / "results.jsonl").open("a") as fh:
        fh.write(record(ITEMS) + "\n")
    with serving(runs) as base:
        asked = threading.Thread(target=get, args=(f"{base}/big/view/index.html",))
        asked.start()
        assert started.wait(timeout=120)  # the run's pages are being rewritten now
        status, index = get(f"{base}/index.html")
        assert status == 200 and 'href="big/view/index.html"' in index  # served while the rewrite runs
        assert get(f"{base}/big/view/items/00001.html") == (200, "item 1")  # so is a page already there
        release.set()
        asked.join(timeout=120)
    assert sorted(counted) == [ITEMS, ITEMS + 1]


def test_a_nul_byte_in_an_address_is_not_found(tmp_path):
    (tmp_path / "index.html").write_text("runs")
    with serving(tmp_path) as base:
        assert get(f"{base}/index.html%00.png")[0] == 404
        assert get(f"{base}/some-run/view/%00/x.html")[0] == 404
