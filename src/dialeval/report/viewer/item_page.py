"""The pages of one item: its conversation turn by turn (benchmarks with a view), its scores
and its calls, twenty calls a page, every long text clipped (see :class:`render.Clipper`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from dialeval.report.viewer.render import Clipper, render

if TYPE_CHECKING:
    from dialeval.report.results import ItemResult

STATUSES = ("ok", "unparsed", "truncated", "error")
CALLS_PER_PAGE = 20
PROMPT_HEAD, PROMPT_TAIL = 2, 4  # messages of a long prompt shown in place: the first and the last ones
PAGE_TURNS = 200  # turns of a conversation an item page shows; the rest is one click away as text


def counts(calls: list[dict[str, Any]]) -> dict[str, int]:
    out = dict.fromkeys(STATUSES, 0)
    for c in calls:
        out[c.get("status", "error")] = out.get(c.get("status", "error"), 0) + 1
    return out


def message_text(content: Any) -> str:
    """A prompt message as text; an image part is named, never inlined."""
    if isinstance(content, str):
        return content
    parts = []
    for part in content if isinstance(content, list) else [content]:
        if isinstance(part, dict) and part.get("type") == "text":
            parts.append(str(part.get("text", "")))
        elif isinstance(part, dict) and part.get("type") == "image_url":
            url = part["image_url"].get("url") if isinstance(part.get("image_url"), dict) else part.get("image_url")
            parts.append(f"[image: {url}]")
        else:
            parts.append(str(part))
    return "\n".join(parts)


def prompt_view(messages: list[dict[str, Any]], clip: Clipper) -> dict[str, Any]:
    """The messages a page shows of one prompt (first and last ones of a long one) and a link to all of it."""
    shown = [(i, m) for i, m in enumerate(messages)]
    full = None
    if len(messages) > PROMPT_HEAD + PROMPT_TAIL:
        shown = shown[:PROMPT_HEAD] + shown[-PROMPT_TAIL:]
        full = clip.page_of("\n\n".join(f"── {m.get('role')} ──\n{message_text(m.get('content'))}" for m in messages))
    return {"count": len(messages), "full": full, "left_out": len(messages) - len(shown),
            "messages": [{"index": i + 1, "role": m.get("role"), "text": message_text(m.get("content"))} for i, m in shown]}


def write_item(out: Path, number: int, total: int, row: ItemResult, run: dict[str, Any], prompts: dict[str, Any],
               conversation: Any, thumb: Callable[[str], str | None], data: Any = None) -> Path:
    """``items/<number>.html`` (and ``<number>-calls-<k>.html`` for calls past the first twenty);
    ``data`` is the item as the data file gives it, shown where no conversation view is."""
    from dialeval.report.results import labeller

    calls = row.calls
    words = labeller(str(run.get("benchmark"))) if row.scores and row.detail else None
    labels = words([row.detail]) if words is not None else {}  # "yes" beside its rank
    pages = max(1, -(-len(calls) // CALLS_PER_PAGE))
    stem = f"{number:05d}"
    first = out / "items" / f"{stem}.html"
    for k in range(1, pages + 1):
        page = first if k == 1 else out / "items" / f"{stem}-calls-{k}.html"
        clip = Clipper(page, {"run": run["name"], "item": row.id})
        start = (k - 1) * CALLS_PER_PAGE
        shown = [{"n": start + i + 1, "call": c, "prompt": prompt_view(prompts[c["prompt_ref"]], clip) if c.get("prompt_ref") in prompts else None}
                 for i, c in enumerate(calls[start:start + CALLS_PER_PAGE])]
        conversation, more_turns = capped(conversation, clip) if k == 1 else (None, None)
        render(
            "item.html", page,
            run=run, row=row, calls=shown, call_count=len(calls), counts=counts(calls), statuses=STATUSES, clip=clip,
            thumb=thumb, scores=row.scores, labels=labels, conversation=conversation, more_turns=more_turns, first_page=k == 1, data=data,
            call_pages=[(j, f"{stem}.html" if j == 1 else f"{stem}-calls-{j}.html") for j in range(1, pages + 1)] if pages > 1 else [],
            calls_page=k,
            previous=f"{number - 1:05d}.html" if number > 1 else None,
            next=f"{number + 1:05d}.html" if number < total else None,
        )
    return first


def capped(conversation: Any, clip: Clipper) -> tuple[Any, dict[str, Any] | None]:
    """The conversation with at most :data:`PAGE_TURNS` turns, and the link to the others as
    text (count and address); ``None`` when every turn fits. Why: a 50 MB conversation made
    a 1.9 MB item page (issue 33)."""
    import dataclasses

    turns = getattr(conversation, "turns", None)
    if not turns or len(turns) <= PAGE_TURNS or not dataclasses.is_dataclass(conversation) or isinstance(conversation, type):
        return conversation, None
    rest = turns[PAGE_TURNS:]
    text = "\n\n".join(f"── {t.label or f'{t.role} · turn {t.number}'} ──\n{t.text}" for t in rest)
    return dataclasses.replace(conversation, turns=turns[:PAGE_TURNS]), {"count": len(rest), "href": clip.page_of(text)}
