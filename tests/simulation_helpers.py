"""Builders shared by the simulation tests: a scenario suite, a scripted model server's
answers (simulated user, auditor, judge), and bots of every kind."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph

from dialeval.testing.openai_server import prompt_of

REFUND = {
    "id": "refund",
    "persona": "Dana, a busy teacher who bought a blender online",
    "goal": "get a refund for the blender that arrived broken",
    "hidden_facts": {"order_number": "A123"},
    "max_turns": 4,
    "success": {
        "criteria": [{"name": "refund_given", "description": "The bot issued a refund for the broken blender.", "scale": ["yes", "no"]}],
        "checks": [{"pattern": "RMA-\\d{6}"}],
    },
}
GOOD_BOT = ["Sorry to hear that! What is your order number?", "Thanks. Refund RMA-123456 is issued for order A123."]


def suite(tmp_path: Path, *scenarios: dict[str, Any], name: str = "suite.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(list(scenarios or [REFUND]), sort_keys=False), encoding="utf-8")
    return path


def last_block(text: str, tag: str) -> str:
    """The text of the last ``<tag>`` block of a prompt (the system prompt names the tags too)."""
    return text.rsplit(f"<{tag}>", 1)[1].split(f"</{tag}>", 1)[0].strip()


def user_says(number: int, conversation: str) -> dict[str, Any]:
    """The scripted simulated user: opens, gives the order number when asked, stops once refunded."""
    if "RMA-" in conversation:
        return {"message": "Great, thank you!", "stop": "goal_reached", "notes": {}}
    if number == 1:
        return {"message": "Hi, my blender arrived broken and I would like a refund.", "stop": None, "notes": {"persona": {"name": "Dana"}}}
    if "order number" in conversation:
        return {"message": "It is A123.", "stop": None, "notes": {"revealed": {"order_number": "A123"}}}
    return {"message": "Can you help me with the refund?", "stop": None, "notes": {}}


def models(body: dict[str, Any], user: Any = user_says) -> str:
    """Simulated user, auditor (per turn or over the conversation) and judge of one scripted
    server, told apart by their prompts. The auditor flags a simulated turn that speaks as an AI; the judge says yes when a refund number was given."""
    text = prompt_of(body)
    if "You play a person" in text:
        number = int(re.search(r"your message number (\d+)", text).group(1))
        return json.dumps(user(number, last_block(text, "conversation")))
    if "<turns_to_check>" in text:  # the conversation audit: flags user turns that speak as an AI
        lines = re.findall(r"\[turn (\d+)\] User: (.*)", last_block(text, "conversation"))
        found = [{"turn": int(n), "rule": "persona", "evidence": said} for n, said in lines if "as an ai" in said.lower()]
        return json.dumps({"rationale": "speaks as a model" if found else "keeps the rules", "findings": found})
    if "You check a simulated user" in text:
        turn = last_block(text, "simulated_turn")
        if "as an ai" in turn.lower():
            return json.dumps({"rationale": "speaks as a model", "findings": [{"rule": "persona", "evidence": "As an AI"}]})
        return json.dumps({"rationale": "keeps the rules", "findings": []})
    conversation = last_block(text, "conversation")
    verdict = "yes" if "RMA-" in conversation else "no"
    return json.dumps({"rationale": "a refund number was given" if verdict == "yes" else "no refund", "verdict": verdict})


# ---------------------------------------------------------------- bots the tests import by name


def reply(messages: list[dict[str, Any]], session_id: str) -> str:
    """A sync callable bot: asks for the order number, then refunds."""
    users = [m for m in messages if m["role"] == "user"]
    return GOOD_BOT[min(len(users), 2) - 1]


async def refund_with_tool(messages: list[dict[str, Any]], session_id: str) -> list[dict[str, Any]]:
    """An async callable bot whose second turn is a tool call, its result and a text message."""
    users = [m for m in messages if m["role"] == "user"]
    if len(users) == 1:
        return [{"role": "assistant", "content": GOOD_BOT[0]}]
    call = {"id": "c1", "type": "function", "function": {"name": "issue_refund", "arguments": json.dumps({"order_id": "A123"})}}
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "RMA-654321"},
        {"role": "assistant", "content": "Done: refund RMA-654321."},
    ]


def flaky(messages: list[dict[str, Any]], session_id: str) -> str:
    """Refunds in every run but the second (session ids end with the trial)."""
    users = [m for m in messages if m["role"] == "user"]
    if len(users) >= 2 and session_id.endswith("#2") and "refund" in session_id:
        return "Sorry, I cannot find that order."
    return GOOD_BOT[min(len(users), 2) - 1]


def http_reply(body: dict[str, Any]) -> dict[str, Any]:
    """The HTTP bot's answer to a request with the default body (``messages``): the same replies as :func:`reply`."""
    return {"reply": reply(body["messages"], body["session_id"])}


def _graph_reply(state: MessagesState) -> dict[str, Any]:
    users = [m for m in state["messages"] if m.type == "human"]
    return {"messages": [AIMessage(GOOD_BOT[min(len(users), 2) - 1])]}


def build_bot_graph() -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("answer", _graph_reply)
    builder.add_edge(START, "answer")
    return builder.compile()


BOT_GRAPH = build_bot_graph()
