"""One class per backend; :func:`backend_for` picks the class a spec names."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.models.backends.anthropic import AnthropicBackend
from dialeval.models.backends.base import Backend
from dialeval.models.backends.dry_run import DryRunBackend
from dialeval.models.backends.local import LocalBackend, SmolLM2Backend
from dialeval.models.backends.openai import OpenAIBackend, OpenAICompatibleBackend
from dialeval.spec import ModelSpec, SpecError

if TYPE_CHECKING:
    from dialeval.config import ModelSettings

BACKEND_CLASSES: dict[str, type[Backend]] = {
    cls.name: cls
    for cls in (OpenAIBackend, AnthropicBackend, OpenAICompatibleBackend, LocalBackend, SmolLM2Backend, DryRunBackend)
}


def backend_for(spec: ModelSpec, settings: ModelSettings) -> Backend:
    """The backend object for ``spec``; a dry run knows the backend of the model it is priced as."""
    if spec.is_dry_run:
        return DryRunBackend(spec, settings, priced_as=spec_backend(spec.name, settings))
    return BACKEND_CLASSES[spec.backend](spec, settings)


def spec_backend(name: str, settings: ModelSettings) -> Backend | None:
    """The backend of ``name`` when it is a spec (``openai:gpt-4o-mini``), else ``None``
    (a bare model name such as ``gpt-4o-mini``, priced from the table by name)."""
    if not name:
        return None
    try:
        return backend_for(ModelSpec.parse(name), settings)
    except SpecError:
        return None
