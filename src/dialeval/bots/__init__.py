"""The bot under test behind one contract: an async callable over OpenAI messages.

``load(spec)`` reads a spec (``"module:function"``, ``{"url": ...}``, ``{"model": ...,
"base_url": ...}``, ``{"graph": ...}``: a registry of kinds, :func:`register_kind`) and
returns a :class:`LoadedBot`: ``await bot(messages, session_id, turn_id=...)`` is the
reply's messages, bounded by the spec's ``timeout``; :meth:`LoadedBot.turn` is one turn
as the record a run keeps, whatever the bot did (a reply, or its failure with a reason).
Python bots run where a time-out can abandon them (:mod:`dialeval.bots.isolation`);
replies are journaled by the caller (:mod:`dialeval.bots.journal`). See docs/simulation.md.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from dialeval.bots.isolation import Raised, run_isolated
from dialeval.bots.replies import BotError, dig, fill, reply_messages
from dialeval.bots.spec_reader import describe, parse
from dialeval.bots.specs import (
    KINDS, Bot, BotSpec, CallableBot, EndpointBot, GraphBot, HttpBot, Messages, kind_of, register_kind,
)
from dialeval.errors import ConfigError

__all__ = [
    "KINDS", "Bot", "BotError", "BotSpec", "CallableBot", "EndpointBot", "GraphBot", "HttpBot", "LoadedBot", "Messages",
    "describe", "dig", "fill", "load", "parse", "register_kind", "reply_messages",
]
FAILURE_CHARS = 500  # of a failure's reason kept in the record


class LoadedBot:
    """A spec and its adapter, bounded by the spec's time-out; Python kinds run isolated."""

    def __init__(self, spec: BotSpec, adapter: Any):
        self.spec = spec
        self.adapter = adapter
        self.isolated = isinstance(spec, (CallableBot, GraphBot))

    async def reply(self, messages: Messages, session_id: str, *, turn_id: str | None = None) -> tuple[Messages, str]:
        """The reply's messages and what the bot printed on stdout (Python bots)."""
        def call() -> Any:
            return self.adapter(messages, session_id, turn_id=turn_id)

        if self.isolated:
            value, printed = await run_isolated(call, self.spec.timeout)
            return value, printed
        return await asyncio.wait_for(call(), timeout=self.spec.timeout), ""

    async def __call__(self, messages: Messages, session_id: str, *, turn_id: str | None = None) -> Messages:
        return (await self.reply(messages, session_id, turn_id=turn_id))[0]

    async def turn(self, messages: Messages, session_id: str, turn_id: str | None) -> dict[str, Any]:
        """One bot turn as a record: ``messages``, or ``failure`` (anything it raised, a time-out:
        the bot's failure, never the run's), ``seconds``, and ``printed`` when it wrote to stdout."""
        from dialeval.secrets import scrub

        started = time.perf_counter()
        record: dict[str, Any]
        printed = ""
        try:
            reply, printed = await self.reply(messages, session_id, turn_id=turn_id)
            record = {"messages": reply}
        except asyncio.TimeoutError:
            record = {"messages": [], "failure": f"time-out: no reply within the bot's timeout ({self.spec.timeout:g} s)"}
        except (Exception, Raised) as err:  # the bot's own failure, whatever it raised
            error = err.error if isinstance(err, Raised) else err
            said = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            record = {"messages": [], "failure": scrub(said)[:FAILURE_CHARS]}
        record["seconds"] = round(time.perf_counter() - started, 3)
        if printed:
            record["printed"] = printed
        return record


_LOADED: dict[str, LoadedBot] = {}


def load(value: Any) -> LoadedBot:
    """The bot a spec names, set up once per spec. Called while a run's options are checked,
    before any model call, so a bot that cannot be imported, found or built stops the run
    as a :class:`ConfigError`, never as the bot's failure."""
    spec = parse(value)
    key = type(spec).__name__ + spec.model_dump_json()
    if key not in _LOADED:
        try:
            _LOADED[key] = LoadedBot(spec, kind_of(spec).build(spec))
        except ConfigError:
            raise
        except Exception as err:  # raised while importing or building the bot: its set-up, not a reply
            raise ConfigError(f"simulation option 'bot': cannot set up {describe(spec)}: {type(err).__name__}: {err}") from None
    return _LOADED[key]
