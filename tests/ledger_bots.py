"""Callable bots for the side-effect and no-hang tests: each call is booked in a ledger file
(``DIALEVAL_TEST_LEDGER``), as a real bot books an order, so a test counts repeated calls
across processes; ``DIALEVAL_TEST_HOLD`` names a file that holds one chosen turn open."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig

from tests.simulation_helpers import GOOD_BOT


def booking(messages: list[dict[str, Any]], session_id: str, turn_id: str | None = None) -> str:
    """Books the turn in the ledger, waits while the hold file names this turn, then answers as the good bot."""
    turn = sum(1 for m in messages if m["role"] == "user")
    with open(os.environ["DIALEVAL_TEST_LEDGER"], "a", encoding="utf-8") as ledger:
        ledger.write(json.dumps({"session": session_id, "turn": turn, "key": turn_id}) + "\n")
    hold = os.environ.get("DIALEVAL_TEST_HOLD", "")
    while hold and os.path.exists(hold) and open(hold, encoding="utf-8").read() == f"{session_id}:{turn}":
        time.sleep(0.05)
    return GOOD_BOT[min(turn, 2) - 1]


def sleeps_an_hour(messages: list[dict[str, Any]], session_id: str) -> str:
    time.sleep(3600)
    return "too late"


async def blocks_its_loop(messages: list[dict[str, Any]], session_id: str) -> str:
    time.sleep(3600)  # an async bot that blocks: the worst a bot can do to an event loop
    return "too late"


def exits(messages: list[dict[str, Any]], session_id: str) -> str:
    raise SystemExit(3)


async def interrupts(messages: list[dict[str, Any]], session_id: str) -> str:
    raise KeyboardInterrupt


def prints(messages: list[dict[str, Any]], session_id: str) -> str:
    print("debug: the bot was here")
    return GOOD_BOT[min(sum(1 for m in messages if m["role"] == "user"), 2) - 1]


def surrogate(messages: list[dict[str, Any]], session_id: str) -> str:
    return "Refund RMA-123456 \ud800 issued."


def nul(messages: list[dict[str, Any]], session_id: str) -> str:
    return "Refund\x00 RMA-123456 issued."


def undecodable(messages: list[dict[str, Any]], session_id: str) -> bytes:
    return b"Refund RMA-123456 \xff\xfe issued."


def huge(messages: list[dict[str, Any]], session_id: str) -> str:
    return "Refund RMA-123456 issued. " + "x" * 10_000_000


SEEN: list[Any] = []  # the turn ids the keyed bots received


def keyed(messages: list[dict[str, Any]], session_id: str, turn_id: str | None = None) -> str:
    SEEN.append(turn_id)
    return "Hi."


def _sleepy_node(state: Any) -> dict[str, Any]:
    time.sleep(3600)
    return {"messages": []}


def _keyed_node(state: Any, config: RunnableConfig) -> dict[str, Any]:
    SEEN.append(config["configurable"].get("turn_id"))
    return {"messages": [AIMessage("Hi from the graph.")]}


def one_node_graph(node: Any) -> Any:
    """A LangGraph graph over messages whose one node is ``node``."""
    from langgraph.graph import START, MessagesState, StateGraph

    builder = StateGraph(MessagesState)
    builder.add_node("answer", node)
    builder.add_edge(START, "answer")
    return builder.compile()


SLEEPY_GRAPH = one_node_graph(_sleepy_node)
KEYED_GRAPH = one_node_graph(_keyed_node)
