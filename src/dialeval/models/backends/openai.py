"""The OpenAI API and OpenAI-compatible servers (vLLM, Ollama, LM Studio) through ``ChatOpenAI``.

Structured output is OpenAI's JSON-schema response format. Every call is the chat
model's ``ainvoke``: callbacks and tracers see it.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any, ClassVar

from dialeval.models.backends.base import ApiBackend
from dialeval.models.backends.http import PreflightError, async_http, check_models_route, http_timeout, sync_http
from dialeval.models.concurrency import AdaptiveLimit
from dialeval.endpoint import redacted, split_base_url
from dialeval.models.generation import finish_reason
from dialeval.spec import SpecError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from pydantic import BaseModel

    from dialeval.models.pricing import Price


@functools.lru_cache(maxsize=256)
def response_format(schema: type[BaseModel]) -> dict[str, Any]:
    """OpenAI's JSON-schema response format; built once per schema (it is not cheap)."""
    return {
        "type": "json_schema",
        "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": False},
    }


def narrowed_format(schema: type[BaseModel], json_schema: dict[str, Any] | None) -> dict[str, Any]:
    """The response format of one call: its narrowed schema where the agent knows more in
    advance (a verdict's labels, a picture's range), so a model that follows it is never refused."""
    if json_schema is None:
        return response_format(schema)
    return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": json_schema, "strict": False}}


def _never_connected(err: BaseException) -> bool:
    """Whether aiohttp's "cannot connect" (refused, no such host) is among ``err``'s causes."""
    import aiohttp

    cause = err.__cause__
    while cause is not None:
        if isinstance(cause, aiohttp.ClientConnectorError):
            return True
        cause = cause.__cause__
    return False


class OpenAIBackend(ApiBackend):
    """``openai:<model>``: key from ``$OPENAI_API_KEY``, URL from the SDK's variables or its default."""

    name = "openai"
    key_var = "OPENAI_API_KEY"
    url_vars = ("OPENAI_API_BASE", "OPENAI_BASE_URL")
    default_endpoint: ClassVar[str | None] = "https://api.openai.com/v1"
    needs_key = True

    def build(self, limit: AdaptiveLimit | None = None) -> BaseChatModel:
        from langchain_openai import ChatOpenAI

        s = self.settings
        kwargs: dict[str, Any] = dict(
            model=self.spec.name, max_tokens=s.max_tokens, timeout=http_timeout(s), max_retries=s.max_retries
        )
        if not s.base_url and not self.needs_key and not os.environ.get("OPENAI_BASE_URL"):
            raise SpecError(f"{s.spec}: openai-compatible models need base_url (or OPENAI_BASE_URL)")
        kwargs.update(self.sdk_url_args())  # issue 33: base_url, and its query and credentials apart
        key = self._key()
        if key:  # local servers usually ignore the key
            kwargs["api_key"] = key
        # our own pool: langchain-openai shares one process-wide async pool, which breaks
        # as soon as a second event loop (a second evaluate() call) uses it
        kwargs["http_async_client"] = async_http(limit)
        kwargs["http_client"] = sync_http()
        if s.seed is not None:  # issue 49: the readings of a cascade's first stage
            kwargs["seed"] = s.seed
        if s.logprobs:  # issue 49: a verdict's probability, for a cascade's confidence
            kwargs["logprobs"] = True
        return ChatOpenAI(**kwargs, temperature=s.temperature, rate_limiter=self.rate_limiter())

    def requirements(self) -> None:
        """A URL, and a key where the OpenAI API needs one."""
        super().requirements()
        if self.endpoint is None:
            raise PreflightError(
                f"model {self.settings.spec}: openai-compatible models need base_url in the config (or $OPENAI_BASE_URL)"
            )
        if self.needs_key and not os.environ.get(self.key_env or ""):
            raise PreflightError(f"model {self.settings.spec}: no API key; set ${self.key_env} in the environment")
        parts = self.endpoint_parts
        if parts is not None and parts.has_userinfo and (self.needs_key or self.settings.api_key_env):
            # issue 33: both would be the Authorization header; basic auth would silently drop the key
            raise PreflightError(
                f"model {self.settings.spec}: base_url {redacted(self.endpoint)} carries user:password (sent as "
                f"HTTP basic auth in the Authorization header), which is where the key from ${self.key_env} goes too; "
                "use an openai-compatible model without api_key_env for a server behind basic auth"
            )

    def preflight(self, where: str) -> None:
        """:meth:`requirements`, and a ``GET .../models`` that connects and accepts the key."""
        self.requirements()
        parts = self.endpoint_parts or split_base_url("")
        key = os.environ.get(self.key_env or "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        headers.update(parts.auth_headers())  # issue 33: as the SDK sends it (default_headers win)
        check_models_route(parts.with_path("/models"), headers, where, self.settings.timeout)

    def structured(self, model: Any, schema: type[BaseModel], json_schema: dict[str, Any] | None) -> Any:
        """The JSON-schema response format, given as ``extra_body``: the SDK sends it as it is.

        Why: as ``response_format=`` the SDK walks the whole schema against its typed
        parameters on every request and parses the answer into its generic typed object, a
        third of the CPU a request costs; the JSON sent is the same either way."""
        return model.bind(extra_body={"response_format": narrowed_format(schema, json_schema)})

    async def send(
        self, model: Any, messages: list[BaseMessage], schema: type[BaseModel] | None, json_schema: dict[str, Any] | None
    ) -> Any:
        """One request; a structured answer the content filter stopped is an error, as the SDK's ``parse`` makes it."""
        import openai

        try:
            message = await super().send(model, messages, schema, json_schema)
        except openai.APITimeoutError as err:
            if not _never_connected(err):
                raise
            # the aiohttp transport names a refused connection a time-out: say what the SDK
            # says of it over httpx, so a server that is down never reads as a slow one
            raise openai.APIConnectionError(request=err.request) from err
        if schema is not None and self.settings.structured_output and finish_reason(message) == "content_filter":
            raise openai.ContentFilterFinishReasonError()
        return message

    def _key(self) -> str | None:
        """The key sent: the configured variable's, else a placeholder where none is needed."""
        return os.environ.get(self.key_env or "") or (None if self.needs_key else "not-needed")

    async def close(self, model: Any | None) -> None:
        """Close the HTTP pool this event loop's chat model was given (``http_async_client``)."""
        client = getattr(model, "http_async_client", None)
        if client is not None:
            await client.aclose()


class OpenAICompatibleBackend(OpenAIBackend):
    """``openai-compatible:<model>`` + ``base_url``: a server of one's own; the key is optional, the price unknown."""

    name = "openai-compatible"
    default_endpoint = None
    needs_key = False

    def price(self) -> Price | None:
        return None
