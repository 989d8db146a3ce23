"""A chat model that answers from a script, for deterministic tests of agents and graphs."""

from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

Reply = str | tuple[str, str]  # text, or (text, finish_reason)


class ScriptedChatModel(BaseChatModel):
    """Answers with ``respond(messages)`` or the next item of ``replies``; records prompts.

    A reply may be ``(text, "length")`` to simulate an answer cut off by the token limit.
    """

    replies: list[Any] = []
    respond: Callable[[list[BaseMessage]], Reply] | None = None
    _prompts: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def prompts(self) -> list[list[BaseMessage]]:
        return self._prompts

    def _generate(self, messages: list[BaseMessage], stop: Sequence[str] | None = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        with self._lock:
            self._prompts.append(list(messages))
            if self.respond is not None:
                reply = self.respond(list(messages))
            elif self.replies:
                reply = self.replies.pop(0)
            else:
                raise RuntimeError("ScriptedChatModel ran out of replies")
        text, finish = reply if isinstance(reply, tuple) else (reply, "stop")
        message = AIMessage(
            text,
            response_metadata={"finish_reason": finish},
            usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


def prompt_text(messages: list[BaseMessage]) -> str:
    """All message text of a prompt joined, for tests that look for what a prompt holds."""
    return "\n".join(m.content if isinstance(m.content, str) else str(m.content) for m in messages)
