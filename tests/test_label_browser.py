"""`dialeval label` in headless Chromium: label three conversations (keys and clicks, one N/A),
reload and resume where it stopped, a second annotator and the agreement so far; the labels
file is the one `dialeval trust` reads."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from dialeval.trust.labelling.server import make_server
from dialeval.trust.labelling.session import Session
from tests.dialogue_helpers import write_jsonl
from tests.viewer_helpers import running

RUBRIC = """criteria:
  - name: helpfulness
    level: turn
    description: Does the reply help?
    scale: [1, 5]
  - name: resolved
    level: conversation
    description: Was the user's problem solved?
    scale: [yes, no]
"""


def chats() -> list[dict]:
    return [{"id": f"c{c}", "messages": [
        {"role": "user", "content": f"Question one of chat {c}?"}, {"role": "assistant", "content": f"Answer one of chat {c}."},
        {"role": "user", "content": "And then?"}, {"role": "assistant", "content": f"Answer two of chat {c}."},
    ]} for c in range(4)]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "rubric.yaml").write_text(RUBRIC, encoding="utf-8")
    return {"data": write_jsonl(tmp_path / "chats.jsonl", chats()), "rubric": tmp_path / "rubric.yaml",
            "labels": tmp_path / "labels.jsonl"}


@contextmanager
def serving(session: Session):
    with running(make_server(session, port=0)) as base:
        yield base


def session(files: dict[str, Path], annotator: str) -> Session:
    return Session(files["data"], str(files["rubric"]), annotator, files["labels"])


def label_one(page, turn_keys: list[str], resolved: str) -> None:
    """Two turns by keyboard, the conversation criterion by a click, then Enter."""
    for key in turn_keys:
        page.keyboard.press(key)
    page.click(f"#conversation-criteria .unit button.v:text-is('{resolved}')")
    page.keyboard.press("Enter")


@pytest.mark.timeout(120)
def test_label_three_conversations_reload_and_resume(files, browser):
    with serving(session(files, "dana")) as base:
        page = browser.new_page()
        page.goto(base + "/")
        page.wait_for_selector("#title:has-text('Conversation c0')")
        assert page.inner_text("#progress").startswith("0 of 4")
        label_one(page, ["4", "2"], "yes")
        page.wait_for_selector("#title:has-text('Conversation c1')")
        # c1: the first turn N/A with a reason, the second by a click
        page.once("dialog", lambda dialog: dialog.accept("the user asked nothing"))
        page.keyboard.press("n")
        page.click(".unit[data-unit='4/helpfulness'] button.v:text-is('5')")
        label_one(page, [], "no")
        page.wait_for_selector("#title:has-text('Conversation c2')")
        page.keyboard.press("Enter")  # nothing labelled yet: the page says what is missing and saves nothing
        assert "3 units still need a label" in page.inner_text("#message")
        label_one(page, ["3", "3"], "yes")
        page.wait_for_selector("#title:has-text('Conversation c3')")
        page.reload()  # resume: the first unlabelled conversation, the progress kept
        page.wait_for_selector("#title:has-text('Conversation c3')")
        assert page.inner_text("#progress").startswith("3 of 4")
        page.click("#prev")
        assert page.is_visible(".unit[data-unit='2/helpfulness'] button.v.on:text-is('3')")  # c2's labels are shown again
        page.close()
    rows = [json.loads(line) for line in files["labels"].read_text().splitlines()]
    assert {"id": "c1", "turn": 2, "criterion": "helpfulness", "score": "N/A (the user asked nothing)", "annotator": "dana"} in rows
    assert {"id": "c0", "criterion": "resolved", "score": "yes", "annotator": "dana"} in rows
    assert [r["score"] for r in rows if r["id"] == "c0" and r.get("turn")] == [4, 2] and len(rows) == 9
    from dialeval.trust import dialogue  # the card's reader: the N/A is no label, the rest are read

    with pytest.warns(dialogue.LabelWarning, match=r"1 N/A \(the user asked nothing\)"):
        read = dialogue.read_labels(files["labels"], dialogue.load_rubric(str(files["rubric"])), dialogue.load_conversations(files["data"]))
    assert ("c1/2", "helpfulness") not in read.by_unit and read.by_unit[("c1/4", "helpfulness")] == {"dana": 5.0}
    assert len(read.by_unit) == 8


@pytest.mark.timeout(120)
def test_a_second_annotator_sees_the_agreement_and_trust_reads_the_labels(files, browser):
    from dialeval.trust import dialogue

    dana, bo = session(files, "dana"), session(files, "bo")
    dana.save("c0", [{"turn": 2, "criterion": "helpfulness", "score": 4}, {"turn": 4, "criterion": "helpfulness", "score": 2},
                     {"turn": None, "criterion": "resolved", "score": "yes"}])
    with serving(bo) as base:
        page = browser.new_page()
        page.goto(base + "/")
        page.wait_for_selector("#title:has-text('Conversation c0')")
        assert page.inner_text("#agreement-box") == ""  # one annotator so far: no ceiling yet
        label_one(page, ["4", "3"], "yes")
        page.wait_for_selector("#agreement-box table")
        text = page.inner_text("#agreement-box")
        assert "helpfulness\t2\t2\t0.50" in text and "resolved\t1\t2\t1.00" in text
        page.close()
    labels = dialogue.read_labels(files["labels"], dialogue.load_rubric(str(files["rubric"])),
                                  dialogue.load_conversations(files["data"]))
    assert labels.by_unit[("c0/2", "helpfulness")] == {"dana": 4.0, "bo": 4.0}
    assert labels.by_unit[("c0/4", "helpfulness")] == {"dana": 2.0, "bo": 3.0}


def test_saving_again_replaces_and_bad_saves_are_refused(files):
    dana = session(files, "dana")
    first = [{"turn": 2, "criterion": "helpfulness", "score": 4}, {"turn": 4, "criterion": "helpfulness", "score": 2},
             {"turn": None, "criterion": "resolved", "score": "yes"}]
    dana.save("c0", first)
    dana.save("c0", [{**first[0], "score": 5}, *first[1:]])  # a correction replaces, never adds a second label
    rows = [json.loads(line) for line in files["labels"].read_text().splitlines()]
    assert len(rows) == 3 and rows[-3]["score"] == 5
    for bad, why in [({"turn": 3, "criterion": "helpfulness", "score": 4}, "not a unit"),
                     ({"turn": 2, "criterion": "helpfulness", "score": 7}, "not on helpfulness's scale"),
                     ({"turn": 2, "criterion": "helpfulness", "score": "N/A"}, "needs a reason")]:
        with pytest.raises(ValueError, match=why):
            dana.save("c0", [bad])
    with serving(dana) as base:  # the server refuses other hosts and other origins
        request = urllib.request.Request(base + "/api/save", data=b'{"id": "c0", "labels": []}', method="POST",
                                         headers={"Content-Type": "application/json", "Origin": "http://evil.example"})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(request)
        assert err.value.code == 403
        port = base.rsplit(":", 1)[1]
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(urllib.request.Request(base + "/api/state", headers={"Host": f"rebound.example:{port}"}))
        assert err.value.code == 421
    assert Session(files["data"], str(files["rubric"]), "x", files["labels"], sample=2, seed=1).state()["conversations"] == \
        Session(files["data"], str(files["rubric"]), "y", files["labels"], sample=2, seed=1).state()["conversations"]
