"""Rendering the viewer's pages: one Jinja2 environment (autoescaped), one writer that scrubs
keys, and :class:`Clipper`, which keeps every page bounded by moving long texts to pages of their own.

Why: a judge prompt can hold a whole dialogue; printed in full on every call, one item
page grew past a megabyte. A clipped text shows its start and links to the full text.
"""

from __future__ import annotations

import json
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

from dialeval.report.view_rows import image_label
from dialeval.report.tables import num, pct

CLIP = 1500  # characters of a long text shown in place; the rest is one click away
PAGE_TEXT = 200_000  # characters of clipped texts one page shows in place; past them, each text shows its link only
SPENT_CLIP = 120  # characters a text shows in place once the page's budget is spent
FULL_PAGE = 500_000  # characters of one full-text page; a longer text continues on numbered parts


@lru_cache(maxsize=1)
def env() -> Any:
    from jinja2 import Environment, PackageLoader, select_autoescape

    environment = Environment(loader=PackageLoader("dialeval.report.viewer", "templates"), autoescape=select_autoescape(default=True))
    environment.filters["markdown"] = markdown
    environment.filters["pretty"] = pretty
    environment.filters["pretty_record"] = lambda record: pretty({k: v for k, v in record.items() if k != "calls"})
    environment.filters["money"] = lambda v: "n/a" if v is None else f"{float(v or 0):.4f}"
    environment.filters["pct"] = pct
    environment.filters["image_name"] = image_label
    environment.filters["score"] = lambda v: "n/a" if v is None else f"{float(v):.4g}"
    environment.filters["num"] = lambda v, d=3: num(v, d)
    return environment


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def markdown(text: str) -> Any:
    """Markdown to HTML with raw HTML escaped (markdown-it's ``html`` option off)."""
    from markdown_it import MarkdownIt
    from markupsafe import Markup

    return Markup(MarkdownIt("commonmark", {"html": False}).enable("table").render(text or ""))


def render(template: str, path: Path, **values: Any) -> Path:
    """Write one page; API keys (in prompts, answers or data) are scrubbed like every run artifact."""
    from dialeval.jsonsafe import replace_surrogates  # a reply's lone surrogate shows as U+FFFD
    from dialeval.secrets import scrub

    path.parent.mkdir(parents=True, exist_ok=True)
    text = scrub(replace_surrogates(env().get_template(template).render(**values)))
    temporary = path.with_name(f".{path.name}.{threading.get_ident()}.tmp")  # the server sends old or new, never half
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)
    return path


class Clipper:
    """Called from a template on a long text: the first :data:`CLIP` characters (escaped) and a
    link to a page of the whole text, written beside the page (``<page stem>-full/<n>.html``)."""

    def __init__(self, page: Path, crumbs: dict[str, str]):
        self.page = page
        self.crumbs = crumbs  # labels and links the full-text pages show in their header
        self.count = 0
        self.written: dict[int, str] = {}  # one page per distinct text (a prompt repeated by 20 calls)
        self.shown = 0  # characters shown in place so far: a page holds at most PAGE_TEXT of them

    def __call__(self, text: Any, limit: int = CLIP) -> Any:
        from markupsafe import Markup, escape

        text = text if isinstance(text, str) else pretty(text)
        if self.shown >= PAGE_TEXT:  # issue 33: a page as large as the data helps nobody
            limit = min(limit, SPENT_CLIP)
        if len(text) <= limit:
            self.shown += len(text)
            return escape(text)
        self.shown += limit
        rest = len(text) - limit
        return Markup(f'{escape(text[:limit])}<span class="clipped">… <a href="{escape(self.page_of(text))}">{rest:,} more characters: full text</a></span>')

    def page_of(self, text: str) -> str:
        """Write ``text`` whole on pages of its own (:data:`FULL_PAGE` characters each, linked in
        order); the first one's address relative to the clipped page."""
        if hash(text) in self.written:
            return self.written[hash(text)]
        self.count += 1
        parts = max(1, -(-len(text) // FULL_PAGE))
        names = [f"{self.count}.html" if k == 1 else f"{self.count}-{k}.html" for k in range(1, parts + 1)]
        for k, name in enumerate(names, start=1):
            render(
                "fulltext.html", self.page.parent / f"{self.page.stem}-full" / name,
                text=text[(k - 1) * FULL_PAGE:k * FULL_PAGE], total=len(text), part=k, parts=parts,
                previous=names[k - 2] if k > 1 else None, next=names[k] if k < parts else None,
                back=f"../{self.page.name}", crumbs=self.crumbs,
            )  # fmt: skip
        self.written[hash(text)] = name = f"{self.page.stem}-full/{names[0]}"
        return name
