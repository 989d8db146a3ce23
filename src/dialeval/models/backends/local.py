"""Local Hugging Face models (``hf:<hub id or path>``) and the bundled ``smollm2``.

JSON answers are decoded under the schema's grammar when xgrammar is installed;
without it the answer is started as the schema's JSON object (a prefill), which small
models then complete far more often than they write valid JSON unprompted.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from dialeval.models.backends.base import MISSING_MODEL, Backend
from dialeval.models.backends.http import PreflightError
from dialeval.models.concurrency import AdaptiveLimit
from dialeval.models.pricing import FREE

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from pydantic import BaseModel

    from dialeval.models.pricing import Price

# Local decoding rules change answers without any parameter changing: part of the cache key.
LOCAL_DECODING = {"grammar": "json-schema-grammar/1", "prefill": "json-prefill-close/1"}


def local_decoding() -> str:
    """How local models decode JSON answers here: under the schema's grammar when xgrammar is installed."""
    from dialeval.models.local_grammar import available

    return LOCAL_DECODING["grammar" if available() else "prefill"]


@functools.lru_cache(maxsize=256)
def json_schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    """A schema's JSON schema, built once (it is not cheap)."""
    return schema.model_json_schema()


def _grammar() -> bool:
    return local_decoding() == LOCAL_DECODING["grammar"]


class LocalBackend(Backend):
    """A transformers model on this machine; free, loaded once per process."""

    name = "hf"
    is_local = True

    def build(self, limit: AdaptiveLimit | None = None) -> BaseChatModel:
        from dialeval.models.local_models import LocalChatModel

        s = self.settings
        return LocalChatModel.load(
            source=self.spec.local_source,
            max_new_tokens=s.max_tokens,
            temperature=s.temperature,
            batch_size=s.batch_size,
            rate_limiter=self.rate_limiter(),
        )

    def price(self) -> Price | None:
        return FREE

    def preflight(self, where: str) -> None:
        """The model's file or folder exists (its weights are not loaded here)."""
        from dialeval.models.local_loading import LocalModelError, locate

        try:
            locate(self.spec.local_source)
        except (LocalModelError, OSError) as err:
            raise PreflightError(str(err)) from None

    def prepare(self, messages: list[BaseMessage], schema: type[BaseModel] | None) -> list[BaseMessage]:
        """Without a grammar, start the answer as the schema's JSON object."""
        if schema is None or not self.settings.structured_output or _grammar():
            return messages  # the grammar writes the JSON from its first token
        from langchain_core.messages import AIMessage

        first = next(iter(schema.model_fields), None)
        return [*messages, AIMessage('{"' + first + '":' if first else "{")]

    def structured(self, model: Any, schema: type[BaseModel], json_schema: dict[str, Any] | None) -> Any:
        if not _grammar():
            return model
        return model.bind(json_schema=self.grammar_schema(schema, json_schema))

    def grammar_schema(self, schema: type[BaseModel], json_schema: dict[str, Any] | None) -> dict[str, Any]:
        """The JSON schema the answer is decoded under: the call's, with rationales bounded
        to the model's ``rationale_chars`` and no extra keys, when it sets one."""
        base = json_schema or json_schema_of(schema)
        chars = self.settings.rationale_chars
        if not chars:
            return base
        from dialeval.models.local_grammar import bound_free_text

        return bound_free_text(base, chars)

    def decoding(self, schema: type[BaseModel] | None, json_schema: dict[str, Any] | None) -> Any:
        """The decoding rules, and the grammar's schema when one constrains the answer."""
        decoding = local_decoding()
        if schema is None or not self.settings.structured_output or decoding != LOCAL_DECODING["grammar"]:
            return decoding
        return [decoding, self.grammar_schema(schema, json_schema)]

    def classify(self, err: BaseException) -> str | None:
        from dialeval.models.local_engine import LocalModelError

        return MISSING_MODEL if isinstance(err, LocalModelError) else super().classify(err)

    def sees_images(self, model: Any) -> bool:
        if model is not None:
            return bool(getattr(model, "sees_images", False))
        from dialeval.models.local_loading import is_vision_source

        return is_vision_source(self.spec.local_source)  # read its config, not the weights


class SmolLM2Backend(LocalBackend):
    """``smollm2``: the bundled offline default."""

    name = "smollm2"
