"""The chat-completions body ``ChatOpenAI`` sends and the ``AIMessage`` it makes of the
answer, for the plain calls dialeval makes, without importing ``langchain_openai``.

Importing ``langchain_openai`` costs about as much CPU as the OpenAI SDK itself, and a
run's first request waits for it. For the messages dialeval sends (system, user and
assistant text, text and ``image_url`` blocks) and a model name LangChain treats like
any other, its body and its answer are a few lines of JSON shaping, written here. Any
other case gets ``None`` and goes through ``ChatOpenAI`` as before: a name LangChain
rewrites for (o-series, gpt-5, Responses-API models), a message with tool calls, names
or blocks of other kinds, an answer with tool calls or several choices.

``tests/test_openai_body.py`` compares both over a table of cases, against the
``langchain_openai`` release(s) in :data:`VERIFIED`; with any other release installed,
the light path stays off (:func:`verified`) until that test has been run against it.
"""

from __future__ import annotations

import functools
import os
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage, BaseMessage

# langchain-openai releases whose ChatOpenAI this module was compared with (the test above)
VERIFIED = ("1.7.3", "1.7.4")

# model names LangChain changes a request for: a role renamed (o-series), temperature set
# or dropped (o1, gpt-5), the Responses API chosen (its "-pro" and codex models, gpt-6 tools)
_SPECIAL_NAME = re.compile(r"^(o\d|gpt-5|gpt-6)|codex", re.IGNORECASE)
# environment variables that change what ChatOpenAI builds (output format, proxy, gateway)
_SPECIAL_ENV = ("LC_OUTPUT_VERSION", "OPENAI_PROXY")
_SPECIAL_ENV_PREFIXES = ("LANGSMITH_GATEWAY",)  # LangSmith's gateway rewrites the URL and key
_TEXT_KEYS = {"type", "text"}
_IMAGE_KEYS = {"type", "image_url"}
_IMAGE_URL_KEYS = {"url", "detail"}
# keys of additional_kwargs that ChatOpenAI turns into request fields
_AI_EXTRAS = {"tool_calls", "function_call", "audio", "name"}


@functools.lru_cache(maxsize=1)
def verified() -> bool:
    """Whether the installed ``langchain_openai`` is one this module was compared with."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("langchain-openai") in VERIFIED
    except PackageNotFoundError:
        return False


def plain_setup(model: str) -> bool:
    """True when ``ChatOpenAI(model=model, ...)`` in this environment builds bodies and
    clients the way this module does (no special model name, no environment override)."""
    if _SPECIAL_NAME.search(model or ""):
        return False
    if any(os.environ.get(name) for name in _SPECIAL_ENV):
        return False
    return not any(name.startswith(_SPECIAL_ENV_PREFIXES) for name in os.environ)


def request_body(
    model: str, messages: list[BaseMessage], *, max_tokens: int | None, temperature: float | None,
    response_format: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """``ChatOpenAI(model=model, max_tokens=..., temperature=...)._get_request_payload(messages,
    response_format=...)``, keys in the same order; ``None`` for a case this does not know."""
    converted = [_message(m) for m in messages]
    if any(m is None for m in converted) or not plain_setup(model):
        return None
    body: dict[str, Any] = {"model": model, "stream": False}
    if temperature is not None:
        body["temperature"] = temperature
    if max_tokens is not None:
        body["max_completion_tokens"] = max_tokens  # ChatOpenAI renames max_tokens, after its other defaults
    if response_format is not None:
        body["response_format"] = response_format  # the call's own arguments
    body["messages"] = converted
    return body


def _message(message: Any) -> dict[str, Any] | None:
    """One message as LangChain's ``_convert_message_to_dict`` makes it, or ``None``."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    kind = type(message)
    extras = message.additional_kwargs
    if message.name is not None or "name" in extras:
        return None
    content = _content(message.content)
    if content is None:
        return None
    if kind is HumanMessage:
        return {"content": content, "role": "user"}
    if kind is SystemMessage:
        return None if "__openai_role__" in extras else {"content": content, "role": "system"}
    if kind is AIMessage:
        plain = (
            not message.tool_calls and not message.invalid_tool_calls and not (_AI_EXTRAS & set(extras))
            and not message.response_metadata.get("output_version")
        )
        return {"content": content, "role": "assistant"} if plain else None
    return None


def _content(content: Any) -> Any:
    """Text, or a list of text and ``image_url`` blocks, passed as they are; else ``None``."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    for block in content:
        if not isinstance(block, dict):
            return None
        keys = set(block)
        if block.get("type") == "text" and keys == _TEXT_KEYS and isinstance(block["text"], str):
            continue
        image = block.get("image_url")
        if (
            block.get("type") == "image_url" and keys == _IMAGE_KEYS and isinstance(image, dict)
            and isinstance(image.get("url"), str) and set(image) <= _IMAGE_URL_KEYS
        ):
            continue
        return None
    return content


def answer_message(response: Any, model: str) -> AIMessage | None:
    """The ``AIMessage`` the direct path makes of a chat-completions answer (a dict shaped
    like ``ChatCompletion.model_dump()``) with ``ChatOpenAI._create_chat_result`` and the
    result's metadata; ``None`` for an answer it does not know (an error, tool calls,
    audio, a refusal, several or no choices), which then goes through ``ChatOpenAI`` itself."""
    from langchain_core.messages import AIMessage

    if not isinstance(response, dict) or response.get("error"):
        return None
    choices = response.get("choices")
    if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], dict):
        return None
    choice = choices[0]
    said = choice.get("message")
    if not isinstance(said, dict) or said.get("role") != "assistant":
        return None
    if said.get("function_call") or said.get("tool_calls") or said.get("audio") or said.get("refusal"):
        return None  # a refusal: langchain-openai 1.7.4 keeps it in additional_kwargs, 1.7.3 did not
    content = said.get("content", "") or ""
    if not isinstance(content, str):
        return None
    message = AIMessage(content=content, additional_kwargs={}, name=said.get("name"), id=said.get("id"),
                        tool_calls=[], invalid_tool_calls=[])  # fmt: skip
    usage = response.get("usage")
    if usage:
        message.usage_metadata = usage_metadata(usage, response.get("service_tier"))
    info: dict[str, Any] = {"finish_reason": choice.get("finish_reason")}
    if "logprobs" in choice:
        info["logprobs"] = choice["logprobs"]
    result: dict[str, Any] = {
        "token_usage": usage,
        "model_provider": "openai",
        "model_name": response.get("model", model),
        "system_fingerprint": response.get("system_fingerprint", ""),
    }
    if "id" in response:
        result["id"] = response["id"]
    if response.get("service_tier"):
        result["service_tier"] = response["service_tier"]
    message.response_metadata = {**result, **info}
    return message


def usage_metadata(usage: dict[str, Any], service_tier: str | None) -> Any:
    """LangChain's token counts of an answer's ``usage`` (``_create_usage_metadata``)."""
    def given(value: Any, default: int) -> Any:
        return value if value is not None else default

    n_in = given(usage.get("prompt_tokens"), 0)
    n_out = given(usage.get("completion_tokens"), 0)
    tier = service_tier if service_tier in ("priority", "flex") else None
    prefix = f"{tier}_" if tier else ""
    prompt = usage.get("prompt_tokens_details") or {}
    completion = usage.get("completion_tokens_details") or {}
    inputs: dict[str, Any] = {
        "audio": prompt.get("audio_tokens"),
        f"{prefix}cache_read": prompt.get("cached_tokens"),
        f"{prefix}cache_creation": prompt.get("cache_write_tokens"),
    }
    outputs: dict[str, Any] = {"audio": completion.get("audio_tokens"), f"{prefix}reasoning": completion.get("reasoning_tokens")}
    if tier is not None:
        inputs[tier] = n_in - (inputs.get(f"{prefix}cache_read", 0) or 0)
        outputs[tier] = n_out - (outputs.get(f"{prefix}reasoning", 0) or 0)
    return {
        "input_tokens": n_in,
        "output_tokens": n_out,
        "total_tokens": given(usage.get("total_tokens"), n_in + n_out),
        "input_token_details": {k: v for k, v in inputs.items() if v is not None},
        "output_token_details": {k: v for k, v in outputs.items() if v is not None},
    }
