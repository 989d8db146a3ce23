"""The pattern every agent follows: render a template, call the model, parse honestly.

An agent module defines a pydantic output schema, pure ``build_messages``/``parse``
helpers where useful, and registers a node builder with :func:`register_agent`. Inside
the node, :func:`ask` does the call: cache, corrective retries, truncation detection,
accounting, and an explicit ``unparsed`` outcome when nothing fits the schema.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Literal, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, SerializerFunctionWrapHandler, model_serializer

from dialeval.config import EvalContext, ModelSettings, primary
from dialeval.judge_spec import Composite
from dialeval.models.backends.base import error_text
from dialeval.models.client import ModelClient, get_client
from dialeval.agents.parsing import MAX_ANSWER_CHARS, ParseFailure, parse_answer, schema_hint
from dialeval.secrets import scrub
from dialeval.models.progress import tick
from dialeval.agents.templates import Template, load_template
from dialeval.models.usage import CallRecord, public_url, record, start_meter
from dialeval.agents.placeholders import placeholder_for  # noqa: F401  (agents import it from here)
from dialeval.agents.registry import AGENTS, AgentEntry, NodeFn, agent_node, register_agent, resolve_agent  # noqa: F401  (agents import them from here)

T = TypeVar("T", bound=BaseModel)
Status = Literal["ok", "unparsed", "truncated", "error"]


class AgentCall(BaseModel):
    """What one agent call produced, kept in results so nothing is silently lost."""

    agent: str
    status: Status
    value: dict[str, Any] | None = None
    raw: str = ""
    attempts: int = 0
    reason: str | None = None
    cached: bool = False
    # for the viewer: who asked, which model, what it cost, and the prompt (see prompt_store)
    role: str | None = None
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    prompt_ref: str | None = None
    # issue 49: an ensemble's or cascade's record (which stage decided, why, every vote); absent otherwise
    judge: dict[str, Any] | None = None

    @model_serializer(mode="wrap")
    def _judge_only_when_set(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and self.judge is None:
            data.pop("judge", None)
        return data


@dataclass
class Answer(Generic[T]):
    """A parsed value (``None`` unless status is ``ok``) and the record of the call."""

    value: T | None
    call: AgentCall
    messages: list[BaseMessage] = field(default_factory=list)
    confidence: float | None = None  # issue 49: the verdict's probability, from logprobs where the model gave them

    @property
    def ok(self) -> bool:
        return self.value is not None


@dataclass
class AgentContext:
    """Everything an agent needs from the run: its model client, template and retries."""

    role: str
    client: ModelClient
    template: Template
    parse_retries: int
    cache_path: str | None
    options: dict[str, Any]
    run_dir: str | None = None  # where the prompts of the calls are stored
    read_cache: bool = True
    judge: Composite | None = None  # issue 49: the role is an ensemble or a cascade (ask hands it to agents.ensemble)

    @classmethod
    def for_role(
        cls,
        context: EvalContext,
        role: str,
        default_template: str,
        *,
        template_key: str | None = None,
        model: ModelSettings | None = None,
        template: Template | None = None,
    ) -> AgentContext:
        """The model configured for ``role`` and the template under ``template_key``
        (default: the role; agents with several templates give each its own key).
        ``model``/``template`` override both, for turns that continue another agent's
        conversation."""
        resolved = model or context.judge_for(role)  # issue 49: the one place a role becomes a model, ensemble or cascade
        return cls(
            role=role,
            client=get_client(primary(resolved)),
            judge=None if isinstance(resolved, ModelSettings) else resolved,
            template=template or load_template(context.templates.get(template_key or role, default_template)),
            parse_retries=context.parse_retries,
            cache_path=context.cache_path,
            options=context.options,
            run_dir=context.run_dir,
            read_cache=not context.refresh_cache,
        )


def _kept(text: str) -> str:
    """At most :data:`MAX_ANSWER_CHARS` of an answer, with a note when cut: a runaway
    reply must not fill results files or be sent back in a corrective retry."""
    if len(text) <= MAX_ANSWER_CHARS:
        return text
    return text[:MAX_ANSWER_CHARS] + f"\n[... cut by dialeval: {len(text)} characters in all]"


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


def _correction(reason: str, schema: type[BaseModel]) -> str:
    return (
        f"I could not read your answer ({reason}). Reply again with only a JSON object "
        f"of this shape and nothing else: {schema_hint(schema)}"
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
) -> Answer[T]:
    """Call the model and parse its answer into ``schema``, retrying with corrections.

    ``validate`` checks meaning beyond the schema (e.g. one verdict per fact) and returns
    a reason when the answer does not fit. ``json_schema`` narrows the schema for this
    call where the agent knows more in advance (:func:`schema_with`); local models decode
    under it. A ``length`` finish is never parsed as whole.
    The returned ``messages`` include the final answer, for multi-turn agents.
    ``retries`` overrides the run's corrective retries and ``retry_truncated=False``
    keeps a cut-off answer as ``truncated`` instead of asking for a shorter one: a
    system under test gets no second chance its paper did not give it.
    ``score`` reads an answer as one number where the role is an ensemble or a cascade
    (default: a numeric ``verdict``/``score``/``rating`` field): their verdicts are combined on it.
    """
    if ctx.judge is not None:  # issue 49: each member's call comes back through here
        from dialeval.agents.ensemble import ask_composite

        options = dict(validate=validate, placeholder=placeholder, retries=retries, retry_truncated=retry_truncated,
                       json_schema=json_schema)
        return await ask_composite(ctx, agent, messages, schema, score, options)  # type: ignore[arg-type]
    start_meter(None if ctx.client.injected else ctx.client.endpoint)  # retries, 429s, the server's model name
    conversation = list(messages)
    totals: dict[str, Any] = {
        "input_tokens": 0, "output_tokens": 0, "cost": 0.0, "requests": 0, "cached": 0,
        "cached_input_tokens": 0, "cache_write_tokens": 0, "uncached_cost": 0.0,
    }
    estimated = False
    reason: str | None = "no answer"
    status: Status = "unparsed"
    raw = ""
    value: T | None = None
    confidence: float | None = None
    cached_all = True
    attempt = 0
    error: tuple[str, CallRecord] | None = None
    for attempt in range(1, (ctx.parse_retries if retries is None else retries) + 2):
        dummy = None
        if ctx.client.is_dry_run:
            dummy = (placeholder() if placeholder else placeholder_for(schema)).model_dump_json()
        try:
            gen = await ctx.client.generate(
                conversation,
                schema=schema,
                json_schema=json_schema,
                placeholder=dummy,
                cache_path=ctx.cache_path,
                read_cache=ctx.read_cache,
            )
        except Exception as err:  # the backend gave up after its own retries
            error = _error_record(ctx, agent, err, **totals)
            status, reason, raw = "error", error[0], ""
            cached_all = False
            break
        estimated = estimated or gen.estimated
        totals["input_tokens"] += gen.input_tokens
        totals["output_tokens"] += gen.output_tokens
        totals["cost"] += gen.cost
        totals["uncached_cost"] += gen.cost if gen.uncached_cost is None else gen.uncached_cost
        totals["cached_input_tokens"] += gen.cached_input_tokens
        totals["cache_write_tokens"] += gen.cache_write_tokens
        totals["cached" if gen.cached else "requests"] += 0 if gen.estimated else 1
        cached_all = cached_all and gen.cached
        raw = _kept(gen.text)
        if gen.refused:  # issue 33: no correction cures a refusal; its text is what the model said
            status, reason, raw = "unparsed", "refused", _kept(gen.refusal or "")
            conversation.append(AIMessage(raw))
            break
        if gen.truncated:
            status, reason = "truncated", "the answer hit the token limit"
            if not retry_truncated:
                conversation.append(AIMessage(raw))
                break
            conversation += [AIMessage(raw), HumanMessage("Your answer was cut off. Answer again, shorter, with only the JSON.")]
            continue
        try:
            value = parse_answer(gen.text, schema)
            problem = validate(value) if validate else None
            if problem:
                raise ParseFailure(problem)
        except ParseFailure as failure:
            value = None
            status, reason = "unparsed", failure.reason
            conversation += [AIMessage(raw), HumanMessage(_correction(failure.reason, schema))]
            continue
        except Exception as err:  # a reply that crashes our code fails the item, and is not cached
            value = None
            error = _error_record(ctx, agent, err, **totals)
            status, reason = "error", f"reading the answer failed: {error[0]}"
            cached_all = False
            break
        status, reason = "ok", None
        conversation.append(AIMessage(raw))
        ctx.client.remember(gen)
        if gen.logprobs:  # issue 49: a cascade's first stage may be trusted on it
            from dialeval.agents.logprobs import verdict_probability

            confidence = verdict_probability(gen.logprobs)
        break
    tick()
    call = AgentCall(
        agent=agent,
        status=status,
        value=value.model_dump() if value is not None else None,
        raw=raw,
        attempts=attempt,
        reason=reason,
        cached=cached_all and status != "error",
    )
    # the prompt of the last request: without the unsent correction and the answer itself
    sent = conversation
    if status != "error":
        sent = conversation[:-1] if isinstance(conversation[-1], AIMessage) else conversation[:-2]
    call = _described(call, ctx, sent, totals)
    if error is not None:
        record(error[1])
    else:
        record(
            CallRecord(
                agent=agent,
                model=ctx.client.label,
                status=status,
                input_tokens=totals["input_tokens"],
                output_tokens=totals["output_tokens"],
                cost=totals["cost"],
                requests=totals["requests"],
                cached=totals["cached"],
                estimated=estimated,
                priced=ctx.client.price is not None,
                cached_input_tokens=totals["cached_input_tokens"],
                cache_write_tokens=totals["cache_write_tokens"],
                uncached_cost=totals["uncached_cost"],
            )
        )
    return Answer(value=value if status == "ok" else None, call=call, messages=conversation, confidence=confidence)


async def ask_text(ctx: AgentContext, agent: str, messages: list[BaseMessage], placeholder: str = "dry-run reply") -> AgentCall:
    """One free-text call (a system under test replies in prose, not JSON).

    ``ok`` needs a non-empty answer that was not cut off; ``truncated``, ``unparsed``
    (empty) and ``error`` keep the raw text and are never scored. ``value`` is
    ``{"text": ...}`` when ok.
    """
    reason: str | None
    start_meter(None if ctx.client.injected else ctx.client.endpoint)
    try:
        gen = await ctx.client.generate(
            messages, placeholder=placeholder, cache_path=ctx.cache_path, read_cache=ctx.read_cache
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
            requests=0 if (gen.cached or gen.estimated) else 1,
            cached=1 if gen.cached else 0,
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
        raw=_kept((gen.refusal or "") if gen.refused else gen.text),
        attempts=1,
        reason=reason,
        cached=gen.cached,
    )
    return _described(call, ctx, messages, {"input_tokens": gen.input_tokens, "output_tokens": gen.output_tokens, "cost": gen.cost})

