"""The Anthropic API through ``ChatAnthropic``; structured output is one forced tool call.

``ChatAnthropic`` takes no HTTP client of ours (no public parameter), so the adaptive
limit hears of a 429 or 529 only when the SDK's own retries gave up (the error the call
raises), not of each refused attempt as with OpenAI.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from dialeval.models.backends.base import RATE_LIMIT, ApiBackend
from dialeval.models.backends.http import PreflightError, check_models_route
from dialeval.models.concurrency import AdaptiveLimit
from dialeval.endpoint import redacted, split_base_url
from dialeval.models.prompt_cache import with_cache_breakpoints

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from pydantic import BaseModel


API_VERSION = "2023-06-01"


def narrowed_tool(schema: type[BaseModel], json_schema: dict[str, Any]) -> dict[str, Any]:
    """The forced tool of a call whose schema is narrowed (a verdict's labels, a picture's
    range): the live request and its batch line send this one dict."""
    return {"name": schema.__name__, "description": (schema.__doc__ or schema.__name__).strip(), "input_schema": json_schema}


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
        return ChatAnthropic(**kwargs, temperature=s.temperature, rate_limiter=self.rate_limiter())

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

    def outgoing(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        """Claude caches a prompt prefix only where the request marks it."""
        return with_cache_breakpoints(messages)

    def structured(self, model: Any, schema: type[BaseModel], json_schema: dict[str, Any] | None) -> Any:
        """One forced tool whose input is the answer: the call's narrowed schema where it has one."""
        if json_schema is None:
            return model.bind_tools([schema], tool_choice=schema.__name__)
        return model.bind_tools([narrowed_tool(schema, json_schema)], tool_choice=schema.__name__)

    def refused(self, limit: AdaptiveLimit, err: BaseException) -> None:
        """A 429 or 529 the SDK's retries did not get past halves the limit."""
        if self.classify(err) == RATE_LIMIT:
            limit.throttled(reason=f"HTTP {getattr(err, 'status_code', 429)}")

    def classify(self, err: BaseException) -> str | None:
        """529 ``overloaded`` is Anthropic's way of asking to slow down."""
        if getattr(err, "status_code", None) == 529 or type(err).__name__ == "OverloadedError":
            return RATE_LIMIT
        return super().classify(err)
