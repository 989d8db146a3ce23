"""Every conversational benchmark's item page reads turn by turn: VDAct, MMDU, MMRC and MDSEval
runs over the bundled fixtures (dry-run model: placeholder answers, no model), read as pages
and, for MMDU, in headless Chromium."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dialeval.config import ModelSettings, RunConfig
from dialeval.report.viewer import write_site
from dialeval.evaluation import run
from tests.viewer_helpers import serving

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"
RUNS = {
    "vdact": (FIXTURES / "vdact_demo" / "predictions" / "demo-bot.json", {}),
    "mmdu": (FIXTURES / "mmdu_demo.json", {}),
    "mmrc": (FIXTURES / "mmrc_demo.json", {"note_taking": "off", "replies": "recorded"}),  # no note store: quicker
    "mdseval": (FIXTURES / "mdseval_demo.json", {"image_dir": str(FIXTURES / "mdseval_images")}),
}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("conversations") / "runs"
    for name, (data, options) in RUNS.items():
        config = RunConfig(model=ModelSettings(spec="dry-run"), output_dir=str(runs), cache_path=None, run_id=name, limit=1,
                           options=options)
        run(name, data, config, progress=False)
    write_site(runs)
    return runs


def _page(site: Path, name: str) -> str:
    return (site / name / "view" / "items" / "00001.html").read_text(encoding="utf-8")


def _thumbs(site: Path, name: str, page: str) -> list[Path]:
    files = [site / name / "view" / m for m in re.findall(r'<img src="\.\./(thumbs/[0-9a-f]+\.png)"', page)]
    assert files and all(f.stat().st_size < 40_000 for f in files)  # small files, by URL
    assert "base64" not in page
    return files


def test_vdact_shows_question_reference_answer_score_and_rationale_per_turn(site):
    page = _page(site, "vdact")
    turn = page[page.index('id="turn-1"'):page.index('id="turn-2"')]
    assert "What is the first thing the man does?" in turn  # from the data file: records keep no question
    assert re.search(r"He goes into the kitchen\..*reference</span> He walks from the bedroom to the kitchen\.", turn, re.DOTALL)
    assert re.search(r'data-criterion="rating">.*<span class="score">\d</span>.*<div class="rationale">The candidate answer', turn, re.DOTALL)
    assert "video summary" in page


def test_mmdu_shows_each_question_with_its_images_and_the_judges_dimensions(site):
    page = _page(site, "mmdu")
    first = page[page.index('id="turn-1"'):page.index('id="turn-1-answer"')]
    assert len(_thumbs(site, "mmdu", first)) == 2  # the turn's two charts
    answer = page[page.index('id="turn-1-answer"'):page.index('id="turn-2"')]
    assert "reference</span>" in answer and 'data-criterion="Overall Score"' in answer and "dry-run placeholder" in answer


def test_mmrc_shows_the_conversation_then_each_probe_question_and_its_score(site):
    page = _page(site, "mmrc")
    conversation, probes = page.split("<h3>Probe questions</h3>")
    assert "balcony garden" in conversation and _thumbs(site, "mmrc", conversation)
    assert "List all the plants the user is growing on the balcony." in probes
    assert "Tomatoes, basil and mint." in probes  # the reference
    assert 'data-criterion="IE score (0-5)"' in probes and "notes off" in probes


def test_mmrc_shows_the_replies_the_model_saw_live_or_recorded_and_says_which(site, tmp_path):
    recorded = _page(site, "mmrc").split("<h3>Probe questions</h3>")[0]
    assert "recorded reply (data file)" in recorded and "live reply" not in recorded
    config = RunConfig(model=ModelSettings(spec="dry-run"), output_dir=str(tmp_path), cache_path=None, run_id="live", limit=1,
                       options={"note_taking": "off", "replies": "live"})
    result = run("mmrc", FIXTURES / "mmrc_demo.json", config, progress=False)
    replies = result.records[0]["replies"]
    assert replies and {r["status"] for r in replies} == {"ok"}
    write_site(tmp_path)
    conversation = _page(tmp_path, "live").split("<h3>Probe questions</h3>")[0]
    assert conversation.count("live reply of the model under test") == len(replies)
    assert "recorded reply (data file)" not in conversation  # the data file's replies were never shown to the model
    assert replies[0]["text"] in conversation


def test_mdseval_shows_the_dialogue_with_its_image_and_each_summary_with_its_scores(site):
    page = _page(site, "mdseval")
    conversation, summaries = page.split("<h3>Candidate summaries</h3>")
    assert "dialogue statements" in conversation and _thumbs(site, "mdseval", conversation)
    assert "summary 0" in summaries and 'data-criterion="pointwise coherence"' in summaries
    assert "faithfulness (summary)" in summaries


def test_a_kgds_item_page_shows_the_sample_as_json_not_a_python_repr(tmp_path):
    config = RunConfig(model=ModelSettings(spec="dry-run"), output_dir=str(tmp_path), cache_path=None, run_id="kgds", limit=1)
    run("kgds", FIXTURES / "kgds_demo.json", config, progress=False)
    write_site(tmp_path)
    page = _page(tmp_path, "kgds")
    shown = page[page.index('id="data-item"'):page.index("</pre>", page.index('id="data-item"'))]
    assert "Paragraph(" not in shown and "paragraph_index=" not in shown
    assert "&#34;paragraph_index&#34;: 1" in shown or '"paragraph_index": 1' in shown


def test_the_mmdu_dialogue_reads_in_a_browser(site, browser, tmp_path):
    with serving(site) as base:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(f"{base}/mmdu/view/items/00001.html")
        images = page.locator("#turn-1 .images img")
        assert images.count() == 2
        widths = [images.nth(k).evaluate("img => img.naturalWidth") for k in range(2)]
        assert all(0 < w <= 240 for w in widths)  # loaded, and small
        assert page.evaluate("document.documentElement.scrollWidth") <= 1200  # no page stretched by an image
        assert page.locator("#turn-1-answer .verdict[data-criterion='Overall Score'] .score").inner_text() != ""
        page.screenshot(path=str(tmp_path / "mmdu.png"))


