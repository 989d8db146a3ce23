"""`dialeval view` on a dialogue run: the conversation turn by turn, each verdict beside its turn."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dialeval.report.viewer import write_site
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub, prompt_of
from tests.dialogue_helpers import between, fake_embed, write_jsonl
from tests.helpers import http_config
from tests.viewer_helpers import serving

HOSTILE = "Sure! <script>document.title='pwned'</script> Take the 9:40 train."
RUBRIC = """criteria:
  - name: relevance
    description: Does the reply answer what the user just asked?
    scale: [1, 5]
  - name: faithfulness
    description: Is every claim backed by the documents?
    scale: [yes, no]
    needs: [grounding]
  - name: like_reference
    description: Does the reply say what the written reference says?
    scale: [1, 3]
    needs: [reference]
  - name: resolved
    level: conversation
    description: By the end, did the user get what they asked for?
    scale: [yes, no]
"""


def respond(body: dict) -> str:
    """Relevance 5 with a rationale naming the turn; turn 4 comes back off the scale; the
    fact checker splits replies at full stops and finds only the 9:40 train in the timetable."""
    text = prompt_of(body)
    if "atomic facts" in text:
        claim = text.rsplit("<text>", 1)[1].split("</text>", 1)[0]
        return json.dumps({"facts": [part.strip() for part in claim.split(". ") if part.strip()]})
    if "<facts>" in text:
        facts = between(text, "<facts>", "</facts>").splitlines()
        return json.dumps({"verdicts": [{"fact": i + 1, "reason": "timetable", "label": "supported" if "9:40" in f else "unsupported"}
                                        for i, f in enumerate(facts)]})
    if "name: resolved" in text:
        return '{"rationale": "the user has a train to take", "verdict": "yes"}'
    if "name: faithfulness" in text:
        return '{"rationale": "the timetable lists it", "verdict": "yes"}'
    turn = re.search(r'<reply turn="(\d+)">', text).group(1)
    if turn == "4":
        return '{"rationale": "cannot tell", "verdict": 11}'
    return f'{{"rationale": "turn {turn} answers the question", "verdict": 5}}'


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    from PIL import Image

    root = tmp_path_factory.mktemp("dialogue-view")
    (root / "pictures").mkdir()
    Image.new("RGB", (2, 2), "green").save(root / "pictures" / "ticket.png")  # the record keeps "ticket.png" only
    data = write_jsonl(root / "chats.jsonl", [{
        "id": "train",
        "messages": [
            {"role": "system", "content": "You help travellers with trains."},
            {"role": "user", "content": [{"type": "text", "text": "Which train gets me to Porto by noon?"},
                                         {"type": "image_url", "image_url": {"url": "pictures/ticket.png"}}]},
            {"role": "assistant", "content": HOSTILE},
            {"role": "user", "content": "And the one after that?"},
            {"role": "assistant", "content": "The 10:40 arrives at 13:30."},
        ],
        "grounding": ["Timetable: the 9:40 train from Lisbon reaches Porto at 11:55."],
    }])
    rubric = root / "rubric.yaml"
    rubric.write_text(RUBRIC)
    patch = pytest.MonkeyPatch()
    patch.setattr("dialeval.memory.embeddings.embed", fake_embed)
    try:
        with OpenAIStub(respond=respond) as server:
            config = http_config(root, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                                 options={"rubric": str(rubric)}, run_id="trains")
            run("dialogue", data, config, progress=False)
    finally:
        patch.undo()
    write_site(root / "runs")
    return root / "runs"


def _section(site: Path) -> str:
    page = (site / "trains" / "view" / "items" / "00001.html").read_text(encoding="utf-8")
    return page[page.index('<div id="conversation">'):]


def _turn(section: str, number: int) -> str:
    start = section.index(f'id="turn-{number}"')
    end = section.find('<div class="turn', start)
    return section[start:end if end > 0 else None]


def test_the_turns_are_shown_in_order_under_the_system_prompt(site):
    section = _section(site)
    texts = ["You help travellers with trains.", "Which train gets me to Porto by noon?",
             "Sure! &lt;script&gt;", "And the one after that?", "The 10:40 arrives at 13:30."]
    positions = [section.index(t) for t in texts]
    assert positions == sorted(positions)
    # the image is a thumbnail file beside the pages, never base64 text in the page
    thumb = re.search(r'<img src="\.\./(thumbs/[0-9a-f]+\.png)" alt="ticket.png"', _turn(section, 1)).group(1)
    assert (site / "trains" / "view" / thumb).stat().st_size < 2_000
    assert "base64" not in section


def test_each_criterion_sits_beside_its_turn_with_score_rationale_and_status(site):
    section = _section(site)
    second, fourth = _turn(section, 2), _turn(section, 4)
    assert re.search(r'data-criterion="relevance">.*?<span class="score">5</span>.*?>ok<.*?turn 2 answers the question',
                     second, re.DOTALL)
    assert re.search(r'data-criterion="faithfulness">.*?<span class="score">yes</span>.*?the timetable lists it', second, re.DOTALL)
    assert re.search(r'data-criterion="like_reference">.*?not applicable.*?no reference', second, re.DOTALL)
    # turn 4's answer was off the scale: unparsed, no score, the raw answer kept
    assert re.search(r'data-criterion="relevance">.*?>unparsed<', fourth, re.DOTALL)
    assert '<span class="score">' not in fourth.split('data-criterion="faithfulness"')[0]
    assert re.search(r"fact precision.*?0.0%.*?unsupported:.*?<li>The 10:40 arrives at 13:30.</li>", fourth, re.DOTALL)
    assert "&#34;verdict&#34;: 11" in fourth or "&quot;verdict&quot;: 11" in fourth
    whole = section[section.index('id="whole"'):]
    assert "resolved" in whole and "the user has a train to take" in whole and '<span class="score">yes</span>' in whole


def test_a_hostile_reply_shows_as_text(site):
    page = (site / "trains" / "view" / "items" / "00001.html").read_text(encoding="utf-8")
    assert "<script>document.title" not in page
    assert "Sure! &lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt; Take the 9:40 train." in page


def test_other_benchmarks_keep_their_item_pages(site):
    from dialeval.benchmarks import get_benchmark

    assert get_benchmark("answers").conversation_view is None


def test_the_conversation_reads_turn_by_turn_in_a_browser(site, browser, tmp_path):
    with serving(site) as base:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(f"{base}/trains/view/items/00001.html")
        assert page.title() != "pwned"
        assert page.locator("#turn-2 .bubble .text").inner_text() == HOSTILE  # the script is text
        assert page.locator("#turn-2 .verdict[data-criterion=relevance] .score").inner_text() == "5"
        assert page.locator("#turn-4 .verdict[data-criterion=relevance] .badge").inner_text().lower() == "unparsed"
        page.locator("#conversation").screenshot(path=str(tmp_path / "dialogue-view.png"))
