"""The pattern every agent follows: render a template, call the model, parse honestly.

An agent module defines a pydantic output schema, pure ``build_messages``/``parse``
helpers where useful, and registers a node builder with :func:`register_agent`. Inside
the node, :func:`ask` does the call: cache, corrective retries, truncation detection,
accounting, and an explicit ``unparsed`` outcome when nothing fits the schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from langchain_core.messages import AIMessage, BaseMessage
from pydantic import BaseModel

from dialeval.models.backends.base import error_text
from dialeval.agents.parsing import MAX_ANSWER_CHARS
from dialeval.agents.reading import Outcome, Status, Tally, kept, read_answer
from dialeval.models.generation import Generation
from dialeval.secrets import scrub
from dialeval.models.progress import tick
from dialeval.models.usage import CallRecord, public_url, record, start_meter
from dialeval.agents.placeholders import placeholder_for  # noqa: F401  (agents import it from here)
from dialeval.agents.registry import AGENTS, AgentEntry, NodeFn, agent_node, register_agent, resolve_agent  # noqa: F401  (agents import them from here)
from dialeval.agents.answers import AgentCall, AgentContext, Answer  # agents import them from here
from dialeval.agents.ensemble import ask_composite

T = TypeVar("T", bound=BaseModel)


def _error_record(ctx: AgentContext, agent: str, err: BaseException, **totals: Any) -> tuple[str, CallRecord]:
    """The reason (keys scrubbed) and ledger entry of a call the backend could not answer."""
    status = getattr(err, "status_code", None)
    kind = type(err).__name__ + (f" (HTTP {status})" if isinstance(status, int) else "")
    reason = scrub(error_text(err, kind))
    if isinstance(status, int):  # issue 33: the server answered it (a 401 too): it went out, it counts as sent
        totals = {**totals, "requests": int(totals.get("requests", 0)) + 1}
    entry = CallRecord(
        agent=agent,
        model=ctx.client.label,
        status="error",
        priced=ctx.client.price is not None,
        error=reason,
        endpoint=public_url(ctx.client.endpoint),  # issue 33: never a base_url's credentials or query
        **totals,
    )
    return reason, entry


def _described(call: AgentCall, ctx: AgentContext, sent: list[BaseMessage], totals: dict[str, Any]) -> AgentCall:
    """The call with its role, model, tokens, cost and stored prompt, for the viewer."""
    from dialeval.models.prompt_store import store_prompt

    return call.model_copy(
        update=dict(
            role=ctx.role,
            model=ctx.client.label,
            input_tokens=int(totals.get("input_tokens", 0)),
            output_tokens=int(totals.get("output_tokens", 0)),
            cost=float(totals.get("cost", 0.0)),
            prompt_ref=store_prompt(ctx.run_dir, sent),
        )
    )


def schema_with(schema: type[BaseModel], **fields: dict[str, Any]) -> dict[str, Any]:
    """``schema``'s JSON schema with extra keywords on top-level fields, for what one call
    knows in advance, e.g. ``schema_with(Verdicts, verdicts={"minItems": 3, "maxItems": 3})``."""
    import copy

    out = copy.deepcopy(schema.model_json_schema())
    for name, keywords in fields.items():
        out["properties"][name].update(keywords)
    return out


async def ask(
    ctx: AgentContext,
    agent: str,
    messages: list[BaseMessage],
    schema: type[T],
    *,
    validate: Callable[[T], str | None] | None = None,
    placeholder: Callable[[], T] | None = None,
    retries: int | None = None,
    retry_truncated: bool = True,
    json_schema: dict[str, Any] | None = None,
    score: Callable[[T], float | None] | None = None,
    sample_index: int | None = None,
) -> Answer[T]:
    """Call the model and parse its answer into ``schema``, retrying with corrections.

    ``validate`` checks meaning beyond the schema (e.g. one verdict per fact) and returns
    a reason when the answer does not fit. ``json_schema`` narrows the schema for this
    call where the agent knows more in advance (:func:`schema_with`); local models decode
    under it. A ``length`` finish is never parsed as whole.
    The returned ``messages`` include the final answer, for multi-turn agents.
    ``retries`` overrides the run's corrective retries and ``retry_truncated=False``
    keeps a cut-off answer as ``truncated`` instead of asking for a shorter one: a
    system under test gets no second chance its paper did not give it. ``sample_index``: a
    distinct sample of an identical prompt (otherwise sent once per run and shared).
    ``score`` reads an answer as one number where the role is an ensemble or a cascade
    (default: a numeric ``verdict``/``score``/``rating`` field): their verdicts are combined on it.
    """
    if ctx.judge is not None:  # issue 49: each member's call comes back through here
        options = dict(validate=validate, placeholder=placeholder, retries=retries, retry_truncated=retry_truncated,
                       json_schema=json_schema, sample_index=sample_index)
        return await ask_composite(ctx, agent, messages, schema, score, options, ask)  # type: ignore[arg-type]
    start_meter(None if ctx.client.injected else ctx.client.endpoint)  # retries, 429s, the server's model name
    conversation, tally = list(messages), Tally()
    request = _Request(schema, json_schema, validate, placeholder, retry_truncated, sample_index)
    outcome = await _with_retries(ctx, agent, conversation, request, tally, ctx.parse_retries if retries is None else retries)
    tick()
    call = _recorded(ctx, agent, outcome, conversation, tally)
    value: T | None = outcome.value if outcome.status == "ok" else None  # type: ignore[assignment]  # parsed into schema
    return Answer(value=value, call=call, messages=conversation, confidence=outcome.confidence)


@dataclass
class _Request:
    """What each attempt of one :func:`ask` sends and how its answer is read."""

    schema: type[BaseModel]
    json_schema: dict[str, Any] | None
    validate: Callable[[Any], str | None] | None
    placeholder: Callable[[], BaseModel] | None
    retry_truncated: bool
    sample_index: int | None = None  # a distinct sample of an identical prompt (else sent once per run and shared)


def _rendered_placeholder(ctx: AgentContext, request: _Request) -> str | None:
    """The answer a dry run gives: the agent's placeholder (or one built from the schema) as JSON."""
    if not ctx.client.is_dry_run:
        return None
    return (request.placeholder() if request.placeholder else placeholder_for(request.schema)).model_dump_json()


async def _call_model(ctx: AgentContext, conversation: list[BaseMessage], request: _Request) -> Generation:
    """One request for the conversation so far (from the cache where it holds the answer)."""
    return await ctx.client.generate(
        conversation,
        schema=request.schema,
        json_schema=request.json_schema,
        placeholder=_rendered_placeholder(ctx, request),
        cache_path=ctx.cache_path,
        read_cache=ctx.read_cache,
        sample_index=request.sample_index,
    )


async def _with_retries(
    ctx: AgentContext, agent: str, conversation: list[BaseMessage], request: _Request, tally: Tally, retries: int
) -> Outcome:
    """Ask, read, and ask again with a correction while the answer does not fit and
    retries remain; ``conversation`` grows by each answer and correction."""
    outcome = Outcome()
    for attempt in range(1, retries + 2):
        outcome.attempts = attempt
        try:
            gen = await _call_model(ctx, conversation, request)
        except Exception as err:  # the backend gave up after its own retries
            outcome.error = _error_record(ctx, agent, err, **tally.totals)
            outcome.status, outcome.reason, outcome.raw = "error", outcome.error[0], ""
            tally.cached_all = False
            return outcome
        tally.add(gen)
        reading = read_answer(gen, request.schema, request.validate, request.retry_truncated)
        conversation += reading.follow_up
        outcome.status, outcome.reason, outcome.raw, outcome.value = reading.status, reading.reason, reading.raw, reading.value
        if reading.crash is not None:  # a reply that crashes our code fails the item, and is not cached
            outcome.error = _error_record(ctx, agent, reading.crash, **tally.totals)
            outcome.status, outcome.reason = "error", f"reading the answer failed: {outcome.error[0]}"
            tally.cached_all = False
            return outcome
        if reading.status == "ok":
            ctx.client.remember(gen)
            outcome.confidence = reading.confidence
        if not reading.again:
            return outcome
    return outcome


def _recorded(ctx: AgentContext, agent: str, outcome: Outcome, conversation: list[BaseMessage], tally: Tally) -> AgentCall:
    """The call's record for results (with the prompt of its last request) and its ledger entry."""
    call = AgentCall(
        agent=agent,
        status=outcome.status,
        value=outcome.value.model_dump() if outcome.value is not None else None,
        raw=outcome.raw,
        attempts=outcome.attempts,
        reason=outcome.reason,
        cached=tally.cached_all and outcome.status != "error",
    )
    # the prompt of the last request: without the unsent correction and the answer itself
    sent = conversation
    if outcome.status != "error":
        sent = conversation[:-1] if isinstance(conversation[-1], AIMessage) else conversation[:-2]
    call = _described(call, ctx, sent, tally.totals)
    if outcome.error is not None:
        record(outcome.error[1])
    else:
        record(CallRecord(agent=agent, model=ctx.client.label, status=outcome.status, estimated=tally.estimated,
                          priced=ctx.client.price is not None, **tally.totals))
    return call


async def ask_text(ctx: AgentContext, agent: str, messages: list[BaseMessage], placeholder: str = "dry-run reply",
                   sample_index: int | None = None) -> AgentCall:
    """One free-text call (a system under test replies in prose, not JSON).

    ``ok`` needs a non-empty answer that was not cut off; ``truncated``, ``unparsed``
    (empty) and ``error`` keep the raw text and are never scored. ``value`` is
    ``{"text": ...}`` when ok.
    """
    reason: str | None
    start_meter(None if ctx.client.injected else ctx.client.endpoint)
    try:
        gen = await ctx.client.generate(
            messages, placeholder=placeholder, cache_path=ctx.cache_path, read_cache=ctx.read_cache, sample_index=sample_index
        )
    except Exception as err:  # the backend gave up after its own retries
        reason, entry = _error_record(ctx, agent, err)
        record(entry)
        call = AgentCall(agent=agent, status="error", reason=reason, attempts=1)
        tick()
        return _described(call, ctx, messages, {})
    tick()
    text = gen.text.strip()
    status: Status
    if gen.truncated:
        status, reason = "truncated", "the answer hit the token limit"
    elif gen.refused:  # issue 33: the refusal's text is the raw answer
        status, reason = "unparsed", "refused"
    elif not text:
        status, reason = "unparsed", "empty answer"
    elif len(text) > MAX_ANSWER_CHARS:
        status, reason = "unparsed", f"answer too long ({len(text)} characters; limit {MAX_ANSWER_CHARS})"
    else:
        status, reason = "ok", None
        ctx.client.remember(gen)
    record(
        CallRecord(
            agent=agent,
            model=ctx.client.label,
            status=status,
            input_tokens=gen.input_tokens,
            output_tokens=gen.output_tokens,
            cost=gen.cost,
            requests=0 if (gen.cached or gen.estimated or gen.deduplicated) else 1,
            cached=1 if gen.cached else 0,
            deduplicated=1 if gen.deduplicated and not gen.estimated else 0,
            estimated=gen.estimated,
            priced=ctx.client.price is not None,
            cached_input_tokens=gen.cached_input_tokens,
            cache_write_tokens=gen.cache_write_tokens,
            uncached_cost=gen.uncached_cost,
        )
    )
    call = AgentCall(
        agent=agent,
        status=status,
        value={"text": text} if status == "ok" else None,
        raw=kept((gen.refusal or "") if gen.refused else gen.text),
        attempts=1,
        reason=reason,
        cached=gen.cached,
    )
    return _described(call, ctx, messages, {"input_tokens": gen.input_tokens, "output_tokens": gen.output_tokens, "cost": gen.cost})

