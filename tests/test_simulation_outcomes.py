"""tau-bench-grade outcomes without a model: actions compared as trajectories, calls the bot
must never make, the final state of its environment, and what each does to the stop rule."""

from __future__ import annotations

import json

import pytest

from dialeval.errors import DataError
from dialeval.protocols.simulation.environment import check_state
from dialeval.protocols.simulation.rules import actions_of, checks_of, outcome, stop_reason
from dialeval.protocols.simulation.scenario import Actions, load_scenarios
from tests.simulation_helpers import REFUND, suite


def bot_turn(number: int, *calls: tuple[str, dict], text: str = "") -> dict:
    made = [{"id": f"c{number}{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}} for i, (n, a) in enumerate(calls)]
    return {"number": number, "role": "assistant", "messages": [{"role": "assistant", "content": text, "tool_calls": made}]}


USER = {"number": 1, "role": "user", "text": "hi"}
LOOKUP, CANCEL, REFUND_CALL = ("get_order", {"order_id": "W1"}), ("cancel_order", {"order_id": "W1", "reason": "mistake"}), ("refund", {"order_id": "W1"})


@pytest.mark.parametrize("match, made, passed, missing, extra", [
    ("strict", [LOOKUP, CANCEL], True, [], []),
    ("strict", [CANCEL, LOOKUP], False, ["get_order(order_id='W1')", "cancel_order(order_id='W1')"],
     ["cancel_order(order_id='W1', reason='mistake')", "get_order(order_id='W1')"]),
    ("unordered", [CANCEL, LOOKUP], True, [], []),
    ("unordered", [LOOKUP, CANCEL, REFUND_CALL], False, [], ["refund(order_id='W1')"]),
    ("superset", [LOOKUP, CANCEL, REFUND_CALL], True, [], ["refund(order_id='W1')"]),
    ("superset", [LOOKUP], False, ["cancel_order(order_id='W1')"], []),
    ("subset", [LOOKUP], True, ["cancel_order(order_id='W1')"], []),
    ("subset", [], True, ["get_order(order_id='W1')", "cancel_order(order_id='W1')"], []),
    ("subset", [LOOKUP, REFUND_CALL], False, ["cancel_order(order_id='W1')"], ["refund(order_id='W1')"]),
])
def test_actions_are_compared_in_the_four_trajectory_modes(match, made, passed, missing, extra):
    actions = Actions.model_validate({"match": match, "calls": [{"name": "get_order", "args": {"order_id": "W1"}},
                                                                {"name": "cancel_order", "args": {"order_id": "W1"}}]})
    result = actions_of(actions, [USER, bot_turn(2, *made)])
    assert (result["passed"], result["missing"], result["extra"]) == (passed, missing, extra)


def test_a_wanted_call_with_fewer_arguments_does_not_take_the_only_fit_of_another():
    # get_order{} fits both made calls; get_order{W2} fits only the second: the pairing must find both
    actions = Actions.model_validate({"match": "unordered", "calls": [{"name": "get_order"}, {"name": "get_order", "args": {"order_id": "W2"}}]})
    made = bot_turn(2, ("get_order", {"order_id": "W2"}), ("get_order", {"order_id": "W1"}))
    assert actions_of(actions, [USER, made])["passed"] is True


def test_a_call_the_bot_must_never_make_neither_ends_the_conversation_nor_passes_once_made(tmp_path):
    scenario_never = {**REFUND, "success": {"checks": [{"not_tool": "refund", "args": {"order_id": "W1"}}]}}
    [never] = load_scenarios(suite(tmp_path, scenario_never))
    quiet = [USER, bot_turn(2, text="Let me look.")]
    assert stop_reason(never, quiet, []) is None  # nothing asked for happened yet: go on
    assert checks_of(never, quiet) == [{"check": "never called refund(order_id='W1')", "passed": True}]
    assert checks_of(never, [USER, bot_turn(2, REFUND_CALL)])[0]["passed"] is False
    assert checks_of(never, [USER, bot_turn(2, ("refund", {"order_id": "W9"}))])[0]["passed"] is True
    wanted = {**REFUND, "success": {"actions": {"match": "superset", "calls": [{"name": "cancel_order"}]}, "checks": [{"not_tool": "refund"}]}}
    [both] = load_scenarios(suite(tmp_path, wanted, name="b.yaml"))
    assert stop_reason(both, [USER, bot_turn(2, CANCEL)], []) == "checks_passed"
    assert stop_reason(both, [USER, bot_turn(2, CANCEL, REFUND_CALL)], []) is None  # a forbidden call: the user goes on


def env_answers(session_id):
    if session_id == "boom":
        raise ZeroDivisionError("division by zero")
    return {"ok": True, "bad": {"passed": False, "reason": "W1 still pending"}, "odd": "yes"}[session_id]


async def async_env(session_id):
    return session_id == "ok"


@pytest.mark.parametrize("session, passed, reason", [
    ("ok", True, None), ("bad", False, "W1 still pending"),
    ("odd", None, "the check returned str, not a bool or {passed, reason}"),
    ("boom", None, "the check raised ZeroDivisionError: division by zero"),
])
async def test_the_state_check_answers_or_says_it_could_not(session, passed, reason):
    # a check that raises or answers another shape decides nothing
    result = await check_state("tests.test_simulation_outcomes:env_answers", session)
    assert (result["passed"], result["reason"]) == (passed, reason)
    assert (await check_state("tests.test_simulation_outcomes:async_env", session))["passed"] is (session == "ok")


def test_outcome_needs_every_deterministic_part_and_a_state_that_could_say():
    checks = [{"check": "said 'ok'", "passed": True}]
    good_actions, bad_actions = {"passed": True}, {"passed": False}
    assert outcome("user_stop", checks, [], [], good_actions, {"passed": True}) == "success"
    assert outcome("user_stop", checks, [], [], bad_actions, {"passed": True}) == "failure"
    assert outcome("user_stop", checks, [], [], good_actions, {"passed": False}) == "failure"
    assert outcome("user_stop", checks, [], [], good_actions, {"passed": None}) == "judge_failure"


def test_a_state_function_that_cannot_be_imported_stops_the_run_at_load(tmp_path):
    from dialeval.protocols.simulation.suite import load

    bad = {**REFUND, "success": {"state": "tests.test_simulation_outcomes:no_such_check"}}
    with pytest.raises(DataError) as err:
        load(suite(tmp_path, bad), {"bot": "tests.simulation_helpers:reply"})
    assert "record 1 (id='refund')" in str(err.value) and "field 'success.state'" in str(err.value) and "no_such_check" in str(err.value)


@pytest.mark.parametrize("typo, field, fix", [
    ({"hiden_facts": {"a": "b"}}, "hiden_facts", "hidden_facts"),
    ({"success": {"acions": {"calls": []}, "checks": [{"said": "x"}]}}, "success.acions", "actions"),
    ({"success": {"checks": [{"not_tol": "refund"}]}}, "success.checks.0.not_tol", "not_tool"),
])
def test_a_misspelt_scenario_field_gets_the_closest_name(tmp_path, typo, field, fix):
    with pytest.raises(DataError) as err:
        load_scenarios(suite(tmp_path, {**REFUND, **typo}))
    assert f"field '{field}'" in str(err.value) and f"did you mean '{fix}'" in str(err.value)
