"""One model of a run: a spec string and its options (``ModelSettings``).

It sits below :mod:`dialeval.config` and :mod:`dialeval.judge_spec`, which both hold
model settings (a role's model, an ensemble's or cascade's members); it checks a
``base_url`` with :mod:`dialeval.endpoint` and a spec with :mod:`dialeval.spec`.
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from dialeval.endpoint import checked_url
from dialeval.spec import ModelSpec

SMOLLM2_MAX_TOKENS = 192
TOY_RATIONALE_CHARS = 240  # about two sentences: room for a reason, none for a loop


class ModelSettings(BaseModel):
    """One model: a spec string (``openai:gpt-4o-mini``, ``smollm2``, ...) and its options."""

    model_config = ConfigDict(extra="forbid")

    spec: str
    base_url: str | None = None
    api_key_env: str | None = Field(
        default=None, description="name of the environment variable holding the key (never the key)"
    )
    temperature: float = 0.0
    max_tokens: int = Field(default=512, gt=0)
    timeout: float = Field(
        default=60.0, gt=0, description="seconds to wait for an answer (connecting: at most 10)"
    )
    max_retries: int = Field(default=3, ge=0, description="retries on 429/5xx/time-outs, with backoff")
    requests_per_second: float | None = Field(default=None, gt=0)
    structured_output: bool = Field(
        default=True,
        description="native structured output (OpenAI JSON schema, Anthropic forced tool); local models decode under the JSON schema's grammar (xgrammar), or get the JSON answer started without it",
    )
    batch_size: int = Field(default=8, gt=0, description="local models: prompts generated together")
    max_concurrency: int | None = Field(
        default=None, gt=0, description="most requests in flight to this model (API default 64; local: batch_size)"
    )
    min_concurrency: int = Field(default=1, gt=0, description="fewest requests in flight after rate-limit back-off")
    adaptive_concurrency: bool = Field(
        default=True, description="halve requests in flight on HTTP 429 / Retry-After, grow back on success"
    )
    rationale_chars: int | None = Field(
        default=None,
        gt=0,
        description="local models under a grammar: longest rationale/explanation string a structured answer may hold (toy models such as smollm2: 240 unless set; API models: never bounded)",
    )
    price_as: str | None = Field(
        default=None, description="price table entry used for cost (dry-run: the model to estimate)"
    )
    price: tuple[float, float] | tuple[float, float, float] | tuple[float, float, float, float] | None = Field(
        default=None,
        description="USD per million tokens (input, output[, cached input[, cache write]]); overrides the price table",
    )
    batch: bool = Field(
        default=False,
        description="send this model's calls through the provider's batch API in rounds (half price, up to 24 h per round)",
    )
    seed: int | None = Field(default=None, description="sampling seed sent where the API takes one; part of the cache key")
    logprobs: bool = Field(default=False, description="ask for token log-probabilities (OpenAI-compatible APIs): a verdict's probability")

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        return {"spec": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _small_model_budget(self) -> ModelSettings:
        """SmolLM2-135M only repeats itself past a couple of hundred tokens: unless told
        otherwise it gets a smaller answer budget, and a toy model's rationales are bounded
        under the grammar, which keeps offline runs short and their verdicts readable."""
        if self.parsed == ModelSpec("smollm2", "") and "max_tokens" not in self.model_fields_set:
            self.max_tokens = SMOLLM2_MAX_TOKENS
        if self.parsed.is_toy and "rationale_chars" not in self.model_fields_set:
            self.rationale_chars = TOY_RATIONALE_CHARS
        return self

    @model_validator(mode="after")
    def _batch_needs_an_api(self) -> ModelSettings:
        """Only the OpenAI and Anthropic batch APIs exist; a dry run estimates one."""
        spec = self.parsed
        if self.batch and not (spec.is_api or spec.is_dry_run):
            raise ValueError(
                f"batch: true needs an openai, openai-compatible or anthropic model (or dry-run), not {self.spec!r}"
            )
        return self

    @model_serializer(mode="wrap")
    def _batch_only_when_set(self, handler: SerializerFunctionWrapHandler) -> Any:
        """``batch`` is written only when true, so runs configured before it existed keep their run ids."""
        data = handler(self)
        for key, unset in (("batch", False), ("seed", None), ("logprobs", False)):  # issue 49: likewise seed and logprobs
            if isinstance(data, dict) and data.get(key, unset) == unset:
                data.pop(key, None)
        return data

    @field_validator("spec")
    @classmethod
    def _known_backend(cls, spec: str) -> str:
        ModelSpec.parse(spec)
        return spec

    @field_validator("base_url")
    @classmethod
    def _sendable_url(cls, url: str | None) -> str | None:
        """A malformed URL stops here, shown redacted, not as a traceback at the first request."""
        return None if url is None else checked_url(url)

    @property
    def parsed(self) -> ModelSpec:
        """The typed spec (parsed once per distinct string)."""
        return ModelSpec.parse(self.spec)
