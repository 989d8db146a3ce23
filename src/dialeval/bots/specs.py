"""What a bot spec may say: one pydantic model per kind, told apart by a key, in a registry.

A spec is written to the run folder with the options, so it holds no secret: keys come
from ``api_key_env``, a header that looks like a credential is refused, and a URL's
user info and query values are registered with :mod:`dialeval.secrets` the moment the
spec is read, so every writer prints the URL redacted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dialeval.endpoint import checked_url

Messages = list[dict[str, Any]]  # OpenAI chat messages


class Bot(Protocol):
    """The one contract: the conversation so far (OpenAI messages) in, the reply's messages out.
    ``turn_id`` is the turn's idempotency key: the same key for a turn sent again after a crash."""

    def __call__(self, messages: Messages, session_id: str, *, turn_id: str | None = None) -> Awaitable[Messages]: ...


class BotSpecBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timeout: float = Field(default=60.0, gt=0, description="seconds a reply may take; then the turn is the bot's failure")

    def urls(self) -> list[str]:
        """The URLs this spec names (registered as secrets-bearing, written redacted)."""
        return []

    def key_env(self) -> str | None:
        return None


class EndpointBot(BotSpecBase):
    """An OpenAI-compatible chat endpoint and the system prompt the bot runs with."""

    model: str = Field(min_length=1)
    base_url: str = Field(min_length=1)
    system: str = ""
    api_key_env: str | None = Field(default=None, description="the environment variable holding the bot's key")
    temperature: float = 0.0
    max_tokens: int = Field(default=512, gt=0)

    _sendable_url = field_validator("base_url")(classmethod(lambda cls, url: checked_url(url)))

    def urls(self) -> list[str]:
        return [self.base_url]

    def key_env(self) -> str | None:
        return self.api_key_env


class HttpBot(BotSpecBase):
    """Any HTTP JSON endpoint: POST ``body`` (strings ``$messages``, ``$session_id`` and
    ``$text`` replaced) to ``url``; the reply is at ``reply`` (dotted, e.g. ``choices.0.message``)."""

    url: str = Field(min_length=1)
    body: Any = Field(default_factory=lambda: {"messages": "$messages", "session_id": "$session_id"})
    reply: str = "reply"
    headers: dict[str, str] = Field(default_factory=dict)
    api_key_env: str | None = Field(default=None, description="sent as 'Authorization: Bearer <value>'")

    @field_validator("headers")
    @classmethod
    def _no_secrets(cls, headers: dict[str, str]) -> dict[str, str]:
        """Options are written to the run folder: a key goes through ``api_key_env``, never here."""
        for name in headers:
            if re.search(r"auth|key|token|secret|cookie", name, re.IGNORECASE):
                raise ValueError(f"header {name!r} looks like a credential: name its environment variable in 'api_key_env' instead")
        return headers

    _sendable_url = field_validator("url")(classmethod(lambda cls, url: checked_url(url)))

    def urls(self) -> list[str]:
        return [self.url]

    def key_env(self) -> str | None:
        return self.api_key_env


class CallableBot(BotSpecBase):
    """``module:function``: ``reply(messages, session_id)`` (and ``turn_id=`` when it takes
    it), sync or async, returning the reply's text, a message, or a list of messages."""

    callable: str = Field(pattern=r"^[\w.]+:[\w.]+$")


class GraphBot(BotSpecBase):
    """A LangGraph graph over ``{"messages": [...]}``: ``module:attr`` (a compiled graph or
    a function building one), ``path/to/file.py:attr``, or ``path/to/langgraph.json:entry``."""

    graph: str = Field(min_length=3)


BotSpec = EndpointBot | HttpBot | CallableBot | GraphBot


@dataclass(frozen=True)
class Kind:
    """A registered kind of bot: the key that names it in a spec, its model, its builder."""

    key: str
    spec: type[BotSpecBase]
    build: Callable[[Any], Any]  # spec -> the raw adapter (a Bot without time-out or journal)
    describe: Callable[[Any], str]


KINDS: dict[str, Kind] = {}


def register_kind(key: str, spec: type[BotSpecBase], describe: Callable[[Any], str]) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """Register a kind of bot under the spec key that selects it (``url``, ``callable``, ...)."""

    def wrap(build: Callable[[Any], Any]) -> Callable[[Any], Any]:
        KINDS[key] = Kind(key, spec, build, describe)
        return build

    return wrap


def kind_of(spec: BotSpecBase) -> Kind:
    return next(k for k in KINDS.values() if isinstance(spec, k.spec))
