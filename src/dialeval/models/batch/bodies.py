"""The request body a live call would send, and the message it would have produced.

A batch line must ask exactly what the live call asks (same structured-output mode, same
token limit, same prompt-cache marks), and its answer must become the same ``AIMessage``,
so ``ModelClient`` builds the same ``Generation`` and the response cache sees the same
text either way. Both directions use LangChain's own builders (``_get_request_payload``,
``_create_chat_result`` / ``_format_output``): private names, each checked before use;
when one is gone, a small builder of our own for text prompts takes over.
"""

from __future__ import annotations

import json
import weakref
from typing import TYPE_CHECKING, Any

from dialeval.models.batch.shared import BatchUnsupported

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage, BaseMessage
    from pydantic import BaseModel

    from dialeval.models.client import ModelClient

# keyword arguments a binding carries for LangSmith only; ainvoke drops them before the payload
_TRACE_ONLY = ("ls_structured_output_format", "structured_output_format")
_PAYLOAD_MODELS: weakref.WeakKeyDictionary[ModelClient, Any] = weakref.WeakKeyDictionary()
# per client: (schema, narrowed JSON schema) -> the structured-output kwargs (LangChain
# rebuilds a schema's tool definition on every bind: most of a body's cost)
_KWARGS: weakref.WeakKeyDictionary[ModelClient, dict[tuple[Any, str], dict[str, Any]]] = weakref.WeakKeyDictionary()


def payload_model(client: ModelClient) -> Any:
    """A chat model of ``client``'s settings used only to build bodies (it never connects)."""
    model = _PAYLOAD_MODELS.get(client)
    if model is None:
        model = _PAYLOAD_MODELS[client] = client.impl.build()
    return model


def _call_kwargs(client: ModelClient, model: Any, schema: type[BaseModel] | None, json_schema: dict[str, Any] | None) -> dict[str, Any]:
    """What the live path binds for structured output (``response_format``, or the forced tool)."""
    if schema is None or not client.settings.structured_output:
        return {}
    known = _KWARGS.setdefault(client, {})
    key = (schema, json.dumps(json_schema, sort_keys=True))
    if key not in known:
        bound = client.impl.structured(model, schema, json_schema)
        kwargs = dict(getattr(bound, "kwargs", None) or {})
        for name in _TRACE_ONLY:
            kwargs.pop(name, None)
        known[key] = kwargs
    return dict(known[key])


def sent_messages(client: ModelClient, messages: list[BaseMessage], schema: type[BaseModel] | None) -> list[BaseMessage]:
    """``messages`` as ``ModelClient.generate`` sends them (made sendable, then as the backend puts them on the wire)."""
    from dialeval.jsonsafe import sendable

    return client.impl.outgoing(sendable(client.impl.prepare(messages, schema)))


def _jsonable(value: Any) -> Any:
    """The payload as the SDK would put it on the wire (pydantic objects as their JSON)."""
    def default(obj: Any) -> Any:
        if hasattr(obj, "model_dump"):
            return obj.model_dump(mode="json", exclude_none=True)
        raise TypeError(f"cannot send {type(obj).__name__} in a batch line")

    return json.loads(json.dumps(value, default=default, ensure_ascii=False))


def request_body(
    client: ModelClient,
    messages: list[BaseMessage],
    schema: type[BaseModel] | None = None,
    json_schema: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON body the live call for these arguments (as given to ``ModelClient.generate``) would POST."""
    if client.backend not in ("openai", "openai-compatible", "anthropic"):
        raise BatchUnsupported(f"model {client.label}: batch: true needs an openai, openai-compatible or anthropic model")
    model = payload_model(client)
    sent = sent_messages(client, messages, schema)
    kwargs = _call_kwargs(client, model, schema, json_schema)
    builder = getattr(model, "_get_request_payload", None)
    if callable(builder):
        payload = builder(sent, **kwargs)
    else:
        payload = fallback_body(client, sent, kwargs)
    payload = wire_body(client, payload)
    if client.backend != "anthropic":
        payload.setdefault("stream", False)  # what the OpenAI SDK's create() sends
    return _jsonable(payload)


def wire_body(client: ModelClient, payload: dict[str, Any]) -> dict[str, Any]:
    """The JSON the SDK posts for ``create(**payload)``: its ``extra_body`` merged in,
    unset values left out. Options that would travel outside the body stop here, since
    a batch line cannot carry them."""
    body = {k: v for k, v in payload.items() if v is not None}
    outside = [k for k in ("extra_headers", "extra_query", "betas") if body.get(k)]
    if outside:
        raise BatchUnsupported(f"model {client.label}: a batch line cannot carry {', '.join(outside)}")
    for name in ("extra_headers", "extra_query", "betas", "timeout"):
        body.pop(name, None)
    extra = body.pop("extra_body", None) or {}
    return {**body, **extra}


# --- answers -----------------------------------------------------------------------------


def response_message(client: ModelClient, response: dict[str, Any], schema: type[BaseModel] | None = None) -> AIMessage:
    """The ``AIMessage`` the live path would have made of ``response`` (a chat.completion or
    an Anthropic message body): content or tool call, usage with cached input, finish reason."""
    model = payload_model(client)
    built = _langchain_message(client, model, response, schema)
    return built if built is not None else fallback_message(client, response)


def _langchain_message(client: ModelClient, model: Any, response: dict[str, Any], schema: type[BaseModel] | None) -> AIMessage | None:
    try:
        from langchain_core.language_models.chat_models import _gen_info_and_msg_metadata
    except ImportError:
        return None
    if client.backend == "anthropic":
        import anthropic

        build = getattr(model, "_format_output", None)
        if not callable(build):
            return None
        result = build(anthropic.types.Message.model_validate(response), **_call_kwargs(client, model, schema, None))
    else:
        import openai

        build = getattr(model, "_create_chat_result", None)
        if not callable(build):
            return None
        # the SDK's own object, as the live path hands it over (its unset fields read as None)
        result = build(openai.types.chat.ChatCompletion.model_validate(response))
    generation = result.generations[0]
    message = generation.message
    message.response_metadata = _gen_info_and_msg_metadata(generation)
    if len(result.generations) == 1 and result.llm_output is not None:
        message.response_metadata = {**result.llm_output, **message.response_metadata}
    return message  # type: ignore[no-any-return]


# --- builders of our own, for when LangChain's private names are gone ----------------------

_ROLES = {"system": "system", "human": "user", "ai": "assistant"}


def fallback_body(client: ModelClient, messages: list[BaseMessage], kwargs: dict[str, Any]) -> dict[str, Any]:
    """A body for text prompts (blocks passed as they are), built without LangChain."""
    s = client.settings
    rows = []
    for m in messages:
        if m.type not in _ROLES:
            raise BatchUnsupported(f"model {client.label}: cannot put a {m.type} message in a batch line")
        rows.append({"role": _ROLES[m.type], "content": m.content})
    if client.backend == "anthropic":
        system = [r["content"] for r in rows if r["role"] == "system"]
        body: dict[str, Any] = {"model": client.name, "max_tokens": s.max_tokens, "messages": [r for r in rows if r["role"] != "system"]}
        if system:
            body["system"] = system[0] if len(system) == 1 else [
                block for part in system for block in (part if isinstance(part, list) else [{"type": "text", "text": part}])
            ]
    else:
        body = {"messages": rows, "model": client.name, "stream": False, "max_completion_tokens": s.max_tokens}
    body["temperature"] = s.temperature
    return {**body, **kwargs}


def fallback_message(client: ModelClient, response: dict[str, Any]) -> AIMessage:
    """The message ``response`` carries, with usage and finish reason, built without LangChain."""
    from langchain_core.messages import AIMessage

    usage = response.get("usage") or {}
    tool_calls: list[dict[str, Any]] = []
    if client.backend == "anthropic":
        blocks = response.get("content") or []
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        tool_calls = [
            {"name": b["name"], "args": b.get("input") or {}, "id": b.get("id"), "type": "tool_call"}
            for b in blocks if b.get("type") == "tool_use"
        ]
        read, written = usage.get("cache_read_input_tokens") or 0, usage.get("cache_creation_input_tokens") or 0
        n_in = (usage.get("input_tokens") or 0) + read + written
        n_out = usage.get("output_tokens") or 0
        metadata = {"stop_reason": response.get("stop_reason"), "model_name": response.get("model")}
    else:
        choice = (response.get("choices") or [{}])[0]
        text = (choice.get("message") or {}).get("content") or ""
        read, written = ((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0), 0
        n_in, n_out = usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0
        metadata = {"finish_reason": choice.get("finish_reason"), "model_name": response.get("model")}
    return AIMessage(
        content=text,
        tool_calls=tool_calls,
        response_metadata=metadata,
        usage_metadata={
            "input_tokens": n_in, "output_tokens": n_out, "total_tokens": n_in + n_out,
            "input_token_details": {"cache_read": read, "cache_creation": written},
        },
    )
