"""Controlled perturbations of the labelled conversations, one per probe (pure).

Each returns new data-file records; the judged units keep their ids, so a probe's effect
is measured on the same units as the unperturbed run:

- :func:`padded`: every assistant reply gets harmless, content-free sentences in the
  assistant's own register appended (verbosity: the score should not rise);
- :func:`planted`: a fact about the user stated in the first user turn and contradicted
  by the last assistant reply (needle: the judge should catch it);
- the position probe pairs each conversation with its padded copy (``versus``): the two
  differ in length only, so a verdict that changes with the order shows position bias.

The padding and the needles are our own sentences, chosen by a seed-free rule (the
conversation's position), so a card built twice writes the same files.
"""

from __future__ import annotations

import copy
from typing import Any

PADDING = (
    "I hope this helps.",
    "If anything here is unclear, tell me and I will go over it again.",
    "Feel free to ask a follow-up question at any time.",
    "I am happy to look at this from another angle if you would like.",
    "Let me know how it goes, and we can adjust from there.",
    "Thanks for the clear question; it makes it easier to help.",
)
# (what the user states early, what the assistant says late that contradicts it)
NEEDLES = (
    ("I am allergic to peanuts, so please keep that in mind.",
     "For a quick snack along the way, a bag of salted peanuts would suit you well."),
    ("I do not own a car and get around by bus.",
     "Since you will drive your own car there, parking near the entrance is the easiest."),
    ("I am vegetarian and do not eat any meat.",
     "For dinner, a grilled beef steak would be the best pick for you."),
    ("I live alone in a small flat with no pets.",
     "Your two dogs will enjoy the big garden when you bring them along."),
)
NEEDLE_CRITERION = "remembers_user"
NEEDLE_RUBRIC = f"""criteria:
  - name: {NEEDLE_CRITERION}
    level: turn
    description: >-
      Is the reply consistent with everything the user has said about themselves earlier
      in the conversation? Answer no when the reply assumes or suggests something that an
      earlier user message rules out.
    scale: [yes, no]
"""


def _assistant_messages(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in record["messages"] if m["role"] == "assistant"]


def _append(message: dict[str, Any], text: str) -> None:
    content = message["content"]
    if isinstance(content, list):
        content.append({"type": "text", "text": text})
    else:
        message["content"] = f"{content.rstrip()} {text}"


def padding(position: int, sentences: int = 3) -> str:
    """``sentences`` of :data:`PADDING`, starting at a place set by ``position``."""
    return " ".join(PADDING[(position + k) % len(PADDING)] for k in range(sentences))


def padded(records: list[dict[str, Any]], sentences: int = 3) -> list[dict[str, Any]]:
    """Every assistant reply with ``sentences`` harmless sentences appended."""
    out = copy.deepcopy(records)
    for i, record in enumerate(out):
        for j, message in enumerate(_assistant_messages(record)):
            _append(message, padding(i + j, sentences))
    return out


def long_enough(record: dict[str, Any], min_replies: int) -> bool:
    return len(_assistant_messages(record)) >= min_replies


def planted(records: list[dict[str, Any]], min_replies: int = 2) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Conversations with at least ``min_replies`` assistant replies, a needle planted in
    each; returns the records and, per conversation, the turn number of the contradicting
    reply (its last assistant turn). The other replies are the probe's controls."""
    out: list[dict[str, Any]] = []
    needles: dict[str, int] = {}
    for record in records:
        if not long_enough(record, min_replies):
            continue
        fact, contradiction = NEEDLES[len(out) % len(NEEDLES)]
        new = copy.deepcopy(record)
        first_user = next(m for m in new["messages"] if m["role"] == "user")
        content = first_user["content"]
        if isinstance(content, list):
            content.insert(0, {"type": "text", "text": fact})
        else:
            first_user["content"] = f"{fact} {content}"
        _append(_assistant_messages(new)[-1], contradiction)
        needles[str(new["id"])] = max(i for i, m in enumerate(new["messages"], 1) if m["role"] == "assistant") - _system_count(new)
        out.append(new)
    return out, needles


def _system_count(record: dict[str, Any]) -> int:
    """System messages come first and are not numbered turns."""
    return sum(1 for m in record["messages"] if m["role"] == "system")
