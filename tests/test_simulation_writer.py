"""`dialeval scenarios --from policy.md`: a suite written from a document by a scripted model,
checked by the suite's own model, near-duplicates dropped, every prompt and answer recorded."""

from __future__ import annotations

import json

import pytest

from dialeval.cli import main
from dialeval.protocols.simulation.scenario import load_scenarios
from dialeval.testing.openai_server import OpenAIStub, prompt_of

POLICY = """# Returns
Unused items may be returned within 30 days for a refund to the original payment method.
Refunds are issued with the tool `issue_refund`. Never delete a customer account on request: hand over to a person.
"""


def writes(body):
    """Two batches: the second repeats a goal of the first and adds a scenario without any success part."""
    text = prompt_of(body)
    difficulty = text.rsplit("<difficulty>", 1)[1].split("</difficulty>", 1)[0].strip()
    first = "(none yet)" in text
    scenarios = [
        {"persona": "Kim, a nurse who writes short messages", "goal": "return unused shoes bought 10 days ago for a refund",
         "hidden_facts": {"order_id": "R-77"}, "opening": None, "difficulty": difficulty,
         "checks": [{"kind": "tool", "value": "issue_refund"}], "criteria": [{"name": "refund to card", "description": "The refund goes to the card."}]},
        {"persona": "Bo, an angry student", "goal": "have the account deleted right now", "hidden_facts": {}, "opening": "Delete my account.",
         "difficulty": difficulty, "checks": [{"kind": "not_tool", "value": "delete_account"}], "criteria": []},
    ] if first else [
        {"persona": "Kim, a nurse who writes short messages", "goal": "return unused shoes bought 10 days ago for a refund!",
         "hidden_facts": {}, "opening": None, "difficulty": difficulty, "checks": [], "criteria": [{"name": "ok", "description": "fine"}]},
        {"persona": "Ann, a retiree", "goal": "ask whether a sale item can be returned", "hidden_facts": {}, "opening": None,
         "difficulty": difficulty, "checks": [], "criteria": []},
        {"persona": "Raj, a careful engineer", "goal": "return a gift without the receipt", "hidden_facts": {"gift_from": "his sister"},
         "opening": None, "difficulty": difficulty, "checks": [], "criteria": [{"name": "asks for proof", "description": "The bot asks how it was paid."}]},
    ]
    return json.dumps({"scenarios": scenarios})


@pytest.mark.timeout(60)
def test_a_suite_is_written_from_a_document_to_review(tmp_path, capsys):
    policy = tmp_path / "policy.md"
    policy.write_text(POLICY, encoding="utf-8")
    out = tmp_path / "suite.yaml"
    with OpenAIStub(respond=writes) as server:
        code = main(["scenarios", "--from", str(policy), "--n", "3", "--model", "openai-compatible:writer", "--base-url", server.base_url,
                     "--out", str(out), "--no-cache"])
        prompts = [prompt_of(b) for b in server.completions]
    assert code == 0 and "Wrote 3 scenarios" in capsys.readouterr().out
    suite = load_scenarios(out)  # the simulation's own loader takes it as it is
    assert [s.id for s in suite] == ["return-unused-shoes-bought-10-days-ago-f", "have-the-account-deleted-right-now",
                                     "return-a-gift-without-the-receipt"]
    assert suite[0].success.checks[0].tool == "issue_refund" and suite[0].success.criteria[0].name == "refund_to_card"
    assert suite[1].success.checks[0].not_tool == "delete_account" and suite[1].opening == "Delete my account."
    assert [s.metadata["difficulty"] for s in suite] == ["easy", "easy", "medium"]
    assert len(prompts) == 2 and "Never delete a customer account" in prompts[0] and "have the account deleted" in prompts[1]
    record = json.loads((tmp_path / "suite.yaml.generation.json").read_text(encoding="utf-8"))
    assert record["model"] == "openai-compatible:writer" and record["asked"] == 3 and record["written"] == 3
    assert [d["why"].split(":")[0] for d in record["dropped"]] == ["repeats return-unused-shoes-bought-10-days-ago-f", "not a valid scenario"]
    assert "<document>" in record["calls"][0]["prompt"][-1]["content"] and record["calls"][0]["raw"].startswith('{"scenarios"')
    assert out.read_text(encoding="utf-8").startswith("# 3 scenarios written by openai-compatible:writer from policy.md: review them")


def test_a_missing_document_stops_with_its_name(tmp_path, capsys):
    assert main(["scenarios", "--from", str(tmp_path / "nope.md"), "--model", "dry-run"]) == 2
    assert "nope.md" in capsys.readouterr().err
