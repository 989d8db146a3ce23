"""What the breaker, the batch queue and batch pricing read of a model client, as a Protocol:
they sit below :class:`~dialeval.models.client.ModelClient` (it imports them), so naming
the class itself there would be an import circle, even a type-only one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from dialeval.model_settings import ModelSettings
    from dialeval.models.backends import Backend
    from dialeval.spec import ModelSpec


class ClientView(Protocol):
    """The parts of a model client read from below it: its backend, settings and names."""

    settings: ModelSettings
    spec: ModelSpec
    backend: str
    name: str
    impl: Backend
    is_dry_run: bool

    def where(self) -> str:
        """The model and its endpoint, credentials scrubbed, for messages."""
        ...
