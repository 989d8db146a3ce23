"""The Anthropic API through ``ChatAnthropic``; structured output is one forced tool call.

``ChatAnthropic`` keeps its async SDK client in a private cached property and shares its
HTTP pool process-wide; this backend gives each model a client of its own (with the
adaptive limit's hooks) when those private names are still there, and otherwise leaves
the model's own client in place.
"""

from __future__ import annotations

import functools
import logging
import os
from typing import TYPE_CHECKING, Any

from dialeval.models.backends.base import RATE_LIMIT, ApiBackend
from dialeval.models.backends.http import PreflightError, async_http, check_models_route
from dialeval.models.concurrency import AdaptiveLimit
from dialeval.models.endpoint import redacted, split_base_url
from dialeval.models.prompt_cache import with_cache_breakpoints

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from pydantic import BaseModel

    from dialeval.config import ModelSettings

log = logging.getLogger(__name__)
API_VERSION = "2023-06-01"


def own_async_client(model: Any, limit: AdaptiveLimit | None, settings: ModelSettings) -> bool:
    """Give ``model`` an async SDK client with a pool of its own; False (and the model's
    own client kept) when ``ChatAnthropic`` no longer has the private names used here:
    ``_client_params`` (the SDK client's arguments) and the cached property ``_async_client``."""
    import anthropic

    cached = getattr(type(model), "_async_client", None)
    params = getattr(model, "_client_params", None)
    if not isinstance(cached, functools.cached_property) or not isinstance(params, dict):
        log.warning("langchain-anthropic changed its client attributes: the model keeps its shared HTTP pool")
        return False
    # a cached property reads the instance's __dict__ first: this client is the one used from now on
    model.__dict__["_async_client"] = anthropic.AsyncClient(**params, http_client=async_http(settings, limit, sdk="anthropic"))
    return True


class AnthropicBackend(ApiBackend):
    """``anthropic:<model>``: key from ``$ANTHROPIC_API_KEY`` (or ``api_key_env``), URL from the SDK's variables."""

    name = "anthropic"
    key_var = "ANTHROPIC_API_KEY"
    url_vars = ("ANTHROPIC_API_URL", "ANTHROPIC_BASE_URL")
    default_endpoint = "https://api.anthropic.com"

    def build(self, limit: AdaptiveLimit | None = None) -> BaseChatModel:
        from langchain_anthropic import ChatAnthropic

        s = self.settings
        kwargs: dict[str, Any] = dict(
            model=self.spec.name, max_tokens=s.max_tokens, timeout=s.timeout, max_retries=s.max_retries
        )
        kwargs.update(self.sdk_url_args())  # issue 33: the URL without extras (requirements() refuses them)
        if s.api_key_env and os.environ.get(s.api_key_env):
            kwargs["api_key"] = os.environ[s.api_key_env]
        model = ChatAnthropic(**kwargs, temperature=s.temperature, rate_limiter=self.rate_limiter())
        own_async_client(model, limit, s)
        return model

    def requirements(self) -> None:
        """A key."""
        super().requirements()
        if not os.environ.get(self.key_env or ""):
            raise PreflightError(f"model {self.settings.spec}: no API key; set ${self.key_env} in the environment")
        parts = self.endpoint_parts
        # issue 33: ChatAnthropic takes no default_query, and the SDK sends its key in the
        # Authorization header that basic auth would need
        if parts is not None and (parts.query or parts.has_userinfo):
            what = "a query string, which ChatAnthropic cannot send" if parts.query else "user:password, which would replace the key"
            raise PreflightError(
                f"model {self.settings.spec}: base_url {redacted(self.endpoint)} carries {what}; "
                "give the bare URL (a server that needs more: an openai-compatible model)"
            )

    def preflight(self, where: str) -> None:
        """:meth:`requirements`, and a ``GET /v1/models`` that connects and accepts the key."""
        self.requirements()
        key = os.environ.get(self.key_env or "") or ""
        parts = split_base_url(self.endpoint or self.default_endpoint or "")
        headers = {"x-api-key": key, "anthropic-version": API_VERSION}
        check_models_route(parts.with_path("/v1/models"), headers, where, self.settings.timeout)

    async def close(self, model: Any | None) -> None:
        """Close the SDK client :func:`own_async_client` gave the model (its HTTP pool with it)."""
        client = model.__dict__.get("_async_client") if model is not None and hasattr(model, "__dict__") else None
        if client is not None:
            await client.close()

    def outgoing(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        """Claude caches a prompt prefix only where the request marks it."""
        return with_cache_breakpoints(messages)

    def structured(self, model: Any, schema: type[BaseModel], json_schema: dict[str, Any] | None) -> Any:
        return model.bind_tools([schema], tool_choice=schema.__name__)

    def classify(self, err: BaseException) -> str | None:
        """529 ``overloaded`` is Anthropic's way of asking to slow down."""
        if getattr(err, "status_code", None) == 529 or type(err).__name__ == "OverloadedError":
            return RATE_LIMIT
        return super().classify(err)
