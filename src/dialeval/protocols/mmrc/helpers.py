"""Helpers of the objective metrics: IE item extraction (EP) and refusal detection (RP).

Each comes in two registered flavours for the same role:
- model-based (default): a deterministic rule settles the simple cases (an answer that
  is exactly a list of reference items; a plain "it was not mentioned"), a model reads
  the rest;
- rules only (``mmrc.item_rules``, ``mmrc.refusal_rules``): no model at all.

Every answer the model under test gave is read, cut-off ones as they stand; an empty
answer names no item and refuses nothing (the system's failure, never its reward).
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from dialeval.agents.base import schema_with
from dialeval.agents.judge import Judge
from dialeval.protocols.mmrc.common import conversation_of
from dialeval.config import EvalContext
from dialeval.protocols.mmrc.data import Conversation, Question
from dialeval.protocols.mmrc.text_rules import exact_matches, match_items, refusal_by_rule, split_items

ITEM_TEMPLATE = "mmrc/item_extractor"
REFUSAL_TEMPLATE = "mmrc/refusal_detector"


class ExtractedItem(BaseModel):
    item: str
    match: int | None = None


class ExtractedItems(BaseModel):
    items: list[ExtractedItem]


class RefusalVerdict(BaseModel):
    rationale: str
    refused: bool


EXTRACTOR = Judge("mmrc.item_extractor", "item_extractor", "mmrc", ITEM_TEMPLATE, ExtractedItems)
DETECTOR = Judge("mmrc.refusal_detector", "refusal_detector", "mmrc", REFUSAL_TEMPLATE, RefusalVerdict)

ITEM_CHARS = 60  # "a thing the answer names": a short phrase
RATIONALE_CHARS = 200  # "<one sentence>", as the prompt asks


def items_schema(n: int) -> dict[str, Any]:
    """The extractor's answer for decoders that follow a schema (local models): each thing a
    short phrase, each match a reference number 1..n or null, so a small model cannot spend
    its whole token budget on one item. How many items stays open (the answer decides)."""
    import copy

    schema = copy.deepcopy(ExtractedItems.model_json_schema())
    fields = schema["$defs"]["ExtractedItem"]["properties"]
    fields["item"]["maxLength"] = ITEM_CHARS
    fields["match"]["anyOf"] = [{"type": "integer", "minimum": 1, "maximum": n}, {"type": "null"}]
    return schema


def matches_in_range(n: int) -> Any:
    """The extractor's meaning check, the one :func:`items_schema` states: matches are 1..n or null."""

    def check(value: ExtractedItems) -> str | None:
        return next((f"match {e.match} is not a reference number 1-{n}" for e in value.items
                     if e.match is not None and not 1 <= e.match <= n), None)

    return check


def _answered(state: dict[str, Any], conv: Conversation, needs: str) -> list[tuple[dict[str, Any], Question]]:
    """Answers (all but errored calls) of the questions that carry the label ``needs``."""
    out = []
    for a in state.get("answers", []):
        question = conv.questions[a["index"]]
        labelled = bool(question.items) if needs == "items" else question.refuse is not None
        if labelled and a["call"]["status"] != "error":
            out.append((a, question))
    return out


def _item_result(answer: dict[str, Any], status: str, method: str, items: list[str], matches: list[int | None], call: Any = None) -> dict[str, Any]:
    return {
        "condition": answer["condition"],
        "index": answer["index"],
        "status": status,
        "method": method,
        "items": items,
        "matches": matches,
        "call": call,
    }


@EXTRACTOR.register
def item_extractor():
    """Lists the items an IE answer names and the reference item each refers to."""

    async def extract(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        conv = conversation_of(state)

        async def one(answer: dict[str, Any], question: Question) -> dict[str, Any]:
            text = answer["call"]["raw"].strip()
            if not text:
                return _item_result(answer, "ok", "rule", [], [])
            pieces = split_items(text)
            exact = exact_matches(pieces, question.items)
            if exact is not None:
                return _item_result(answer, "ok", "rule", pieces, list(exact))
            n = len(question.items)
            values = {
                "question": question.question,
                "reference_items": "\n".join(f"{i}. {item}" for i, item in enumerate(question.items, start=1)),
                "answer": text,
            }
            result = await EXTRACTOR.verdict(
                context,
                values,
                validate=matches_in_range(n),
                json_schema=items_schema(n),
            )
            if result.value is None:
                return _item_result(answer, result.call.status, "model", [], [], result.call.model_dump())
            return _item_result(
                answer,
                "ok",
                "model",
                [e.item for e in result.value.items],
                [e.match for e in result.value.items],
                result.call.model_dump(),
            )

        todo = _answered(state, conv, "items")
        return {"item_checks": list(await asyncio.gather(*(one(a, q) for a, q in todo)))}

    return extract


@EXTRACTOR.register_as("mmrc.item_rules")
def item_rules():
    """Rules only: splits the answer on separators and matches items by content words."""

    async def extract(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        conv = conversation_of(state)
        out = []
        for answer, question in _answered(state, conv, "items"):
            pieces = split_items(answer["call"]["raw"].strip())
            out.append(_item_result(answer, "ok", "rule", pieces, match_items(pieces, question.items)))
        return {"item_checks": out}

    return extract


def _refusal_result(answer: dict[str, Any], question: Question, status: str, method: str, refused: bool | None, call: Any = None) -> dict[str, Any]:
    return {
        "condition": answer["condition"],
        "index": answer["index"],
        "expected": question.refuse,
        "refused": refused,
        "status": status,
        "method": method,
        "call": call,
    }


@DETECTOR.register
def refusal_detector():
    """Decides whether an answer refuses (plain cases by rule, the rest by a model)."""

    async def detect(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        conv = conversation_of(state)

        async def one(answer: dict[str, Any], question: Question) -> dict[str, Any]:
            text = answer["call"]["raw"].strip()
            by_rule = refusal_by_rule(text) if text else False
            if by_rule is not None:
                return _refusal_result(answer, question, "ok", "rule", by_rule)
            result = await DETECTOR.verdict(
                context,
                {"question": question.question, "answer": text},
                json_schema=schema_with(RefusalVerdict, rationale={"maxLength": RATIONALE_CHARS}),
            )
            refused = result.value.refused if result.value is not None else None
            return _refusal_result(answer, question, result.call.status, "model", refused, result.call.model_dump())

        todo = _answered(state, conv, "refuse")
        return {"refusal_checks": list(await asyncio.gather(*(one(a, q) for a, q in todo)))}

    return detect


@DETECTOR.register_as("mmrc.refusal_rules")
def refusal_rules():
    """Rules only: an answer refuses when it matches a refusal phrase."""

    async def detect(state: dict[str, Any], context: EvalContext) -> dict[str, Any]:
        conv = conversation_of(state)
        out = [
            _refusal_result(a, q, "ok", "rule", refusal_by_rule(a["call"]["raw"]) is True)
            for a, q in _answered(state, conv, "refuse")
        ]
        return {"refusal_checks": out}

    return detect
