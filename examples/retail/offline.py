"""The retail example run offline: every model is scripted on dialeval's test server.

One OpenAI-compatible server on 127.0.0.1 answers the bot's model (a scripted agent that
follows the shop's policy, ``good-agent``, or breaks it, ``faulty-agent``), the simulated
user and the auditor, told apart by their requests. The tasks have no judged criteria,
so no judge is called: actions, checks and state decide. Run from the repository root:

    python -m examples.retail.offline

It prints each task's outcome against each bot; the good bot passes all three tasks,
the faulty one fails all three, each for the reasons the record names.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import RunResult, run
from dialeval.testing.openai_server import OpenAIStub, prompt_of

TASKS = Path(__file__).with_name("tasks.yaml")
BOT = {"graph": "examples.retail.shop:build_bot"}
DONE = ("cancelled", "started", "refunded")  # the simulated user stops once the bot says one of these


def block(text: str, tag: str) -> str:
    return text.rsplit(f"<{tag}>", 1)[1].split(f"</{tag}>", 1)[0].strip()


def user_turn(prompt: str) -> dict[str, Any]:
    """The scripted simulated user: opens with its goal, answers what the bot asks from its
    hidden facts, stops once the bot has acted or refused."""
    facts = dict(line[2:].split(": ", 1) for line in block(prompt, "hidden_facts").splitlines() if line.startswith("- "))
    conversation = block(prompt, "conversation")
    said = [part.split("] Bot: ", 1)[1] for part in conversation.split("[turn ") if "] Bot: " in part]
    last = said[-1].lower() if said else ""
    if not said:
        return {"message": f"Hello, I would like to {block(prompt, 'goal')}.", "stop": None}
    if any(word in last for word in DONE) or "cannot be cancelled" in last:
        return {"message": "Thanks, that settles it.", "stop": "goal_reached"}
    if "order number" in last:
        return {"message": f"It is {facts.get('order_id', 'something I do not know')}.", "stop": None}
    if "reason" in last:
        return {"message": facts.get("reason", "I would rather not say."), "stop": None}
    return {"message": "Could you help me with that?", "stop": None}


def call(name: str, arguments: dict[str, Any]) -> tuple[str, str, list[dict[str, Any]]]:
    """The scripted model's answer that calls one tool (the test server's form)."""
    return "", "tool_calls", [{"name": name, "arguments": arguments}]


def agent_turn(body: dict[str, Any], faulty: bool) -> Any:
    """The bot's scripted model: look the order up, then act by the policy (or, faulty: refund
    what the policy forbids, return to a gift card, try to cancel a delivered order)."""
    messages = body["messages"]
    users = " ".join(str(m["content"]) for m in messages if m["role"] == "user")
    orders = re.findall(r"W\d{4}", users)
    wants_return = "return" in users.lower()
    reason = "ordered by mistake" if "mistake" in users else "no longer needed" if "no longer" in users else None
    last = messages[-1]
    if last["role"] != "tool":
        return call("get_order", {"order_id": orders[-1]}) if orders else "Could you give me your order number?"
    called = next(m for m in reversed(messages) if m["role"] == "assistant" and m.get("tool_calls"))["tool_calls"][0]["function"]
    looked_up = json.loads(next(m["content"] for m in messages if m["role"] == "tool" and m["content"].startswith("{")))
    order = json.loads(called["arguments"])["order_id"]
    if called["name"] == "get_order" and wants_return:
        item = next(i for i, name in looked_up["items"].items() if name.split()[-1] in users.lower())
        return call("return_items", {"order_id": order, "item_ids": [item], "refund_to": "gift_card" if faulty else "original"})
    if called["name"] == "get_order" and (looked_up["status"] == "pending" or faulty):
        if reason is None and looked_up["status"] == "pending":
            return "What is the reason: ordered by mistake, or no longer needed?"
        return call("cancel_order", {"order_id": order, "reason": reason or "no longer needed"})
    if called["name"] == "get_order":
        return f"Order {order} was delivered, so it cannot be cancelled; you can return its items instead."
    if called["name"] == "cancel_order" and faulty:
        return call("refund_order", {"order_id": order, "amount": looked_up["total"]})
    if called["name"] == "return_items":
        return f"The return has started; the refund goes to your {'gift card' if faulty else 'original payment method'}."
    if called["name"] == "refund_order":
        return f"I have refunded {looked_up['total']} for order {order}; it is cancelled as far as I can tell."
    return f"Your order {order} is cancelled: {last['content']}."


def respond(body: dict[str, Any]) -> Any:
    """One server for every model, told apart by the request."""
    if body.get("tools"):
        return agent_turn(body, faulty=body.get("model") == "faulty-agent")
    prompt = prompt_of(body)
    if "You play a person" in prompt:
        return json.dumps({**user_turn(prompt), "notes": {}})
    if "You check a simulated user" in prompt:
        return json.dumps({"rationale": "keeps its role", "findings": []})
    raise ValueError("no scripted answer for this request")


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    old = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def simulate(bot_model: str, folder: Path) -> RunResult:
    """The three tasks against the bot on ``bot_model`` (good-agent or faulty-agent), in a fresh shop."""
    from examples.retail import shop

    shop.reset()
    with OpenAIStub(respond=respond) as server, environment(
        {"RETAIL_BOT_MODEL": bot_model, "RETAIL_BOT_BASE_URL": server.base_url, "RETAIL_BOT_API_KEY": "offline"}
    ):
        config = RunConfig(model=ModelSettings(spec="openai-compatible:scripted", base_url=server.base_url, max_retries=0),
                           output_dir=str(folder / bot_model / "runs"), cache_path=str(folder / bot_model / "cache.sqlite"),
                           parse_retries=0, options={"bot": BOT})
        return run("simulation", str(TASKS), config, progress=False)


def main() -> int:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="retail-"))
    for bot_model in ("good-agent", "faulty-agent"):
        for record in simulate(bot_model, folder).records:
            broken = [c["check"] for c in record["checks"] if not c["passed"]]
            actions = record["actions"] or {}
            state = record["final_state"] or {}
            print(f"{bot_model:13} {record['id']:18} {record['outcome']:8} checks failed: {broken or '-'}; "
                  f"actions missing {actions.get('missing')} extra {actions.get('extra')}; state: {state.get('reason') or state.get('passed')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
