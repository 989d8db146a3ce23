"""What the judge sees of a conversation, and how it is kept under the token budget.

Pure functions: the judge and note-taker agents build their prompts through them, and
the cost script and tests call them directly. Every mode is bounded by one budget:

- ``full``: every earlier turn. Nothing is cut; a prompt past the budget is not sent and
  the unit is recorded ``over_budget`` with its size (our policy: never judge from a
  silently shortened conversation in the mode that promises all of it).
- ``window``: the last ``window_turns`` turns, fewer when they do not fit.
- ``session``: every earlier turn with the judge's own earlier verdicts beside its
  assistant turns (the VDEval session layout), oldest dropped first to fit.
- ``notes``: the note entries closest to the turn, then the last ``window_turns`` turns,
  as many of each as fit (notes first: they carry what the window has lost).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from langchain_core.messages import BaseMessage

from dialeval.agents.images import image_line
from dialeval.data.images import image_tokens
from dialeval.memory.notes import NoteEntry
from dialeval.models.usage import count_tokens
from dialeval.conversation.data import Turn
from dialeval.conversation.toolcalls import call_lines

Render = Callable[[str], list[BaseMessage]]
SPEAKER = {"user": "User", "assistant": "Assistant"}


def prompt_tokens(messages: Sequence[BaseMessage]) -> int:
    """Tokens of a prompt: its text, and each image block as the image tokens its size
    costs (a ``data:`` URL's base64 is pixels, not text)."""
    total = 0
    for message in messages:
        content = message.content
        if isinstance(content, str):
            total += count_tokens(content)
        else:
            total += sum(_part_tokens(p) for p in content if isinstance(p, dict))
    return total + 4 * len(messages)  # role markers


def _part_tokens(part: dict[str, Any]) -> int:
    if part.get("type") == "image_url":
        url = part.get("image_url")
        return image_tokens(str(url.get("url", "") if isinstance(url, dict) else url or ""))
    return count_tokens(str(part.get("text", "")))


EMPTY_REPLY = "(empty reply)"  # what the judge and the viewer show for an assistant turn that said nothing


def turn_text(turn: Turn) -> str:
    """A turn's text with a line per image (the pictures themselves go as blocks where the model
    sees them) and, before it, the tool calls the assistant made with their results (shortened
    with a marker when long, so they count under the budget without filling it)."""
    if not turn.images and not turn.tool_calls:
        return turn.text if turn.text or turn.role != "assistant" else EMPTY_REPLY
    lines = [*call_lines(turn.tool_calls), turn.text, *(image_line(image, i + 1) for i, image in enumerate(turn.images))]
    return "\n".join(line for line in lines if line).strip("\n")


def turn_line(turn: Turn, verdict: str | None = None) -> str:
    """One turn as the judge reads it; in session mode with the judge's earlier verdict."""
    text = turn_text(turn)
    line = f"[turn {turn.number}] {SPEAKER[turn.role]}:" + ("\n" if turn.tool_calls else " ") + text
    if verdict:
        line += f"\n    (your verdict on this turn earlier: {verdict})"
    return line


def note_line(entry: NoteEntry) -> str:
    value = entry.value if isinstance(entry.value, str) else repr(entry.value)
    return f"- {entry.key}: {value} (noted at turn {entry.turn})"


@dataclass
class View:
    """The context block one prompt carries, what it holds, and its size in tokens."""

    messages: list[BaseMessage]
    tokens: int
    turns_shown: list[int] = field(default_factory=list)
    notes_shown: list[str] = field(default_factory=list)
    omitted_turns: int = 0
    over_budget: bool = False

    def record(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.tokens,
            "turns_shown": len(self.turns_shown),
            "first_turn_shown": self.turns_shown[0] if self.turns_shown else None,
            "notes_shown": self.notes_shown,
            "omitted_turns": self.omitted_turns,
            "over_budget": self.over_budget,
        }


def context_text(lines: list[str], notes: list[str], omitted: int, mode: str) -> str:
    parts: list[str] = []
    if mode == "notes":
        parts.append("Notes kept about the conversation so far:\n" + ("\n".join(notes) if notes else "(no notes yet)"))
    if omitted:
        parts.append(f"({omitted} earlier turns are not shown)")
    parts.append("\n".join(lines) if lines else "(no earlier turns)")
    return "\n\n".join(parts)


def build_view(
    render: Render,
    mode: str,
    earlier: list[Turn],
    budget: int,
    *,
    window_turns: int,
    verdicts: dict[int, str] | None = None,
    notes: list[NoteEntry] = (),  # type: ignore[assignment]
) -> View:
    """The largest context of ``mode`` whose rendered prompt fits ``budget`` tokens.

    ``render(context)`` renders the whole prompt around a context block; ``earlier`` are
    the turns before the judged one, oldest first; ``verdicts`` (session) the judge's
    earlier verdicts by turn number; ``notes`` (notes) the entries, most relevant first.
    """
    verdicts = verdicts or {}
    pool = earlier
    if mode in ("window", "notes"):
        pool = earlier[-window_turns:]
    lines = [turn_line(t, verdicts.get(t.number) if mode == "session" else None) for t in pool]
    note_lines = [note_line(n) for n in notes] if mode == "notes" else []

    def make(n_notes: int, n_lines: int) -> View:
        shown = pool[len(pool) - n_lines:] if n_lines else []
        text = context_text(lines[len(lines) - n_lines:] if n_lines else [], note_lines[:n_notes], len(earlier) - len(shown), mode)
        messages = render(text)
        return View(messages, prompt_tokens(messages), [t.number for t in shown],
                    [n.key for n in list(notes)[:n_notes]], len(earlier) - len(shown))

    if mode == "full":
        view = make(0, len(lines))
        view.over_budget = view.tokens > budget
        return view
    # grow greedily against per-line sizes, then confirm on the rendered prompt
    base = make(0, 0)
    if base.tokens > budget:
        base.over_budget = True
        return base
    room = budget - base.tokens
    n_notes = 0
    for size in (count_tokens(line) + 1 for line in note_lines):
        if size > room:
            break
        room, n_notes = room - size, n_notes + 1
    n_lines = 0
    for size in (count_tokens(line) + 1 for line in reversed(lines)):
        if size > room:
            break
        room, n_lines = room - size, n_lines + 1
    view = make(n_notes, n_lines)
    while view.tokens > budget and (n_lines or n_notes):
        n_lines, n_notes = (n_lines - 1, n_notes) if n_lines else (0, n_notes - 1)
        view = make(n_notes, n_lines)
    view.over_budget = view.tokens > budget
    return view
