"""The request body a live call would send, and the message its answer becomes.

A batch line must ask exactly what the live call asks (same structured-output mode, same
token limit, same prompt-cache marks), and its answer must become a message from which
``ModelClient`` builds the same ``Generation``, so the response cache sees the same text
either way. Both directions follow the providers' published API references (OpenAI's
chat completions body and answer, Anthropic's messages body and answer), as lm-eval owns
its payloads; ``tests/test_batch_bodies.py`` checks them against what the live chat model
sends and returns. Models the chat model would send to OpenAI's Responses API are not
covered: their batch lines would differ from the live call.
"""

from __future__ import annotations

import functools
import json
import re
from typing import TYPE_CHECKING, Any

from dialeval.models.batch.shared import BatchUnsupported

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage, BaseMessage
    from pydantic import BaseModel

    from dialeval.models.client import ModelClient

_ROLES = {"system": "system", "human": "user", "ai": "assistant"}
_DATA_URL = re.compile(r"^data:(?P<media_type>image/.+);base64,(?P<data>.+)$", re.DOTALL)


def sent_messages(client: ModelClient, messages: list[BaseMessage], schema: type[BaseModel] | None) -> list[BaseMessage]:
    """``messages`` as ``ModelClient.generate`` sends them (made sendable, then as the backend puts them on the wire)."""
    from dialeval.jsonsafe import sendable

    return client.impl.outgoing(sendable(client.impl.prepare(messages, schema)))


def request_body(
    client: ModelClient,
    messages: list[BaseMessage],
    schema: type[BaseModel] | None = None,
    json_schema: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON body the live call for these arguments (as given to ``ModelClient.generate``) would POST."""
    if client.backend not in ("openai", "openai-compatible", "anthropic"):
        raise BatchUnsupported(f"model {client.label}: batch: true needs an openai, openai-compatible or anthropic model")
    sent = sent_messages(client, messages, schema)
    structured = schema if schema is not None and client.settings.structured_output else None
    if client.backend == "anthropic":
        return anthropic_body(client, sent, structured, json_schema)
    return openai_body(client, sent, structured, json_schema)


def _role(client: ModelClient, message: BaseMessage) -> str:
    role = _ROLES.get(message.type)
    if role is None:
        raise BatchUnsupported(f"model {client.label}: cannot put a {message.type} message in a batch line")
    return role


# --- OpenAI: POST /v1/chat/completions -------------------------------------------------------


def openai_body(
    client: ModelClient, messages: list[BaseMessage], schema: type[BaseModel] | None, json_schema: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A chat completions body: model, messages, ``max_completion_tokens``, temperature and
    the JSON-schema ``response_format`` (the call's narrowed schema where it has one). o-series models take ``developer`` for ``system``,
    and reasoning models (gpt-5 but gpt-5-chat) accept no temperature other than 1."""
    from dialeval.models.backends.openai import narrowed_format

    s, model = client.settings, client.name
    rows = []
    for message in messages:
        role = _role(client, message)
        if role == "system" and re.match(r"^o\d", model):
            role = "developer"
        row: dict[str, Any] = {"content": message.content, "role": role}
        if message.name:
            row["name"] = message.name
        rows.append(row)
    body: dict[str, Any] = {"model": model, "stream": False, "messages": rows, "max_completion_tokens": s.max_tokens}
    temperature: float | None = s.temperature
    if temperature is None and model.lower().startswith("o1"):
        temperature = 1
    if model.lower().startswith("gpt-5") and "chat" not in model.lower() and temperature != 1:
        temperature = None
    if temperature is not None:
        body["temperature"] = temperature
    if schema is not None:
        body["response_format"] = narrowed_format(schema, json_schema)
    return body


# --- Anthropic: POST /v1/messages ------------------------------------------------------------


def anthropic_body(
    client: ModelClient, messages: list[BaseMessage], schema: type[BaseModel] | None, json_schema: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A messages body: the system prompt apart, user and assistant turns alternating
    (consecutive user messages merged into one of blocks), images as ``image`` blocks,
    structured output as one forced tool (over the call's narrowed schema where it has one)."""
    s = client.settings
    system: list[Any] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = _role(client, message)
        if role == "system":
            system.append(message.content)
            continue
        content = _anthropic_content(message.content)
        if turns and role == "user" and turns[-1]["role"] == "user":
            turns[-1]["content"] = _as_blocks(turns[-1]["content"]) + _as_blocks(content)
        else:
            turns.append({"role": role, "content": content})
    body: dict[str, Any] = {"max_tokens": s.max_tokens, "messages": turns, "model": client.name}
    if system:
        body["system"] = system[0] if len(system) == 1 else [b for part in system for b in _as_blocks(part)]
        if isinstance(body["system"], list):
            body["system"] = [_anthropic_block(b) for b in body["system"]]
    if s.temperature is not None:
        body["temperature"] = s.temperature
    if schema is not None:
        body["tools"] = [anthropic_tool(schema, json_schema)]
        body["tool_choice"] = {"type": "tool", "name": schema.__name__}
    return body


@functools.lru_cache(maxsize=64)
def _tool_of(schema: type[BaseModel]) -> str:
    from langchain_core.utils.function_calling import convert_to_openai_tool

    function = convert_to_openai_tool(schema)["function"]
    return json.dumps({"name": function["name"], "input_schema": function["parameters"], "description": function.get("description", "")})


def anthropic_tool(schema: type[BaseModel], json_schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """The tool a structured answer is forced through: the schema's name, description and
    JSON schema, or the live path's tool over the call's narrowed schema."""
    if json_schema is not None:
        from dialeval.models.backends.anthropic import narrowed_tool

        return narrowed_tool(schema, json_schema)
    return json.loads(_tool_of(schema))  # type: ignore[no-any-return]


def _as_blocks(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _anthropic_content(content: Any) -> Any:
    return content if isinstance(content, str) else [_anthropic_block(b) for b in content]


def _anthropic_block(block: Any) -> Any:
    """A content block in Anthropic's shape: text as it is, an ``image_url`` as an ``image``."""
    if isinstance(block, str):
        return {"type": "text", "text": block}
    if block.get("type") != "image_url":
        return block
    url = block["image_url"]["url"] if isinstance(block["image_url"], dict) else block["image_url"]
    found = _DATA_URL.match(url)
    source = {"type": "base64", **found.groupdict()} if found else {"type": "url", "url": url}
    image: dict[str, Any] = {"type": "image", "source": source}
    if "cache_control" in block:
        image["cache_control"] = block["cache_control"]
    return image


# --- answers ---------------------------------------------------------------------------------


def response_message(client: ModelClient, response: dict[str, Any], schema: type[BaseModel] | None = None) -> AIMessage:
    """The ``AIMessage`` of a batch line's answer (a chat.completion or an Anthropic message
    body, as each API reference describes it): text, tool call, usage with cached input,
    finish reason and model name, in the fields ``ModelClient.answer_of`` reads."""
    from langchain_core.messages import AIMessage

    usage = response.get("usage") or {}
    tool_calls: list[dict[str, Any]] = []
    content: Any
    if client.backend == "anthropic":
        blocks = response.get("content") or []
        texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
        content = texts[0] if len(blocks) == 1 and texts else [b for b in blocks if b.get("type") in ("text", "tool_use")]
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
        content = (choice.get("message") or {}).get("content") or ""
        read, written = ((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0), 0
        n_in, n_out = usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0
        metadata = {"finish_reason": choice.get("finish_reason"), "model_name": response.get("model")}
    return AIMessage(
        content=content,
        tool_calls=tool_calls,
        response_metadata=metadata,
        usage_metadata={
            "input_tokens": n_in, "output_tokens": n_out, "total_tokens": n_in + n_out,
            "input_token_details": {"cache_read": read, "cache_creation": written},
        },
    )
