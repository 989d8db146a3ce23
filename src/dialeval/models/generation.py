"""One answer of a model (:class:`Generation`) and what is read off a chat model's message for it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage


@dataclass
class Generation:
    """One answer: its text, why it stopped, and what it cost."""

    text: str
    finish_reason: str | None
    input_tokens: int
    output_tokens: int
    cached: bool
    cost: float
    estimated: bool = False
    cache_key: str | None = None  # where :meth:`ModelClient.remember` stores it
    cache_path: str | None = None
    cached_input_tokens: int = 0  # served from the provider's prompt cache (dry run: estimated)
    cache_write_tokens: int = 0
    uncached_cost: float | None = None  # what the call would cost without prompt caching
    refusal: str | None = None  # issue 33: the model declined (OpenAI's ``refusal``, Anthropic's stop reason)
    logprobs: list[tuple[str, float]] | None = None  # issue 49: (token, log-probability) where asked for and given
    deduplicated: bool = False  # the answer of an identical request of this run, shared (models/single_flight.py)

    @property
    def truncated(self) -> bool:
        return self.finish_reason in ("length", "max_tokens")

    @property
    def refused(self) -> bool:
        """A refusal and no answer beside it: kept as ``unparsed`` ("refused"), the refusal as the raw text."""
        return self.refusal is not None and not self.text.strip()


def message_payload(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    return [{"type": m.type, "content": m.content} for m in messages]


def finish_reason(message: Any) -> str | None:
    meta = getattr(message, "response_metadata", {}) or {}
    return meta.get("finish_reason") or meta.get("stop_reason")


def refusal_of(message: Any) -> str | None:
    """The refusal a chat model's message carries: OpenAI's ``refusal`` field (which
    ``ChatOpenAI`` keeps in ``additional_kwargs``), or Anthropic's ``refusal`` stop reason
    (its text, if any, is the content); ``None`` when the model did not refuse."""
    said = (getattr(message, "additional_kwargs", None) or {}).get("refusal")
    if isinstance(said, str) and said.strip():
        return said
    return "" if finish_reason(message) == "refusal" else None


def text_of(message: Any) -> str:
    content = message.content
    if isinstance(content, str) and content.strip():
        return content
    if isinstance(content, list):
        text = "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
        if text.strip():
            return text
    calls = getattr(message, "tool_calls", None)
    if calls:
        return json.dumps(calls[0]["args"], ensure_ascii=False)
    return content if isinstance(content, str) else ""


def logprobs_of(message: Any) -> list[tuple[str, float]] | None:
    """The answer's tokens with their log-probabilities (``ChatOpenAI(logprobs=True)`` keeps them
    in ``response_metadata``), ``None`` when the backend gave none."""
    meta = getattr(message, "response_metadata", None) or {}
    content = (meta.get("logprobs") or {}).get("content") if isinstance(meta.get("logprobs"), dict) else None
    if not content:
        return None
    return [(str(t.get("token", "")), float(t.get("logprob", 0.0))) for t in content if isinstance(t, dict)]
