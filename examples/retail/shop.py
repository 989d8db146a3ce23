"""A small retail support bot for the simulation benchmark's worked example.

The bot is a LangGraph graph: a chat model bound to four tools over an in-memory order
database, one database per session id (the simulation calls the bot with one session id
per conversation, and a scenario's ``success.state`` function reads the database back by
it). The functions at the bottom are those ``state`` checks, one per task of
``tasks.yaml``. The model is any OpenAI-compatible chat model: ``RETAIL_BOT_MODEL``,
``RETAIL_BOT_BASE_URL`` and ``RETAIL_BOT_API_KEY`` (else the OpenAI SDK's own variables).
"""

from __future__ import annotations

import copy
import json
import os
import threading
from typing import Any

from langchain_core.messages import SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

POLICY = """You are the support agent of an online shop. Before you change an order, look it up.
A pending order may be cancelled (ask the reason: "ordered by mistake" or "no longer needed");
its payment goes back on its own, so never refund it separately. A delivered order cannot be
cancelled; its items may be returned, refunded to the original payment method unless the
customer asks otherwise. Never pay a refund the policy does not call for."""

SEED: dict[str, dict[str, Any]] = {
    "W1001": {"status": "pending", "items": {"K2": "kettle"}, "payment": "card", "total": 39.0},
    "W2002": {"status": "delivered", "items": {"L7": "desk lamp", "B3": "bookend"}, "payment": "card", "total": 58.0},
    "W3003": {"status": "delivered", "items": {"C5": "coffee grinder"}, "payment": "paypal", "total": 74.0},
}
_DATABASES: dict[str, dict[str, Any]] = {}
_LOCK = threading.Lock()


def database(session_id: str) -> dict[str, Any]:
    """The session's database: the seed orders, and the refunds paid."""
    with _LOCK:
        return _DATABASES.setdefault(session_id, {"orders": copy.deepcopy(SEED), "refunds": []})


def reset() -> None:
    """Every session's database back to the seed (session ids repeat from one run to the next)."""
    with _LOCK:
        _DATABASES.clear()


def _session(config: RunnableConfig) -> dict[str, Any]:
    return database(str((config.get("configurable") or {}).get("thread_id", "default")))


@tool
def get_order(order_id: str, config: RunnableConfig) -> str:
    """Look up an order: its status, items, payment method and total."""
    order = _session(config)["orders"].get(order_id)
    return json.dumps(order) if order else f"error: no order {order_id}"


@tool
def cancel_order(order_id: str, reason: str, config: RunnableConfig) -> str:
    """Cancel a pending order; reason is 'ordered by mistake' or 'no longer needed'."""
    order = _session(config)["orders"].get(order_id)
    if not order or order["status"] != "pending":
        return f"error: order {order_id} is not pending and cannot be cancelled"
    order.update(status="cancelled", cancel_reason=reason)
    return f"order {order_id} cancelled; {order['total']} goes back to the {order['payment']}"


@tool
def return_items(order_id: str, item_ids: list[str], refund_to: str, config: RunnableConfig) -> str:
    """Start the return of items of a delivered order; refund_to is 'original' or 'gift_card'."""
    order = _session(config)["orders"].get(order_id)
    if not order or order["status"] != "delivered" or not set(item_ids) <= set(order["items"]):
        return f"error: cannot return {item_ids} of order {order_id}"
    order.update(status="return requested", returned=sorted(item_ids), refund_to=refund_to)
    return f"return of {item_ids} from {order_id} started; refund to {refund_to}"


@tool
def refund_order(order_id: str, amount: float, config: RunnableConfig) -> str:
    """Pay money back for an order."""
    _session(config)["refunds"].append({"order_id": order_id, "amount": amount})
    return f"refunded {amount} for {order_id}"


TOOLS = [get_order, cancel_order, return_items, refund_order]


def chat_model() -> Any:
    """The bot's model, from the environment as it is at the call."""
    from langchain_openai import ChatOpenAI

    key = os.environ.get("RETAIL_BOT_API_KEY")
    return ChatOpenAI(model=os.environ.get("RETAIL_BOT_MODEL", "gpt-4o-mini"), base_url=os.environ.get("RETAIL_BOT_BASE_URL"),
                      temperature=0, max_retries=0, **({"api_key": key} if key else {})).bind_tools(TOOLS)


def build_bot() -> Any:
    """The bot's graph: the model answers or calls tools until it answers in text."""

    async def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await chat_model().ainvoke([SystemMessage(POLICY), *state["messages"]])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(TOOLS))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()


# ---------------------------------------------------------------- the tasks' final-state checks


def _unchanged(db: dict[str, Any], *except_ids: str) -> str | None:
    changed = [oid for oid, order in db["orders"].items() if oid not in except_ids and order != SEED[oid]]
    return f"orders changed that the task does not touch: {changed}" if changed else None


def cancelled_by_mistake(session_id: str) -> dict[str, Any]:
    """Task cancel-pending: W1001 cancelled as ordered by mistake, nothing refunded by hand, nothing else changed."""
    db = database(session_id)
    order = db["orders"]["W1001"]
    problem = (_unchanged(db, "W1001") or (f"refunds paid: {db['refunds']}" if db["refunds"] else None)
               or (None if order.get("status") == "cancelled" and order.get("cancel_reason") == "ordered by mistake"
                   else f"W1001 is {order.get('status')} ({order.get('cancel_reason')})"))
    return {"passed": problem is None, "reason": problem or "W1001 cancelled, nothing else changed"}


def lamp_returned(session_id: str) -> dict[str, Any]:
    """Task return-lamp: the lamp of W2002 (and only it) returned to the original payment."""
    db = database(session_id)
    order = db["orders"]["W2002"]
    ok = order.get("status") == "return requested" and order.get("returned") == ["L7"] and order.get("refund_to") == "original"
    problem = _unchanged(db, "W2002") or (f"refunds paid: {db['refunds']}" if db["refunds"] else None)
    if problem is None and not ok:
        problem = f"W2002 is {order.get('status')}, returned {order.get('returned')}, refund to {order.get('refund_to')}"
    return {"passed": problem is None, "reason": problem or "lamp returned to the original payment"}


def nothing_changed(session_id: str) -> bool:
    """Task cancel-delivered: the database is as it was and no refund was paid."""
    db = database(session_id)
    return _unchanged(db) is None and not db["refunds"]
