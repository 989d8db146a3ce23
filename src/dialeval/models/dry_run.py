"""The ``dry-run`` backend: no model, placeholder answers, tokens counted as if sent."""

from __future__ import annotations

from typing import Any, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from dialeval.models.usage import count_tokens


class DryRunChatModel(BaseChatModel):
    """Returns ``placeholder`` (given per call by the agent layer) or ``{}``.

    Agents reach it through :class:`dialeval.models.client.ModelClient`, which passes the
    schema-valid placeholder; used directly it answers ``{}``.
    """

    @property
    def _llm_type(self) -> str:
        return "dry-run"

    def _generate(self, messages: list[BaseMessage], stop: Sequence[str] | None = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        text = kwargs.get("placeholder") or "{}"
        n_in = sum(count_tokens(str(m.content)) for m in messages)
        message = AIMessage(
            text,
            response_metadata={"finish_reason": "stop"},
            usage_metadata={"input_tokens": n_in, "output_tokens": count_tokens(text), "total_tokens": n_in},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])
