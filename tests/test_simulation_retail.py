"""The bundled retail example (examples/retail): three tau-bench-style tasks judged by
actions, checks and the final state of the bot's database, against a LangGraph bot whose
model follows the shop's policy or breaks it; every model scripted on the test server."""

from __future__ import annotations

import pytest

from examples.retail import shop
from examples.retail.offline import simulate
from tests.dialogue_helpers import fake_embed


@pytest.fixture(autouse=True)
def _fast_embeddings(monkeypatch):
    monkeypatch.setattr("dialeval.memory.embeddings.embed", fake_embed)


@pytest.mark.timeout(120)
def test_the_good_bot_passes_every_task_on_actions_checks_and_state(tmp_path):
    result = simulate("good-agent", tmp_path)
    by_id = {r["id"]: r for r in result.records}
    assert {i: r["outcome"] for i, r in by_id.items()} == {"cancel-pending#1": "success", "return-lamp#1": "success",
                                                           "cancel-delivered#1": "success"}
    cancel = by_id["cancel-pending#1"]
    assert cancel["stop_reason"] == "checks_passed"  # the actions were made and the phrase said: the user need not stop
    assert cancel["actions"] == {"match": "unordered", "passed": True, "missing": [], "extra": [],
                                 "made": ["get_order(order_id='W1001')", "cancel_order(order_id='W1001', reason='ordered by mistake')"]}
    assert cancel["final_state"] == {"state": "examples.retail.shop:cancelled_by_mistake", "passed": True,
                                     "reason": "W1001 cancelled, nothing else changed"}
    # the task without an opening starts with a simulated turn, and the bot answers it
    lamp = by_id["return-lamp#1"]
    assert lamp["turns"][0]["role"] == "user" and not lamp["turns"][0].get("scripted") and lamp["turns"][1]["role"] == "assistant"
    assert result.metrics["suite"]["1"]["pass_hat_k"] == 1.0


@pytest.mark.timeout(120)
def test_the_faulty_bot_fails_every_task_for_the_reasons_recorded(tmp_path):
    result = simulate("faulty-agent", tmp_path)
    by_id = {r["id"]: r for r in result.records}
    assert {r["outcome"] for r in result.records} == {"failure"}
    cancel = by_id["cancel-pending#1"]  # cancelled, then refunded by hand: a call it must never make
    assert [c for c in cancel["checks"] if not c["passed"]] == [{"check": "never called refund_order()", "passed": False}]
    assert cancel["actions"]["extra"] == ["refund_order(order_id='W1001', amount=39.0)"] and not cancel["actions"]["passed"]
    assert cancel["final_state"]["passed"] is False and "refunds paid" in cancel["final_state"]["reason"]
    lamp = by_id["return-lamp#1"]  # the right call with one wrong argument: the strict trajectory and the state say so
    assert lamp["actions"]["missing"] == ["return_items(order_id='W2002', item_ids=['L7'], refund_to='original')"]
    assert lamp["final_state"]["passed"] is False and "gift_card" in lamp["final_state"]["reason"]
    delivered = by_id["cancel-delivered#1"]  # tried to cancel a delivered order, then refunded it
    assert [c["check"] for c in delivered["checks"] if not c["passed"]] == ["never called cancel_order()", "never called refund_order()"]
    assert delivered["final_state"] == {"state": "examples.retail.shop:nothing_changed", "passed": False, "reason": None}
    assert result.metrics["suite"]["1"]["pass_hat_k"] == 0.0
    assert shop.database("sim-cancel-delivered#1")["refunds"] == [{"order_id": "W3003", "amount": 74.0}]
