"""No viewer page grows with the data: a 50 MB conversation gives an item page that shows
its first turns and links the rest, and full-text pages of bounded size linked in order."""

from __future__ import annotations

import re
from pathlib import Path

from dialeval.report.view_rows import ConversationView, TurnRow
from dialeval.report.results import ItemResult
from dialeval.report.viewer.item_page import PAGE_TURNS, write_item
from dialeval.report.viewer.render import FULL_PAGE

TURNS, TURN_CHARS = 2_000, 25_000  # 50 MB of conversation


def turn(number: int) -> TurnRow:
    role = "user" if number % 2 else "assistant"
    return TurnRow(number=number, role=role, text=f"<turn {number}> " + "word " * (TURN_CHARS // 5))


def test_a_50_mb_conversation_gives_pages_of_bounded_size(tmp_path):
    conversation = ConversationView(system="Be helpful.", turns=[turn(n) for n in range(1, TURNS + 1)])
    row = ItemResult(id="long-1", status="ok", calls=[{"agent": "judge", "status": "ok", "raw": "{}", "value": {}}])
    run = {"name": "big-run", "benchmark": "dialogue"}
    page = write_item(tmp_path, 1, 1, row, run, {}, conversation, lambda source: None)

    html = page.read_text()
    assert len(html) < 1_000_000  # was 1.9 MB
    assert html.count('class="turn ') == PAGE_TURNS  # the first turns only
    more = re.search(r'(\d[\d,]*) more turns: <a href="([^"]+)">', html)
    assert more is not None and int(more.group(1).replace(",", "")) == TURNS - PAGE_TURNS

    # the rest, as text, part after part, each part bounded and linked to the next
    texts, address = [], more.group(2)
    while address:
        part = (page.parent / address).read_text()
        assert len(part) < FULL_PAGE * 1.3  # escaped text plus the page's frame
        texts.append(part)
        following = re.search(r'<a href="([^"]+)">part \d+ &rarr;</a>', part)
        address = str(Path(address).parent / following.group(1)) if following else ""
    assert len(texts) > 1
    whole = "".join(texts)
    assert "&lt;turn 201&gt;" in whole and f"&lt;turn {TURNS}&gt;" in whole
