"""The judge layer at run time: an ensemble's or a cascade's verdict from its members' calls.

A role resolves in one place (:meth:`dialeval.agents.answers.AgentContext.for_role`) to a
model, an ensemble or a cascade; :func:`dialeval.agents.base.ask` hands the last two here,
with itself as the member asker: every member call is an ordinary ``ask`` on the member's
own client (cache, limits, ledger, stored prompt), so nothing takes a second route. The combined call records, for
the unit, which stage decided and why, every vote, and what each call cost.
"""

from __future__ import annotations

import asyncio
import dataclasses
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from dialeval.agents.answers import AgentCall, AgentContext, Answer
from dialeval.agents.logprobs import SCORE_FIELDS  # the fields a verdict is read from as one number
from dialeval.config import ModelSettings
from dialeval.errors import ConfigError
from dialeval.judge_spec import Cascade, Composite, Ensemble
from dialeval.models.client import get_client

Score = Callable[[Any], "float | None"]


def default_score(value: Any) -> float | None:
    """A verdict as a number: the answer's numeric ``verdict``, ``score`` or ``rating``
    field. An agent whose answers are not one ordered verdict passes its own ``score``."""
    for name in SCORE_FIELDS:
        got = getattr(value, name, None)
        if isinstance(got, (int, float)) and not isinstance(got, bool):
            return float(got)
    return None


def agreement(votes: list[float | None]) -> tuple[float | None, float]:
    """The most common vote (ties to the lower one) and the share of all votes that gave it
    (an unreadable vote counts against it): the stage's confidence."""
    readable = [v for v in votes if v is not None]
    if not readable:
        return None, 0.0
    counts = Counter(readable)
    top = max(counts.values())
    mode = min(v for v, n in counts.items() if n == top)
    return mode, top / len(votes)


def combined(votes: list[float | None], how: str) -> float | None:
    """``majority`` (ties to the lower verdict), ``mean`` or ``median`` of the readable votes."""
    readable = [v for v in votes if v is not None]
    if not readable:
        return None
    if how == "mean":
        return float(statistics.fmean(readable))
    if how == "median":
        return float(statistics.median(readable))
    return agreement(votes)[0]


@dataclass
class Stage:
    """One stage's calls and what they say together."""

    name: str
    answers: list[tuple[str, int, Answer[Any]]] = field(default_factory=list)  # (model, reading, answer)
    votes: list[float | None] = field(default_factory=list)
    score: float | None = None
    confidence: float | None = 0.0  # agreement of the readings, or one reading's probability (None: not given)

    @property
    def error(self) -> Answer[Any] | None:
        return next((a for _, _, a in self.answers if a.call.status == "error"), None)

    def value(self) -> Answer[Any] | None:
        """The member answer whose vote is nearest the combined score (the lower on a tie)."""
        scored = [(abs(v - self.score), v, a) for (_, _, a), v in zip(self.answers, self.votes)
                  if v is not None and self.score is not None]
        return min(scored, key=lambda t: (t[0], t[1]))[2] if scored else None


async def _stage(ctx: AgentContext, stage: ModelSettings | Ensemble, readings: int, temperature: float,
                 ask_one: Callable[[AgentContext], Any], score: Score, name: str, probability: bool = False) -> Stage:
    """Ask the stage: an ensemble's members once each, a model ``readings`` times (reading k > 1
    at ``temperature`` with seed k: distinct requests, distinct cache entries), or once with
    logprobs when ``probability`` (its confidence is then the verdict's probability)."""
    if isinstance(stage, Ensemble):
        members = [(m, 1) for m in stage.ensemble]
        how = stage.combine
    elif probability:
        members, how = [(stage.model_copy(update={"logprobs": True}), 1)], "majority"
    else:
        members = [(stage if k == 1 else stage.model_copy(update={"temperature": temperature, "seed": k}), k)
                   for k in range(1, readings + 1)]
        how = "majority"
    answers = await asyncio.gather(*(ask_one(dataclasses.replace(ctx, client=get_client(m), judge=None)) for m, _ in members))
    out = Stage(name)
    for (m, k), answer in zip(members, answers):
        out.answers.append((m.spec, k, answer))
        out.votes.append(score(answer.value) if answer.value is not None else None)
    out.score = combined(out.votes, how)
    out.confidence = answers[0].confidence if probability else agreement(out.votes)[1]
    return out


def _escalation(judge: Cascade, first: Stage) -> str | None:
    """Why the first stage's verdict is not kept, or ``None`` when it is."""
    esc = judge.escalate
    shown = ", ".join("unreadable" if v is None else f"{v:g}" for v in first.votes)
    if first.score is None:
        return f"no readable verdict from the first stage ({shown})"
    if esc.when == "disagree":
        return None if (first.confidence or 0) >= 1 else f"the first stage's verdicts disagree ({shown})"
    assert esc.threshold is not None
    if first.confidence is None:
        return "no verdict probability (the backend gave no logprobs)"
    if first.confidence < esc.threshold:
        return f"confidence {first.confidence:.2f} (verdicts {shown}) is below the threshold {esc.threshold:g}"
    return None


def _vote_rows(stages: list[Stage]) -> list[dict[str, Any]]:
    return [{"stage": i, "model": model, "reading": k, "status": a.call.status, "vote": v, "cached": a.call.cached,
             "cost": a.call.cost, "input_tokens": a.call.input_tokens, "output_tokens": a.call.output_tokens}
            for i, s in enumerate(stages) for (model, k, a), v in zip(s.answers, s.votes)]


def label_of(judge: Composite) -> str:
    """The composite's name in records: ``ensemble(a, b)`` or ``cascade(a -> b)``."""
    if isinstance(judge, Ensemble):
        return f"ensemble({', '.join(m.spec for m in judge.ensemble)})"
    return "cascade(" + " -> ".join(s.spec if isinstance(s, ModelSettings) else label_of(s) for s in judge.cascade) + ")"


def _result(ctx: AgentContext, agent: str, judge: Composite, stages: list[Stage], decided: int,
            why: str, escalated: bool) -> Answer[Any]:
    calls = [a for s in stages for _, _, a in s.answers]
    final = stages[decided]
    broken = next((s.error for s in stages if s.error is not None), None)
    chosen = broken or final.value() or final.answers[-1][2]
    status = chosen.call.status if broken or final.score is None else "ok"
    record: dict[str, Any] = {
        "kind": "ensemble" if isinstance(judge, Ensemble) else "cascade", "label": label_of(judge),
        "decided_by": decided, "stage": final.name, "escalated": escalated, "why": why,
        "score": final.score if status == "ok" else None, "votes": _vote_rows(stages),
        "confidence": None if stages[0].confidence is None else round(stages[0].confidence, 4),
    }
    call: AgentCall = chosen.call.model_copy(update=dict(
        agent=agent, status=status, reason=chosen.call.reason if status != "ok" else None,
        attempts=sum(a.call.attempts for a in calls), cached=all(a.call.cached for a in calls),
        role=ctx.role, model=label_of(judge), input_tokens=sum(a.call.input_tokens for a in calls),
        output_tokens=sum(a.call.output_tokens for a in calls), cost=sum(a.call.cost for a in calls), judge=record,
    ))
    return Answer(value=chosen.value if status == "ok" else None, call=call, messages=chosen.messages)


async def ask_composite(ctx: AgentContext, agent: str, messages: list[BaseMessage], schema: type[BaseModel],
                        score: Score | None, options: dict[str, Any],
                        ask: Callable[..., Awaitable[Answer[Any]]]) -> Answer[Any]:
    """The ensemble's combined verdict, or the cascade's: the first stage's where it is sure,
    else the next stage's. A member call that errors fails the unit (as any failed call).
    ``ask`` asks one member (``agents.base.ask``, called with ``options``)."""
    judge = ctx.judge
    assert judge is not None
    if score is None and not any(name in schema.model_fields for name in SCORE_FIELDS):
        raise ConfigError(f"role {ctx.role!r}: the answers of {agent} ({schema.__name__}) are not one verdict that an "
                          "ensemble or a cascade can combine; give this role a single model")
    read = score or default_score

    def ask_one(member: AgentContext) -> Any:
        return ask(member, agent, messages, schema, **options)

    if isinstance(judge, Ensemble):
        stage = await _stage(ctx, judge, 1, 0.0, ask_one, read, "ensemble")
        why = f"{judge.combine} of {len(stage.votes)} verdicts (agreement {stage.confidence or 0:.2f})"
        return _result(ctx, agent, judge, [stage], 0, why, False)
    esc = judge.escalate
    names = [s.spec if isinstance(s, ModelSettings) else label_of(s) for s in judge.cascade]
    first = await _stage(ctx, judge.cascade[0], esc.samples, esc.temperature, ask_one, read, names[0], probability=judge.by_probability)
    reason = None if first.error is not None else _escalation(judge, first)
    if reason is None and first.error is None and ctx.client.is_dry_run:  # an estimate prices the worst case
        reason = "a dry run prices every unit as escalated"

    if reason is None:
        kept = "an error" if first.error is not None else f"confidence {first.confidence or 0:.2f}"
        return _result(ctx, agent, judge, [first], 0, f"kept by the first stage ({kept})", False)
    second = await _stage(ctx, judge.cascade[1], 1, esc.temperature, ask_one, read, names[1])
    return _result(ctx, agent, judge, [first, second], 1, f"escalated: {reason}", True)
