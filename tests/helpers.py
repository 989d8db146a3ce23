"""Small builders shared by the foundation tests."""

from __future__ import annotations

import itertools
from typing import Any, Callable

from dialeval.config import ModelSettings
from dialeval.models import register_client
from dialeval.testing.scripted import ScriptedChatModel

_counter = itertools.count()


def scripted(respond: Callable[[list[Any]], Any] | None = None, replies: list[Any] | None = None) -> tuple[ModelSettings, ScriptedChatModel]:
    """A unique model spec whose calls are answered by a scripted chat model."""
    settings = ModelSettings(spec=f"openai:scripted-{next(_counter)}")
    model = ScriptedChatModel(respond=respond, replies=list(replies or []))
    register_client(settings, model)
    return settings, model
