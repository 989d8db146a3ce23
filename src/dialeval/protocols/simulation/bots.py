"""The bot under test now lives in :mod:`dialeval.bots` (shared by every caller); the names
the simulation modules import keep working from here."""

from __future__ import annotations

from dialeval.bots import (  # noqa: F401
    BotError, BotSpec, CallableBot, EndpointBot, GraphBot, HttpBot, Messages, describe, dig, fill, reply_messages,
)
from dialeval.bots import load as resolve  # noqa: F401
from dialeval.bots import parse as parse_bot  # noqa: F401
