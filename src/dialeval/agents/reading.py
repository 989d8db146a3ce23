"""Reading one model answer honestly, and the sums over a call's attempts.

:func:`dialeval.agents.base.ask` renders, calls, reads and retries; the reading is here,
free of the model client, so what each answer means (ok, a correction to send, a
truncation, a refusal, a crash of our code) is one pure function.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel

from dialeval.agents.parsing import MAX_ANSWER_CHARS, ParseFailure, parse_answer, schema_hint
from dialeval.models.generation import Generation
from dialeval.models.usage import CallRecord

Status = Literal["ok", "unparsed", "truncated", "error"]


def kept(text: str) -> str:
    """At most :data:`MAX_ANSWER_CHARS` of an answer, with a note when cut: a runaway
    reply must not fill results files or be sent back in a corrective retry."""
    if len(text) <= MAX_ANSWER_CHARS:
        return text
    return text[:MAX_ANSWER_CHARS] + f"\n[... cut by dialeval: {len(text)} characters in all]"


def correction(reason: str, schema: type[BaseModel]) -> str:
    """The corrective message sent after an answer that does not fit ``schema``."""
    return (
        f"I could not read your answer ({reason}). Reply again with only a JSON object "
        f"of this shape and nothing else: {schema_hint(schema)}"
    )


@dataclass
class Reading:
    """What one answer says: its status, the parsed value, what joins the conversation,
    and whether to ask again."""

    status: Status
    reason: str | None
    raw: str
    follow_up: list[BaseMessage]
    again: bool = False
    value: BaseModel | None = None
    confidence: float | None = None
    crash: BaseException | None = None  # our code failed on the answer: the item fails, nothing is cached


def read_answer(
    gen: Generation, schema: type[BaseModel], validate: Callable[[Any], str | None] | None, retry_truncated: bool
) -> Reading:
    """Read ``gen`` into ``schema``: a refusal is final, a cut-off answer is asked again
    shorter (unless ``retry_truncated`` is off), an unreadable one gets a correction."""
    raw = kept(gen.text)
    if gen.refused:  # issue 33: no correction cures a refusal; its text is what the model said
        raw = kept(gen.refusal or "")
        return Reading("unparsed", "refused", raw, [AIMessage(raw)])
    if gen.truncated:
        if not retry_truncated:
            return Reading("truncated", "the answer hit the token limit", raw, [AIMessage(raw)])
        shorter = HumanMessage("Your answer was cut off. Answer again, shorter, with only the JSON.")
        return Reading("truncated", "the answer hit the token limit", raw, [AIMessage(raw), shorter], again=True)
    try:
        value = parse_answer(gen.text, schema)
        problem = validate(value) if validate else None
        if problem:
            raise ParseFailure(problem)
    except ParseFailure as failure:
        follow_up: list[BaseMessage] = [AIMessage(raw), HumanMessage(correction(failure.reason, schema))]
        return Reading("unparsed", failure.reason, raw, follow_up, again=True)
    except Exception as err:
        return Reading("error", None, raw, [], crash=err)
    confidence = None
    if gen.logprobs:  # issue 49: a cascade's first stage may be trusted on it
        from dialeval.agents.logprobs import verdict_probability

        confidence = verdict_probability(gen.logprobs)
    return Reading("ok", None, raw, [AIMessage(raw)], value=value, confidence=confidence)


def _zero_totals() -> dict[str, Any]:
    return {
        "input_tokens": 0, "output_tokens": 0, "cost": 0.0, "requests": 0, "cached": 0, "deduplicated": 0,
        "cached_input_tokens": 0, "cache_write_tokens": 0, "uncached_cost": 0.0,
    }


@dataclass
class Tally:
    """Tokens, cost and requests summed over one call's attempts, for the ledger."""

    totals: dict[str, Any] = field(default_factory=_zero_totals)
    estimated: bool = False
    cached_all: bool = True

    def add(self, gen: Generation) -> None:
        t = self.totals
        self.estimated = self.estimated or gen.estimated
        t["input_tokens"] += gen.input_tokens
        t["output_tokens"] += gen.output_tokens
        t["cost"] += gen.cost
        t["uncached_cost"] += gen.cost if gen.uncached_cost is None else gen.uncached_cost
        t["cached_input_tokens"] += gen.cached_input_tokens
        t["cache_write_tokens"] += gen.cache_write_tokens
        t["cached" if gen.cached else "deduplicated" if gen.deduplicated else "requests"] += 0 if gen.estimated else 1
        self.cached_all = self.cached_all and gen.cached


@dataclass
class Outcome:
    """Where a call's attempts ended: what :func:`dialeval.agents.base.ask` records."""

    status: Status = "unparsed"
    reason: str | None = "no answer"
    raw: str = ""
    value: BaseModel | None = None
    confidence: float | None = None
    attempts: int = 0
    error: tuple[str, CallRecord] | None = None
