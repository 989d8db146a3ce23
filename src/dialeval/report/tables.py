"""Markdown tables and the number formats of every report, in one place.

Why: reports quote text that models and data files wrote (system names, run labels,
unreadable answers); a ``|``, a backtick or ``<img ...>`` in it must stay text, never
become a column, a code span or live HTML. Every table goes through :func:`row`, and
text from outside goes through :func:`cell` or :func:`code`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

NA = "n/a"

# characters that start Markdown or HTML markup inside a table cell or a list line
_ESCAPES = {
    "\\": "\\\\",
    "|": "\\|",
    "`": "\\`",
    "[": "\\[",
    "]": "\\]",
    "<": "&lt;",
    ">": "&gt;",
    "&": "&amp;",
}
_SPECIAL = re.compile(r"[\\|`\[\]<>&]|\r\n|[\r\n]")
_NEWLINE = re.compile(r"\r\n|[\r\n]")
_BACKTICKS = re.compile(r"`+")


def num(value: float | None, digits: int = 2, *, signed: bool = False) -> str:
    """``0.123`` -> ``"0.12"``; ``None`` -> ``"n/a"``; ``signed`` writes ``+`` before positives."""
    if value is None:
        return NA
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def ci(interval: Sequence[float] | None, digits: int = 2, *, scale: float = 1.0) -> str:
    """A 95% interval beside its figure: ``[0.40, 0.60]`` (``scale=100`` for %); ``n/a`` without one."""
    if not interval:
        return NA
    return f"[{scale * interval[0]:.{digits}f}, {scale * interval[1]:.{digits}f}]"


def pct(value: float | None, digits: int = 1, *, sign: str = "%") -> str:
    """A share as a percentage: ``0.25`` -> ``"25.0%"`` (``sign=""`` for bare numbers under a ``(%)`` head)."""
    return NA if value is None else f"{100 * value:.{digits}f}{sign}"


def cell(text: object) -> str:
    """Outside text made inert for a table cell or a Markdown line: no column break, no
    code span, no link, no HTML; newlines become spaces. Plain names come back unchanged."""
    value = str(text)
    if not _SPECIAL.search(value):
        return value
    value = _NEWLINE.sub(" ", value)
    return "".join(_ESCAPES.get(ch, ch) for ch in value)


def code(text: object, *, table: bool = False) -> str:
    """Outside text as one inline code span that nothing inside can close: the fence is
    longer than any run of backticks in the text (``table`` also escapes ``|``)."""
    value = _NEWLINE.sub(" ", str(text))
    if table:
        value = value.replace("|", "\\|")
    longest = max((len(m) for m in _BACKTICKS.findall(value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def row(cells: Iterable[object]) -> str:
    """``| a | b |``; a ``None`` cell is a blank (``| |``), an empty string keeps its spaces."""
    return "|" + "|".join(" " if c is None else f" {c} " for c in cells) + "|"


def rule(align: str) -> str:
    """The line under a header: one letter per column, ``l`` (``---``) or ``r`` (``---:``)."""
    return "|" + "".join("---|" if a == "l" else "---:|" for a in align)


def markdown_table(headers: Sequence[object], rows: Iterable[Sequence[object]], align: str) -> list[str]:
    """Header, rule and rows as lines; ``align`` has one ``l``/``r`` per column.

    Cells are written as given: wrap outside text in :func:`cell` or :func:`code`."""
    if len(align) != len(headers):
        raise ValueError(f"align {align!r} has {len(align)} columns, headers have {len(headers)}")
    return [row(headers), rule(align), *(row(r) for r in rows)]
