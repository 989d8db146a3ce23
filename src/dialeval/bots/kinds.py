"""The built-in kinds of bot, one adapter each: a Python callable, a LangGraph graph, an
OpenAI-compatible endpoint and an HTTP JSON endpoint. Each takes the conversation as
OpenAI messages and the turn's idempotency key, and returns the reply's messages; what it
raises is the bot's failure (the caller records it)."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, convert_to_messages

from dialeval.bots.isolation import call_sync
from dialeval.bots.replies import BotError, dig, fill, reply_messages, text_of
from dialeval.bots.specs import CallableBot, EndpointBot, GraphBot, HttpBot, Messages, register_kind
from dialeval.errors import ConfigError
from dialeval.models.backends.base import CONNECTION, classify_error, error_text
from dialeval.endpoint import redacted

IDEMPOTENCY_HEADER = "Idempotency-Key"


def import_attr(ref: str) -> Any:
    """``module:attr`` or ``path/to/file.py:attr`` (dots in ``attr`` walk attributes)."""
    where, _, attr = ref.rpartition(":")
    try:
        if where.endswith(".py"):
            path = Path(where).resolve()
            name = f"dialeval_bot_{abs(hash(str(path)))}"
            module = sys.modules.get(name)
            if module is None:
                spec = importlib.util.spec_from_file_location(name, path)
                if spec is None or spec.loader is None:
                    raise ImportError(f"cannot import {path}")
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module
                spec.loader.exec_module(module)
        else:
            if os.getcwd() not in sys.path and "" not in sys.path:  # `mybot:reply` names mybot.py where the user runs, as uvicorn does
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(where)
        value: Any = module
        for part in attr.split("."):
            value = getattr(value, part)
        return value
    except (ImportError, AttributeError, OSError) as err:
        raise ConfigError(f"simulation option 'bot': cannot import {ref!r}: {err}") from None


def graph_ref(ref: str) -> str:
    """A ``langgraph.json:entry`` reference as the file path and attribute the entry names."""
    where, _, entry = ref.rpartition(":")
    if not where.endswith(".json"):
        return ref
    path = Path(where)
    try:
        graphs = json.loads(path.read_text(encoding="utf-8"))["graphs"]
        target = graphs[entry]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ConfigError(f"simulation option 'bot': {where} has no graph {entry!r} ({type(err).__name__}: {err})") from None
    file, _, attr = str(target).rpartition(":")
    return f"{(path.parent / file).resolve()}:{attr}"


def takes_turn_id(function: Any) -> bool:
    """Whether ``function`` accepts ``turn_id=`` (named, or through ``**kwargs``)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "turn_id" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


@register_kind("callable", CallableBot, lambda spec: f"Python callable {spec.callable}")
def callable_adapter(spec: CallableBot) -> Any:
    function = import_attr(spec.callable)
    if not callable(function):
        raise ConfigError(f"simulation option 'bot': {spec.callable} is not callable")
    keyed = takes_turn_id(function)

    async def reply(messages: Messages, session_id: str, *, turn_id: str | None = None) -> Messages:
        extra = {"turn_id": turn_id} if keyed else {}
        if inspect.iscoroutinefunction(function):
            answer = await function(messages, session_id, **extra)
        else:
            answer = await call_sync(function, messages, session_id, **extra)
        if inspect.isawaitable(answer):
            answer = await answer
        return reply_messages(answer)

    return reply


@register_kind("graph", GraphBot, lambda spec: f"LangGraph graph {spec.graph}")
def graph_adapter(spec: GraphBot) -> Any:
    graph = import_attr(graph_ref(spec.graph))
    if not hasattr(graph, "ainvoke") and callable(graph):
        graph = graph()  # a builder, as langgraph.json entries often are
    if not hasattr(graph, "ainvoke"):
        raise ConfigError(f"simulation option 'bot': {spec.graph} is not a LangGraph graph (no ainvoke)")
    try:
        keyed = "turn_id" in (graph.get_input_jsonschema().get("properties") or {})
    except Exception:  # a graph-like object without LangGraph's schema methods
        keyed = False

    async def reply(messages: Messages, session_id: str, *, turn_id: str | None = None) -> Messages:
        sent = convert_to_messages(messages)
        state_in: dict[str, Any] = {"messages": sent, **({"turn_id": turn_id} if keyed else {})}
        configurable = {"thread_id": session_id, **({"turn_id": turn_id} if turn_id else {})}
        state = await graph.ainvoke(state_in, config={"configurable": configurable})
        new = list(state.get("messages", []))[len(sent):] if isinstance(state, dict) else []
        return reply_messages(new)

    return reply


def _describe_endpoint(spec: EndpointBot) -> str:
    return f"OpenAI-compatible endpoint {spec.model} at {redacted(spec.base_url)}"


def _endpoint_failure(err: Exception, where: str) -> Exception:
    """A failed call of an OpenAI-compatible bot said as an HTTP JSON bot's is: the bot's URL
    (redacted) and the real cause, which the SDK hides ("Request timed out." for a refused
    connection; the reason is on ``__cause__``). Anything else (a bug of ours) passes as it is."""
    status = getattr(err, "status_code", None)
    if isinstance(status, int):
        return BotError(f"HTTP {status} from {where}: {error_text(err)}")
    if classify_error(err) == CONNECTION:
        return BotError(f"cannot reach {where}: {error_text(err)}")
    return err


@register_kind("model", EndpointBot, _describe_endpoint)
def endpoint_adapter(spec: EndpointBot) -> Any:
    """The bot's chat model through the ``openai-compatible:`` backend (no response cache: the bot is live)."""
    from dialeval.config import ModelSettings
    from dialeval.models.client import get_client

    settings = ModelSettings(
        spec=f"openai-compatible:{spec.model}", base_url=spec.base_url, api_key_env=spec.api_key_env,
        temperature=spec.temperature, max_tokens=spec.max_tokens, timeout=spec.timeout, max_retries=0,
        structured_output=False,
    )

    async def reply(messages: Messages, session_id: str, *, turn_id: str | None = None) -> Messages:
        sent: list[BaseMessage] = [SystemMessage(spec.system)] if spec.system else []
        extra: dict[str, Any] = {"extra_headers": {IDEMPOTENCY_HEADER: turn_id}} if turn_id else {}
        try:
            answer = await get_client(settings).model.ainvoke([*sent, *convert_to_messages(messages)], **extra)
        except Exception as err:
            raise _endpoint_failure(err, redacted(spec.base_url) or "") from None
        if not isinstance(answer, AIMessage):
            raise BotError(f"the endpoint answered {type(answer).__name__}")
        if (answer.response_metadata or {}).get("finish_reason") == "length":
            raise BotError("the reply was cut off at the bot's token limit")
        return reply_messages(answer)

    return reply


@register_kind("url", HttpBot, lambda spec: f"HTTP JSON endpoint {redacted(spec.url)}")
def http_adapter(spec: HttpBot) -> Any:
    import httpx

    headers = {"content-type": "application/json", **spec.headers}
    where = redacted(spec.url)

    async def reply(messages: Messages, session_id: str, *, turn_id: str | None = None) -> Messages:
        sent = dict(headers)
        if spec.api_key_env:
            sent["authorization"] = f"Bearer {os.environ.get(spec.api_key_env, '')}"
        if turn_id:
            sent[IDEMPOTENCY_HEADER] = turn_id
        try:
            async with httpx.AsyncClient(timeout=spec.timeout) as client:
                response = await client.post(spec.url, json=fill(spec.body, messages, session_id), headers=sent)
        except httpx.HTTPError as err:
            raise BotError(f"cannot reach {where}: {type(err).__name__}: {err}") from None
        text = text_of(response.content)
        if response.status_code >= 400:
            raise BotError(f"HTTP {response.status_code} from {where}: {text[:200]}")
        try:
            body = json.loads(text)
        except ValueError:
            raise BotError(f"the response of {where} is not JSON: {text[:200]}") from None
        return reply_messages(dig(body, spec.reply))

    return reply
