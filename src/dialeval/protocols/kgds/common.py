"""What the KGDS agents share: prompt formatting, options, conversations kept in state.

Multi-turn agents (self-reflection, feedback judgement, error classification) continue
a conversation another agent started; the conversation is kept in the graph state as
plain dicts (:func:`dump_messages`) so the state stays serialisable.
"""

from __future__ import annotations

from collections.abc import Mapping

import re
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field

from dialeval.agents.roles import Role, RoleTable
from dialeval.config import EvalContext, ModelSettings

PLACEHOLDER_REASONING = " ".join(["reasoning"] * 40)  # dry runs: about the length of a real rationale
_STARS = re.compile(r"\*\*(.+?)\*\*")


ALL_PATTERNS: tuple[Literal["ebs", "abs"], ...] = ("ebs", "abs")


class KgdsOptions(BaseModel):
    """Benchmark options (``RunConfig.options``) of the KGDS protocol."""

    model_config = ConfigDict(extra="forbid")

    patterns: list[Literal["ebs", "abs"]] = Field(default_factory=lambda: list(ALL_PATTERNS), min_length=1)
    reflection_rounds: int = Field(default=1, ge=0, description="self-reflection turns after the structured prompt (paper: 1)")
    one_fact_per_call: bool = Field(default=False, description="verify each fact alone instead of one call per paragraph")
    feedback_judge: bool = Field(default=True, description="ask the summarizer to compare its EBS with the gold one (Sec. 6.1)")
    predictions: str | None = Field(default=None, description="score summaries from this file instead of generating them")
    decompose_missing_facts: bool = Field(
        default=True, description="decompose paragraphs that come without atomic facts (user data)"
    )
    summary_retries: int = Field(
        default=0,
        ge=0,
        description="corrective retries for an unreadable summary (paper: none; a cut-off one is never retried)",
    )


# The paper's generation settings for every evaluated LLM and instruction (Appendix D.1).
SYSTEM_GENERATION: dict[str, Any] = {"max_tokens": 4096, "temperature": 0.0}
# ...and how it asked for JSON: in the prompt only, with no API JSON mode, schema-
# constrained decoding, forced tool call or answer prefill helping the system.
SYSTEM_DEFAULTS: dict[str, Any] = {**SYSTEM_GENERATION, "structured_output": False}
# One table of roles. The summarizer and its reflection turn are the system under test:
# their failures are the system's. The feedback judgement is asked of the same model in
# the same conversation (it follows the summarizer's model and generates with the paper's
# settings, see system_model) but it is a judgement, not a summary: an unreadable one is
# left out of the gold win rate, never scored as the system's failure.
ROLES = RoleTable(
    Role("summarizer", "kgds.summarizer", node="summarize", templates=("summarizer_ebs", "summarizer_abs"), system=True),
    Role("reflection", "kgds.reflection", node="reflect", templates=("reflection_ebs", "reflection_abs"), system=True, follows="summarizer"),
    Role("feedback_judge", "kgds.feedback_judge", node="feedback", follows="summarizer"),
    Role("fact_decomposer", "kgds.fact_decomposer", node="decompose"),
    Role("fact_verifier", "kgds.fact_verifier", node="verify_facts"),
    Role("opinion_verifier", "kgds.opinion_verifier", node="verify_opinions"),
    Role("error_classifier", "kgds.error_classifier", node="classify_errors", follows="opinion_verifier"),
)


def options_of(state: Mapping[str, Any]) -> KgdsOptions:
    """The options the graph input carries (the runner copies the run's options there;
    Studio users give them with the sample, see docs/kgds.md)."""
    return KgdsOptions.model_validate(state.get("options") or {})


def format_paragraphs(paragraphs: list[dict[str, Any]]) -> str:
    return "\n".join(f"[{p['paragraph_index']}] {p['paragraph_text']}" for p in paragraphs)


def format_discussion(turns: list[dict[str, Any]]) -> str:
    return "\n".join(f"{t['participant']}: {t['utterance']}" for t in turns)


def format_numbered(lines: list[str]) -> str:
    return "\n".join(f"{i}. {line}" for i, line in enumerate(lines, start=1))


def strip_stars(text: str) -> str:
    """``**AC Milan**`` -> ``AC Milan``: a clear opinion as plain text."""
    return _STARS.sub(r"\1", text)


def dump_messages(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    return [{"type": m.type, "content": m.content} for m in messages]


def load_messages(dumped: list[dict[str, Any]]) -> list[BaseMessage]:
    kinds = {"system": SystemMessage, "human": HumanMessage, "ai": AIMessage}
    return [kinds[m["type"]](m["content"]) for m in dumped]


def system_model(context: EvalContext, role: str) -> ModelSettings:
    """The model the system under test plays ``role`` with (summarizer, reflection, feedback
    judgement: the role's own, else the summarizer's), with the paper's generation settings and
    plain-prompt JSON (:data:`SYSTEM_DEFAULTS`) for every field the user did not set.

    A field counts as set when the config gave it for the role's model (or for the
    default model the role falls back to), or when the backend fixed its own default
    (the bundled ``smollm2`` keeps its small budget). Judges keep the run's settings.
    """
    settings = ROLES.model(context, role)
    unset = {k: v for k, v in SYSTEM_DEFAULTS.items() if k not in settings.model_fields_set}
    return settings.model_copy(update=unset) if unset else settings


def generation_of(settings: ModelSettings) -> dict[str, Any]:
    """The generation settings a summary was made with, kept beside it in the results."""
    return {
        "model": settings.spec,
        "max_tokens": settings.max_tokens,
        "temperature": settings.temperature,
        "structured_output": settings.structured_output,
    }


def summary_entry(pattern: str, round_: int, answer: Any | None, *, status: str | None = None, **fields: Any) -> dict[str, Any]:
    """One summary (pattern, round) as kept in the state; ``answer`` is an agent ``Answer``."""
    entry: dict[str, Any] = {"pattern": pattern, "round": round_, "background": None, "opinion": None, "reflection": None}
    if answer is not None:
        entry["status"] = answer.call.status
        entry["call"] = answer.call.model_dump()
        entry["messages"] = dump_messages(answer.messages)
        if answer.value is not None:
            value = answer.value
            field = "background_paragraphs" if pattern == "ebs" else "background_summary"
            entry["background"] = getattr(value, field)
            entry["opinion"] = value.opinion_summary
            entry["reflection"] = getattr(value, "reflection", None)
    if status is not None:
        entry["status"] = status
    entry.update(fields)
    return entry
