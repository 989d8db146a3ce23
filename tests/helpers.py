"""Small builders shared by the foundation tests."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Callable

from dialeval.config import ModelSettings, RunConfig
from dialeval.models.client import register_client
from dialeval.testing.scripted import ScriptedChatModel

_counter = itertools.count()


def scripted(respond: Callable[[list[Any]], Any] | None = None, replies: list[Any] | None = None) -> tuple[ModelSettings, ScriptedChatModel]:
    """A unique model spec whose calls are answered by a scripted chat model."""
    settings = ModelSettings(spec=f"openai:scripted-{next(_counter)}", max_tokens=512)  # set: protocol budgets leave it alone
    model = ScriptedChatModel(respond=respond, replies=list(replies or []))
    register_client(settings, model)
    return settings, model


def http_config(tmp_path: Path, model: dict[str, Any], **kw: Any) -> RunConfig:
    """A run config for HTTP tests: one model (no SDK retries unless given), its own
    run folder and cache under ``tmp_path``, no corrective retries."""
    return RunConfig(
        model=ModelSettings(**{"max_retries": 0, **model}),
        output_dir=str(tmp_path / "runs"),
        cache_path=str(tmp_path / "cache.sqlite"),
        parse_retries=0,
        **kw,
    )


async def then_closed(model: Any, work: Any) -> Any:
    """``work``, then the OpenAI chat model's HTTP pool closed in this loop, as a run's end
    does (an async HTTP client must be closed in its own loop)."""
    try:
        return await work
    finally:
        await model.root_async_client.close()


def keys_only(monkeypatch: Any, openai_key: str, anthropic_key: str) -> None:
    """The SDKs' keys set, and no base URL from the environment (each test names its server)."""
    monkeypatch.setenv("OPENAI_API_KEY", openai_key)
    monkeypatch.setenv("ANTHROPIC_API_KEY", anthropic_key)
    for var in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_URL"):
        monkeypatch.delenv(var, raising=False)
