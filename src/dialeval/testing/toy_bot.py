"""A toy shop-support bot for the simulation examples: a few rules, no model.

``reply(messages, session_id)`` is the callable shape ``--option bot='"module:function"'``
expects: it asks for the order number when the user mentions a refund, and issues a
refund number once the user gives something that looks like one.
"""

from __future__ import annotations

import re
from typing import Any


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


def reply(messages: list[dict[str, Any]], session_id: str) -> str:
    text = _last_user_text(messages)
    order = re.search(r"\b[A-Z]\d{3,}\b", text, re.IGNORECASE)
    if order:
        digits = int(re.sub(r"\D", "", order.group()))
        return f"Thank you. I have issued refund RMA-{digits:06d} for order {order.group().upper()}."
    if re.search(r"refund|broken|damaged|return", text, re.IGNORECASE):
        return "I am sorry to hear that. What is your order number?"
    return "I can help with orders, returns and refunds. What do you need?"
