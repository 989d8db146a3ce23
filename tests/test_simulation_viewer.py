"""The viewer's simulation pages tell the truth, read in headless Chromium: outcome badges by
outcome, the scenario's persona, goal, facts, checks and actions in a box, every simulator and
auditor call with its role, prompt and raw answer, labels as words, an outcome column and filter."""

from __future__ import annotations

import json

import pytest

from dialeval.evaluation import run
from dialeval.report.viewer import write_site
from dialeval.testing.openai_server import OpenAIStub
from tests.dialogue_helpers import fake_embed
from tests.helpers import http_config
from tests.simulation_helpers import REFUND, models, suite, user_says

GREEN, RED, AMBER = "rgb(26, 127, 55)", "rgb(207, 34, 46)", "rgb(154, 103, 0)"


def three_ways(number, conversation):
    """Dana gets her refund; Robo leaves its persona (a simulator failure); Sam never gets a reply that passes."""
    if "Robo" in conversation:
        return {"message": "As an AI language model, I cannot own a blender.", "stop": None, "notes": {}}
    return user_says(number, conversation)


def by_persona(body):
    from dialeval.testing.openai_server import prompt_of

    text = prompt_of(body)
    if "You play a person" in text and "Robo, a test robot" in text:  # the persona, not the conversation, says who
        return json.dumps(three_ways(1, "Robo"))
    return models(body)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)
    tmp_path = tmp_path_factory.mktemp("simulation-view")
    robot = {**REFUND, "id": "robot", "persona": "Robo, a test robot"}
    stubborn = {**REFUND, "id": "stubborn", "max_turns": 1,
                "success": {"actions": {"match": "strict", "calls": [{"name": "issue_refund", "args": {"order_id": "A123"}}]},
                            "checks": [{"not_tool": "delete_account"}, {"said": "RMA-"}]}}
    with OpenAIStub(respond=by_persona) as server:
        config = http_config(tmp_path, {"spec": "openai-compatible:stub", "base_url": server.base_url},
                             options={"bot": "tests.simulation_helpers:reply"})
        result = run("simulation", str(suite(tmp_path, REFUND, robot, stubborn)), config, progress=False)
    monkeypatch.undo()
    write_site(result.run_dir.parent)
    return result


def test_the_item_pages_badge_box_calls_and_words(site, browser):
    outcomes = {r["id"]: r["outcome"] for r in site.records}
    assert outcomes == {"refund#1": "success", "robot#1": "simulator_failure", "stubborn#1": "failure"}
    view = site.run_dir / "view"
    page = browser.new_page()
    colours, pages = {}, {}
    for path in sorted((view / "items").glob("0000?.html")):
        page.goto(path.as_uri())
        item = page.locator("h1").inner_text().split()[1]
        badge = page.locator("h1 .badge")
        colours[item] = (badge.inner_text(), badge.evaluate("b => getComputedStyle(b).backgroundColor"))
        pages[item] = path
    assert colours == {"refund#1": ("SUCCESS", GREEN), "robot#1": ("SIMULATOR FAILURE", AMBER), "stubborn#1": ("FAILURE", RED)}

    page.goto(pages["stubborn#1"].as_uri())
    box = page.locator(".bubble.system").inner_text()  # the stubborn scenario's box, as the suite states it
    for line in ("persona: Dana, a busy teacher who bought a blender online", "goal: get a refund for the blender that arrived broken",
                 "hidden facts: order_number = A123", 'actions (strict): issue_refund({"order_id": "A123"})',
                 "check: not tool delete_account", "check: said RMA-"):
        assert line in box
    whole = page.locator("#whole .verdict")
    assert whole.first.locator(".badge").evaluate("b => getComputedStyle(b).backgroundColor") == RED
    assert "failed" in page.locator("#whole [data-criterion='actions (strict)']").inner_text()

    page.goto(pages["refund#1"].as_uri())
    roles = page.locator("#call-list td:nth-child(3)").all_inner_texts()
    assert roles[:3] == ["user_simulator", "user_simulator", "simulation_auditor"]
    calls = page.locator("section.call")
    first = calls.first.text_content()  # the prompt and the raw answer sit in closed <details>
    assert "no prompt recorded" not in first and "prompt (2 messages)" in first and "You play a person" in first
    assert "(no answer)" not in first and '"message": "Hi, my blender arrived broken' in first
    audit = calls.nth(2).text_content()
    assert "role simulation_auditor" in " ".join(audit.split()) and "<turns_to_check>" in audit and "keeps the rules" in audit
    scores = page.locator("table").filter(has_text="success").first.inner_text()
    assert "refund_given" in scores and "(yes)" in scores and "(success)" in scores  # labels as words beside their numbers


def test_the_run_table_has_an_outcome_column_and_filter(site, browser):
    page = browser.new_page()
    page.goto((site.run_dir / "view" / "index.html").as_uri())
    badges = page.locator("#item-rows .badge.outcome")
    assert sorted(badges.all_inner_texts()) == ["FAILURE", "SIMULATOR FAILURE", "SUCCESS"]  # words, upper-cased by the badge style
    page.locator("#outcome").select_option("simulator_failure")
    assert page.locator("#item-rows tr a").all_inner_texts() == ["robot#1"]
    assert page.locator("#item-rows .badge.outcome").evaluate("b => getComputedStyle(b).backgroundColor") == AMBER
