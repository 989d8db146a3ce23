"""The bot under test: what ``--option bot=...`` may name, and one adapter per kind.

Four kinds, told apart by their keys: an OpenAI-compatible endpoint (``model``,
``base_url``, its own ``system`` prompt; through the ``openai-compatible:`` backend's
LangChain chat model), an HTTP JSON endpoint (``url``, a ``body`` template with
``$messages``/``$session_id``/``$text``, and the ``reply`` path in the response), a Python
callable (``"module:function"``, sync or async) and a LangGraph graph (``graph``: an
import path or ``langgraph.json:entry``). Every adapter receives the conversation as
OpenAI-style messages and returns the reply as messages (several, tool calls kept);
anything it raises, or a time-out, is the bot's failure, recorded with its reason.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, convert_to_messages, convert_to_openai_messages
from pydantic import BaseModel, ConfigDict, Field, field_validator

from dialeval.errors import ConfigError

Messages = list[dict[str, Any]]  # OpenAI chat messages


class BotError(Exception):
    """The bot answered with something that is not a reply (empty, unreadable)."""


class EndpointBot(BaseModel):
    """An OpenAI-compatible chat endpoint and the system prompt the bot runs with."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1)
    base_url: str = Field(min_length=1)
    system: str = ""
    api_key_env: str | None = Field(default=None, description="the environment variable holding the bot's key")
    temperature: float = 0.0
    max_tokens: int = Field(default=512, gt=0)
    timeout: float = Field(default=60.0, gt=0)


class HttpBot(BaseModel):
    """Any HTTP JSON endpoint: POST ``body`` (strings ``$messages``, ``$session_id`` and
    ``$text`` replaced) to ``url``; the reply is at ``reply`` (dotted, e.g. ``choices.0.message``)."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1)
    body: Any = Field(default_factory=lambda: {"messages": "$messages", "session_id": "$session_id"})
    reply: str = "reply"
    headers: dict[str, str] = Field(default_factory=dict)
    api_key_env: str | None = Field(default=None, description="sent as 'Authorization: Bearer <value>'")
    timeout: float = Field(default=60.0, gt=0)

    @field_validator("headers")
    @classmethod
    def _no_secrets(cls, headers: dict[str, str]) -> dict[str, str]:
        """Options are written to the run folder: a key goes through ``api_key_env``, never here."""
        for name in headers:
            if re.search(r"auth|key|token|secret|cookie", name, re.IGNORECASE):
                raise ValueError(f"header {name!r} looks like a credential: name its environment variable in 'api_key_env' instead")
        return headers


class CallableBot(BaseModel):
    """``module:function``: ``reply(messages, session_id)``, sync or async, returning the
    reply's text, a message, or a list of messages."""

    model_config = ConfigDict(extra="forbid")

    callable: str = Field(pattern=r"^[\w.]+:[\w.]+$")
    timeout: float = Field(default=60.0, gt=0)


class GraphBot(BaseModel):
    """A LangGraph graph over ``{"messages": [...]}``: ``module:attr`` (a compiled graph or
    a function building one), ``path/to/file.py:attr``, or ``path/to/langgraph.json:entry``."""

    model_config = ConfigDict(extra="forbid")

    graph: str = Field(min_length=3)
    timeout: float = Field(default=60.0, gt=0)


BotSpec = EndpointBot | HttpBot | CallableBot | GraphBot
KINDS: dict[str, type[BaseModel]] = {"model": EndpointBot, "url": HttpBot, "callable": CallableBot, "graph": GraphBot}


def parse_bot(value: Any) -> BotSpec:
    """The ``bot`` option: ``"module:function"`` or an object whose keys name its kind."""
    if isinstance(value, str):
        if value.endswith(".json") or ".json:" in value or ".py:" in value:
            value = {"graph": value}
        else:
            value = {"callable": value}
    if not isinstance(value, dict):
        raise ConfigError("simulation option 'bot': a \"module:function\" string or an object (see docs/simulation.md)")
    kinds = [k for k in KINDS if k in value]
    if len(kinds) != 1:
        raise ConfigError(
            "simulation option 'bot': give exactly one of 'model' (+ base_url: an OpenAI-compatible endpoint), "
            f"'url' (an HTTP JSON endpoint), 'callable' or 'graph'; got keys {sorted(value)}"
        )
    from dialeval.config import describe_error
    from pydantic import ValidationError

    model = KINDS[kinds[0]]
    try:
        return model.model_validate(value)  # type: ignore[return-value]
    except ValidationError as err:
        raise ConfigError(f"simulation option 'bot' ({model.__name__}): {describe_error(err, model)}") from None


# ---------------------------------------------------------------- replies


def reply_messages(reply: Any) -> Messages:
    """A bot's reply as OpenAI messages: text, a message (dict or LangChain), or a list of them.
    Only assistant and tool messages count; an empty reply is a :class:`BotError`."""
    items = reply if isinstance(reply, list) else [reply]
    out: Messages = []
    for item in items:
        if isinstance(item, str):
            out.append({"role": "assistant", "content": item})
            continue
        if isinstance(item, dict) and "role" not in item:
            item = {"role": "assistant", **item}
        if not isinstance(item, (dict, BaseMessage)):
            raise BotError(f"a reply must be text, a message or a list of messages, got {type(item).__name__}")
        try:
            [message] = convert_to_openai_messages(convert_to_messages([item]))  # type: ignore[list-item]
        except Exception as err:  # a malformed message from the bot is its failure
            raise BotError(f"unreadable reply message {item!r:.200}: {err}") from None
        if message.get("role") in ("assistant", "tool"):
            out.append(message)
    if not any(m.get("content") or m.get("tool_calls") for m in out):
        raise BotError("empty reply")
    return out


def dig(value: Any, path: str) -> Any:
    """The value at a dotted path (``choices.0.message.content``) of a JSON response."""
    for part in path.split(".") if path else []:
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            raise BotError(f"the response has no {path!r} (stopped at {part!r}): {json.dumps(value)[:200]}")
    return value


def fill(template: Any, messages: Messages, session_id: str) -> Any:
    """The request body: ``$messages`` (the list), ``$session_id`` and ``$text`` (the user's last text) replaced."""
    text = next((m["content"] if isinstance(m["content"], str) else " ".join(
        p.get("text", "") for p in m["content"] if isinstance(p, dict)) for m in reversed(messages) if m["role"] == "user"), "")
    if isinstance(template, str):
        if template == "$messages":
            return messages
        return template.replace("$session_id", session_id).replace("$text", text)
    if isinstance(template, list):
        return [fill(v, messages, session_id) for v in template]
    if isinstance(template, dict):
        return {k: fill(v, messages, session_id) for k, v in template.items()}
    return template


# ---------------------------------------------------------------- adapters

Adapter = Callable[[Messages, str], Awaitable[Messages]]


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


def callable_adapter(spec: CallableBot) -> Adapter:
    function = import_attr(spec.callable)
    if not callable(function):
        raise ConfigError(f"simulation option 'bot': {spec.callable} is not callable")

    async def reply(messages: Messages, session_id: str) -> Messages:
        if inspect.iscoroutinefunction(function):
            answer = await function(messages, session_id)
        else:
            answer = await asyncio.to_thread(function, messages, session_id)
        if inspect.isawaitable(answer):
            answer = await answer
        return reply_messages(answer)

    return reply


def graph_adapter(spec: GraphBot) -> Adapter:
    graph = import_attr(graph_ref(spec.graph))
    if not hasattr(graph, "ainvoke") and callable(graph):
        graph = graph()  # a builder, as langgraph.json entries often are
    if not hasattr(graph, "ainvoke"):
        raise ConfigError(f"simulation option 'bot': {spec.graph} is not a LangGraph graph (no ainvoke)")

    async def reply(messages: Messages, session_id: str) -> Messages:
        sent = convert_to_messages(messages)
        state = await graph.ainvoke({"messages": sent}, config={"configurable": {"thread_id": session_id}})
        new = list(state.get("messages", []))[len(sent):] if isinstance(state, dict) else []
        return reply_messages(new)

    return reply


def endpoint_adapter(spec: EndpointBot) -> Adapter:
    """The bot's chat model through the ``openai-compatible:`` backend (no response cache: the bot is live)."""
    from dialeval.config import ModelSettings
    from dialeval.models.client import get_client

    settings = ModelSettings(
        spec=f"openai-compatible:{spec.model}", base_url=spec.base_url, api_key_env=spec.api_key_env,
        temperature=spec.temperature, max_tokens=spec.max_tokens, timeout=spec.timeout, max_retries=0,
        structured_output=False,
    )

    async def reply(messages: Messages, session_id: str) -> Messages:
        sent: list[BaseMessage] = [SystemMessage(spec.system)] if spec.system else []
        answer = await get_client(settings).model.ainvoke([*sent, *convert_to_messages(messages)])
        if not isinstance(answer, AIMessage):
            raise BotError(f"the endpoint answered {type(answer).__name__}")
        if (answer.response_metadata or {}).get("finish_reason") == "length":
            raise BotError("the reply was cut off at the bot's token limit")
        return reply_messages(answer)

    return reply


def http_adapter(spec: HttpBot) -> Adapter:
    import httpx

    headers = {"content-type": "application/json", **spec.headers}
    if spec.api_key_env:
        headers["authorization"] = f"Bearer {os.environ.get(spec.api_key_env, '')}"

    async def reply(messages: Messages, session_id: str) -> Messages:
        async with httpx.AsyncClient(timeout=spec.timeout) as client:
            response = await client.post(spec.url, json=fill(spec.body, messages, session_id), headers=headers)
        if response.status_code >= 400:
            raise BotError(f"HTTP {response.status_code}: {response.text[:200]}")
        try:
            body = response.json()
        except ValueError:
            raise BotError(f"the response is not JSON: {response.text[:200]}") from None
        return reply_messages(dig(body, spec.reply))

    return reply


def adapter(spec: BotSpec) -> Adapter:
    """The adapter of ``spec``, bounded by its time-out."""
    builders: dict[type, Callable[[Any], Adapter]] = {
        EndpointBot: endpoint_adapter, HttpBot: http_adapter, CallableBot: callable_adapter, GraphBot: graph_adapter,
    }
    inner = builders[type(spec)](spec)

    async def reply(messages: Messages, session_id: str) -> Messages:
        return await asyncio.wait_for(inner(messages, session_id), timeout=spec.timeout)

    return reply


_RESOLVED: dict[str, Adapter] = {}


def resolve(value: Any) -> Adapter:
    """The ``bot`` option's adapter, built once per spec. Called while the options are
    checked, before any model call, so a bot that cannot be imported, found or built
    stops the run as a :class:`ConfigError` naming ``bot``, never as the bot's failure."""
    spec = parse_bot(value)
    key = type(spec).__name__ + spec.model_dump_json()
    if key not in _RESOLVED:
        try:
            _RESOLVED[key] = adapter(spec)
        except ConfigError:
            raise
        except Exception as err:  # raised while importing or building the bot: its set-up, not a reply
            raise ConfigError(f"simulation option 'bot': cannot set up {describe(spec)}: {type(err).__name__}: {err}") from None
    return _RESOLVED[key]


def describe(spec: BotSpec) -> str:
    """One line naming the bot (for the report), never a key."""
    if isinstance(spec, EndpointBot):
        return f"OpenAI-compatible endpoint {spec.model} at {spec.base_url}"
    if isinstance(spec, HttpBot):
        return f"HTTP JSON endpoint {spec.url}"
    if isinstance(spec, CallableBot):
        return f"Python callable {spec.callable}"
    return f"LangGraph graph {spec.graph}"
