"""A judge is a declaration: its template, its output schema and where its verdict goes.

Most agents render one template, ask one model and keep the verdict. :func:`judge` builds
and registers such an agent from those facts, so its name is written once. Agents that do
more (several calls, pictures, a conversation another agent started) hold a :class:`Judge`
and call :meth:`Judge.verdict`, which renders the template and asks in one step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Generic, Sequence, TypeVar

from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from dialeval.agents.base import AgentContext, Answer, NodeFn, ask, register_agent
from dialeval.agents.templates import Template
from dialeval.config import EvalContext, ModelSettings

T = TypeVar("T", bound=BaseModel)
State = dict[str, Any]
# the packaged template and its key under `templates:` (None: the role), chosen from the state
TemplateChoice = Callable[[State], tuple[str, str | None]]
Variables = Callable[[State, EvalContext], dict[str, Any]]
Messages = Callable[[Template, State], list[BaseMessage]]
Output = Callable[[State, Answer[Any]], dict[str, Any]]


@dataclass(frozen=True)
class Judge(Generic[T]):
    """Who asks (name, role), with which template, for which answer.

    ``template_key`` is the key under ``templates:`` that replaces the packaged template
    (default: the role); ``template`` is ``None`` for judges with one template per case,
    which name it in each call. ``validate`` and ``placeholder`` are those of :func:`ask`.
    """

    name: str
    role: str
    benchmark: str
    template: str | TemplateChoice | None
    schema: type[T]
    template_key: str | None = None
    validate: Callable[[T], str | None] | None = None
    placeholder: Callable[[], T] | None = None

    def context(
        self, context: EvalContext, state: State | None = None, *, model: ModelSettings | None = None,
        template: str | None = None, template_key: str | None = None,
    ) -> AgentContext:
        """The run's model for the role (or ``model``) and the template for ``state``
        (or ``template`` under ``template_key``, for agents with one template per case)."""
        default, key = (template, template_key) if template else self._template(state or {})
        return AgentContext.for_role(context, self.role, default, template_key=key, model=model)

    def _template(self, state: State) -> tuple[str, str | None]:
        if self.template is None:
            raise ValueError(f"{self.name} has one template per case: name it in the call")
        if callable(self.template):
            return self.template(state)
        return self.template, self.template_key

    async def ask(
        self, ctx: AgentContext, messages: list[BaseMessage], *, label: str | None = None,
        validate: Callable[[T], str | None] | None = None, placeholder: Callable[[], T] | None = None, **options: Any,
    ) -> Answer[T]:
        """:func:`ask` under this judge's name (or ``label``, e.g. ``kgds.opinion_verifier.ebs``)."""
        return await ask(
            ctx, label or self.name, messages, self.schema,
            validate=validate or self.validate, placeholder=placeholder or self.placeholder, **options,
        )

    async def verdict(
        self, context: EvalContext, values: dict[str, Any], *, before: Sequence[BaseMessage] = (),
        model: ModelSettings | None = None, template: str | None = None, template_key: str | None = None,
        **options: Any,
    ) -> Answer[T]:
        """Render the template with ``values`` after ``before`` (a conversation to continue) and ask."""
        ctx = self.context(context, model=model, template=template, template_key=template_key)
        return await self.ask(ctx, [*before, *ctx.template.render(**values)], **options)

    def register(self, build: Callable[[], NodeFn]) -> Callable[[], NodeFn]:
        """Register a node builder written as a function under this judge's name and role."""
        return register_agent(self.name, role=self.role, benchmark=self.benchmark)(build)

    def register_as(self, name: str) -> Callable[[Callable[[], NodeFn]], Callable[[], NodeFn]]:
        """Register a variant (another name, the same role and calls) of this judge."""
        return register_agent(name, role=self.role, benchmark=self.benchmark)


def judge(
    name: str,
    *,
    role: str,
    benchmark: str,
    template: str | TemplateChoice,
    schema: type[T],
    output: str | Output,
    summary: str,
    variables: Variables | None = None,
    messages: Messages | None = None,
    template_key: str | None = None,
    validate: Callable[[T], str | None] | None = None,
    placeholder: Callable[[], T] | None = None,
    skip: Callable[[State], dict[str, Any] | None] | None = None,
) -> Judge[T]:
    """Declare and register an agent that renders one template, asks once and keeps the verdict.

    The prompt is ``template`` rendered with ``variables(state, context)``, or
    ``messages(template, state)`` when the agent shapes its messages itself. The call's
    record goes to the state under ``output`` (a key), or ``output(state, answer)`` says
    what the verdict changes. ``skip(state)`` may answer without a call (e.g. a turn the
    system left empty). ``summary`` is the one line ``dialeval list`` shows.
    """
    if (variables is None) == (messages is None):
        raise ValueError(f"judge {name!r}: give exactly one of variables and messages")
    spec = Judge(name, role, benchmark, template, schema, template_key, validate, placeholder)

    def build() -> NodeFn:
        async def node(state: State, context: EvalContext) -> dict[str, Any]:
            done = skip(state) if skip is not None else None
            if done is not None:
                return done
            ctx = spec.context(context, state)
            sent = messages(ctx.template, state) if messages else ctx.template.render(**variables(state, context))  # type: ignore[misc]
            answer = await spec.ask(ctx, sent)
            return {output: answer.call.model_dump()} if isinstance(output, str) else output(state, answer)

        node.__name__ = name.replace(".", "_")
        return node

    build.__doc__ = summary
    spec.register(build)
    return spec
