"""What one agent call gives back (:class:`AgentCall`, :class:`Answer`) and the context it
is asked in (:class:`AgentContext`).

Why apart from :mod:`dialeval.agents.base`: an ensemble or a cascade
(:mod:`dialeval.agents.ensemble`) builds answers from its members' without going back up to
``ask``, which hands it the role; both stand on these types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, SerializerFunctionWrapHandler, model_serializer

from dialeval.agents.reading import Status
from dialeval.agents.templates import Template, load_template
from dialeval.config import EvalContext, ModelSettings, primary
from dialeval.judge_spec import Composite
from dialeval.models.client import ModelClient, get_client

T = TypeVar("T", bound=BaseModel)


class AgentCall(BaseModel):
    """What one agent call produced, kept in results so nothing is silently lost."""

    agent: str
    status: Status
    value: dict[str, Any] | None = None
    raw: str = ""
    attempts: int = 0
    reason: str | None = None
    cached: bool = False
    # for the viewer: who asked, which model, what it cost, and the prompt (see prompt_store)
    role: str | None = None
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    prompt_ref: str | None = None
    # issue 49: an ensemble's or cascade's record (which stage decided, why, every vote); absent otherwise
    judge: dict[str, Any] | None = None

    @model_serializer(mode="wrap")
    def _judge_only_when_set(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and self.judge is None:
            data.pop("judge", None)
        return data


@dataclass
class Answer(Generic[T]):
    """A parsed value (``None`` unless status is ``ok``) and the record of the call."""

    value: T | None
    call: AgentCall
    messages: list[BaseMessage] = field(default_factory=list)
    confidence: float | None = None  # issue 49: the verdict's probability, from logprobs where the model gave them

    @property
    def ok(self) -> bool:
        return self.value is not None


@dataclass
class AgentContext:
    """Everything an agent needs from the run: its model client, template and retries."""

    role: str
    client: ModelClient
    template: Template
    parse_retries: int
    cache_path: str | None
    options: dict[str, Any]
    run_dir: str | None = None  # where the prompts of the calls are stored
    read_cache: bool = True
    judge: Composite | None = None  # issue 49: the role is an ensemble or a cascade (ask hands it to agents.ensemble)

    @classmethod
    def for_role(
        cls,
        context: EvalContext,
        role: str,
        default_template: str,
        *,
        template_key: str | None = None,
        model: ModelSettings | None = None,
        template: Template | None = None,
    ) -> AgentContext:
        """The model configured for ``role`` and the template under ``template_key``
        (default: the role; agents with several templates give each its own key).
        ``model``/``template`` override both, for turns that continue another agent's
        conversation."""
        resolved = model or context.judge_for(role)  # issue 49: the one place a role becomes a model, ensemble or cascade
        return cls(
            role=role,
            client=get_client(primary(resolved)),
            judge=None if isinstance(resolved, ModelSettings) else resolved,
            template=template or load_template(context.templates.get(template_key or role, default_template)),
            parse_retries=context.parse_retries,
            cache_path=context.cache_path,
            options=context.options,
            run_dir=context.run_dir,
            read_cache=not context.refresh_cache,
        )
