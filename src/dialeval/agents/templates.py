"""Prompt templates as files: ``<<system>>`` / ``<<user>>`` sections with ``$variables``.

``$name`` placeholders (``string.Template``) leave JSON braces in prompts alone. A
reference is either a packaged template (``kgds/fact_verifier``) or a path to a user
file; a path that does not exist is an error, never prompt text.

Benchmark data goes between tags the template itself uses, e.g.
``<candidate_answer>\n$candidate\n</candidate_answer>``, and the instructions name what
is inside such tags as material to judge, never instructions. When rendering, any of
the template's own tags that appear inside a value are defused (``</candidate_answer>``
becomes ``[/candidate_answer]``), so data can never close its block and pose as prompt.
Lookalikes count as the tag: attributes (``</candidate_answer x>``), spaces (``< /tag>``),
zero-width characters inside the tag and full-width brackets (``＜／tag＞``) are read
through NFKC before the check.
"""

from __future__ import annotations

import difflib
import re
import string
import unicodedata
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

_SECTION = re.compile(r"^<<(system|user)>>\s*$", re.MULTILINE)
_CLOSING_TAG = re.compile(r"</\s*([A-Za-z_][\w\-]*)\s*>")
_ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff")
_OPENERS = ("<", "\uff1c", "\ufe64")  # characters NFKC reads as "<"


class TemplateError(ValueError):
    """A template is missing, malformed, or was rendered without a variable it needs."""


@dataclass(frozen=True)
class Template:
    """A parsed prompt template; ``source`` names the file it came from."""

    source: str
    sections: tuple[tuple[str, str], ...]

    @cached_property
    def delimiters(self) -> frozenset[str]:
        """Tag names the template closes somewhere (``</name>``): its data delimiters."""
        return frozenset(m.group(1).lower() for _, body in self.sections for m in _CLOSING_TAG.finditer(body))

    @cached_property
    def _delimiter_tag(self) -> re.Pattern[str] | None:
        if not self.delimiters:
            return None
        names = "|".join(map(re.escape, sorted(self.delimiters)))
        # a tag's name, then attributes or "/" up to ">" (or the line's end: a model may
        # read an unclosed "</name" as closing too)
        return re.compile(r"<\s*(/?)\s*(" + names + r")(?![\w\-])[^<>\n]*(?:>|(?=\n)|\Z)", re.IGNORECASE)

    def defuse(self, value: object) -> str:
        """``value`` as text with this template's delimiter tags (and their lookalikes) made inert."""
        text = str(value)
        if self._delimiter_tag is None or not any(c in text for c in _OPENERS):
            return text
        seen, source = _normalised(text)
        out, last = [], 0
        for match in self._delimiter_tag.finditer(seen):
            start, end = source[match.start()], source[match.end() - 1] + 1
            out += [text[last:start], f"[{match.group(1)}{match.group(2)}]"]
            last = end
        return "".join(out) + text[last:]

    @cached_property
    def variables(self) -> frozenset[str]:
        names: set[str] = set()
        for _, body in self.sections:
            for match in string.Template.pattern.finditer(body):
                name = match.group("named") or match.group("braced")
                if name:
                    names.add(name)
        return frozenset(names)

    @cached_property
    def _bodies(self) -> tuple[tuple[str, string.Template], ...]:
        return tuple((role, string.Template(body)) for role, body in self.sections)

    def render(self, **values: object) -> list[BaseMessage]:
        """Fill every ``$variable``; a missing one is a :class:`TemplateError`."""
        missing = self.variables - values.keys()
        if missing:
            raise TemplateError(f"template {self.source} needs {sorted(missing)}")
        messages: list[BaseMessage] = []
        defused = {k: self.defuse(v) for k, v in values.items()}
        for role, body in self._bodies:
            text = body.substitute(defused).strip()
            messages.append(SystemMessage(text) if role == "system" else HumanMessage(text))
        return messages


def _normalised(text: str) -> tuple[str, list[int]]:
    """``text`` read through NFKC character by character, zero-width characters dropped,
    with the index in ``text`` each character of the result came from."""
    chars: list[str] = []
    source: list[int] = []
    for index, char in enumerate(text):
        if char in _ZERO_WIDTH:
            continue
        seen = char if char.isascii() else unicodedata.normalize("NFKC", char)
        chars.append(seen)
        source += [index] * len(seen)
    return "".join(chars), source


def supplied_variables(benchmark: str, key: str) -> frozenset[str]:
    """The ``$variables`` the agent under ``templates: {key: ...}`` fills: those of the
    benchmark's packaged templates named by the key's words in order (``judge_ie``:
    ``judge_ie``, ``judge_rubric_ie``), or of all its templates when none is."""
    refs = [r for r in packaged_templates() if r.startswith(f"{benchmark}/")]

    def named_by_key(ref: str) -> bool:
        words = iter(ref.split("/", 1)[1].split("_"))
        return all(part in words for part in key.split("_"))

    mine = [r for r in refs if named_by_key(r)] or refs
    return frozenset().union(*(load_template(r).variables for r in mine))


def check_variables(template: Template, benchmark: str, key: str) -> None:
    """Stop before the first call when ``template`` uses a ``$variable`` its agent never
    fills (every item would fail on it otherwise); the message lists those it does fill."""
    supplied = supplied_variables(benchmark, key)
    unknown = sorted(template.variables - supplied)
    if not unknown:
        return
    close = difflib.get_close_matches(unknown[0], sorted(supplied), n=1, cutoff=0.6)
    hint = f" (did you mean ${close[0]}?)" if close else ""
    fills = ", ".join(f"${v}" for v in sorted(supplied)) or "none"
    raise TemplateError(
        f"template {template.source} uses {', '.join('$' + u for u in unknown)}, which {benchmark}'s "
        f"{key!r} agent does not fill{hint}; it fills: {fills}"
    )


def parse_template(text: str, source: str) -> Template:
    for match in string.Template.pattern.finditer(text):
        if match.group("invalid") is not None:
            line = text.count("\n", 0, match.start()) + 1
            raise TemplateError(f"template {source}, line {line}: '$' is not followed by a variable name (write $$ for a dollar sign)")
    parts = _SECTION.split(text)
    if len(parts) < 3:
        raise TemplateError(f"template {source} has no <<system>> or <<user>> section")
    sections = tuple((parts[i], parts[i + 1].strip("\n")) for i in range(1, len(parts), 2))
    if sections[-1][0] != "user":
        raise TemplateError(f"template {source} must end with a <<user>> section")
    return Template(source=source, sections=sections)


def prompt_file(name: str) -> Traversable:
    """A benchmark's packaged prompt file: ``kgds/fact_verifier.txt`` lives in
    ``dialeval/protocols/kgds/prompts/``, so the names users write keep working."""
    benchmark, _, rest = name.partition("/")
    return resources.files("dialeval.protocols").joinpath(benchmark, "prompts", *rest.split("/"))


def packaged_templates() -> list[str]:
    """Every packaged template's name (``kgds/fact_verifier``); fragments without a
    ``<<user>>`` section (rubric texts) are not templates."""
    return list(_packaged())


@lru_cache(maxsize=1)
def _packaged() -> tuple[str, ...]:
    refs: list[str] = []

    def walk(folder: Traversable, prefix: str) -> None:
        for entry in folder.iterdir():
            if entry.is_dir() and not entry.name.startswith("__"):
                walk(entry, f"{prefix}{entry.name}/")
            elif entry.name.endswith(".txt") and "<<user>>" in entry.read_text(encoding="utf-8"):
                refs.append(prefix + entry.name[: -len(".txt")])

    for bench in resources.files("dialeval.protocols").iterdir():
        if bench.is_dir() and bench.joinpath("prompts").is_dir():
            walk(bench.joinpath("prompts"), f"{bench.name}/")
    return tuple(sorted(refs))


@lru_cache(maxsize=256)
def load_template(ref: str) -> Template:
    """Load a packaged template by name (``kgds/summarizer``) or a user file by path."""
    looks_like_path = ref.endswith(".txt") or "/" in ref and Path(ref).suffix
    packaged = prompt_file(f"{ref}.txt")
    if not looks_like_path and packaged.is_file():
        return parse_template(packaged.read_text(encoding="utf-8"), f"dialeval/prompts/{ref}.txt")
    path = Path(ref).expanduser()
    if path.is_file():
        return parse_template(path.read_text(encoding="utf-8"), str(path))
    raise TemplateError(f"prompt template not found: {ref!r} (neither a packaged template nor a file)")
