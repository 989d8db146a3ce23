"""``dry-run[:<model>]``: no model is called; placeholders come back and the tokens a real
run would send are counted, priced as ``<model>`` (a bare name or a spec)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dialeval.models.backends.base import Backend
from dialeval.models.concurrency import AdaptiveLimit
from dialeval.models.usage import price_of

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from dialeval.config import ModelSettings
    from dialeval.models.dry_run import DryRunChatModel
    from dialeval.models.pricing import Price
    from dialeval.spec import ModelSpec


class DryRunBackend(Backend):
    """One :class:`DryRunChatModel` per client: it keeps the prompt-prefix cache the estimate needs."""

    name = "dry-run"

    def __init__(self, spec: ModelSpec, settings: ModelSettings, priced_as: Backend | None = None):
        super().__init__(spec, settings)
        self.priced_as = priced_as  # the backend of the model named after ``dry-run:``, if it is a spec
        self._model: DryRunChatModel | None = None

    @property
    def model(self) -> DryRunChatModel:
        """The chat model, made on first use (LangChain loads only when a dry run starts)."""
        if self._model is None:
            from dialeval.models.dry_run import DryRunChatModel

            self._model = DryRunChatModel()
        return self._model

    def build(self, limit: AdaptiveLimit | None = None) -> DryRunChatModel:
        return self.model

    def price(self) -> Price | None:
        if self.priced_as is not None:
            return self.priced_as.price()
        return price_of(self.spec.name) if self.spec.name else None

    def estimate(self, messages: list[BaseMessage], placeholder: str | None) -> tuple[str, int, int, int]:
        """``(text, input tokens, output tokens, prompt-cache hits)`` of the call a real run would make."""
        return self.model.estimate(messages, placeholder)

    def sees_images(self, model: Any) -> bool:
        return False
