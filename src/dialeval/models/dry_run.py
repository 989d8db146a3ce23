"""The ``dry-run`` chat model: no model, placeholder answers, tokens counted as if sent."""

from __future__ import annotations

from typing import Any, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from dialeval.models.prompt_cache import PrefixCache, prompt_tokens
from dialeval.models.usage import count_tokens


class DryRunChatModel(BaseChatModel):
    """Returns ``placeholder`` (given per call by the agent layer) or ``{}``.

    :class:`dialeval.models.client.ModelClient` asks :meth:`estimate` directly, with the
    schema-valid placeholder; through LangChain (``invoke(..., placeholder=...)``) it
    answers the same way, with the estimate as its usage.
    """

    _prefixes: PrefixCache = PrivateAttr(default_factory=PrefixCache)

    @property
    def _llm_type(self) -> str:
        return "dry-run"

    def estimate(self, messages: Sequence[BaseMessage], placeholder: str | None) -> tuple[str, int, int, int]:
        """``(text, input tokens, output tokens, prompt-cache hits)``; the hits are what an
        API's prefix cache would serve of this prompt after the earlier ones (OpenAI's rule)."""
        text = placeholder or "{}"
        tokens = prompt_tokens([(m.type, m.text if hasattr(m, "text") else str(m.content)) for m in messages])
        return text, len(tokens), count_tokens(text), self._prefixes.lookup_and_add(tokens)

    def _generate(self, messages: list[BaseMessage], stop: Sequence[str] | None = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        text, n_in, n_out, hit = self.estimate(messages, kwargs.get("placeholder"))
        message = AIMessage(
            text,
            response_metadata={"finish_reason": "stop"},
            usage_metadata={
                "input_tokens": n_in, "output_tokens": n_out, "total_tokens": n_in + n_out,
                "input_token_details": {"cache_read": hit},
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])
