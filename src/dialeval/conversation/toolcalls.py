"""Tool calls inside an assistant turn: the record kept, and the compact form judges read.

An agent's turn is its calls, their results and its reply together, so they are one
:class:`~dialeval.conversation.data.Turn`. A long result or argument list is
shortened for the judge with a marker that says how much was left out (never dropped
without a word), so every prompt stays under the run's token budget.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dialeval.models.usage import count_tokens

RESULT_TOKENS = 300  # the most tokens of one tool result a judge reads
ARGUMENT_TOKENS = 150  # the most tokens of one call's arguments a judge reads


class ToolCall(BaseModel):
    """One call the assistant made and what came back (``result`` None: the log holds none)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    arguments: Any = Field(default_factory=dict)  # the parsed JSON arguments, or the raw text when not JSON
    id: str | None = None
    result: str | None = None
    error: bool = False  # the tool reported a failure (Anthropic ``is_error``)

    def signature(self) -> str:
        return f"{self.name}({arguments_text(self.arguments)})"


def arguments_text(arguments: Any) -> str:
    """Arguments as compact JSON (text arguments as they were written)."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, separators=(", ", ": "), sort_keys=False)


def parsed_arguments(value: Any) -> Any:
    """OpenAI sends arguments as a JSON string: read it; anything unreadable stays text."""
    if isinstance(value, str):
        try:
            return json.loads(value) if value.strip() else {}
        except json.JSONDecodeError:
            return value
    return {} if value is None else value


def shortened(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` tokens, with a marker naming what was left out."""
    tokens = count_tokens(text)
    if tokens <= limit:
        return text
    keep = max(1, len(text) * limit // tokens)
    while keep > 1 and count_tokens(text[:keep]) > limit:
        keep = keep * 9 // 10
    return f"{text[:keep].rstrip()} … [shortened for the judge: {keep:,} of {len(text):,} characters shown]"


def call_lines(calls: list[ToolCall], *, result_tokens: int = RESULT_TOKENS) -> list[str]:
    """The calls of one turn as the judge reads them: a line per call, a line per result."""
    lines: list[str] = []
    for i, call in enumerate(calls, start=1):
        lines.append(f"  [tool call {i}] {call.name}({shortened(arguments_text(call.arguments), ARGUMENT_TOKENS)})")
        if call.result is None:
            lines.append(f"  [tool result {i}] (none in the log)")
        else:
            label = "tool error" if call.error else "tool result"
            lines.append(f"  [{label} {i}] {shortened(call.result, result_tokens)}")
    return lines


def reference_lines(calls: list[ToolCall]) -> list[str]:
    return [f"  [expected call {i}] {call.signature()}" for i, call in enumerate(calls, start=1)]


def tools_text(tools: list[dict[str, Any]]) -> str:
    """The tools the assistant had, one line each: name and description (OpenAI or Anthropic shape)."""
    lines = []
    for tool in tools:
        spec = tool.get("function", tool) if isinstance(tool.get("function"), dict) else tool
        name = spec.get("name", "?")
        description = str(spec.get("description") or "").strip()
        lines.append(f"- {name}" + (f": {shortened(description, ARGUMENT_TOKENS)}" if description else ""))
    return "\n".join(lines) or "(not given)"
