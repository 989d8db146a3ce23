"""Summaries that repeat the prompt's own example instead of summarizing the input.

Why: a small summarizer asked for ``{"opinion_summary": "Person1 ... Person2 ..."}``
may hand back that placeholder itself. The judges then find nothing wrong with it (no
claim, so no unknowable claim), and the summary can score a perfect CAO recall. Its
scores stay the system's, as the paper scores every summary; the report flags it so a
reader does not mistake such a number for a summary's quality.

A text echoes the prompt when at least half of its word trigrams (of its words, when it
has fewer than three) occur in the prompt's instructions and examples but nowhere in the
input material. Ellipses count as words, so a placeholder's ``...`` is part of the match.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Iterable

WORD = re.compile(r"\.{3}|\u2026|[^\W_]+(?:'[^\W_]+)?")
ECHO_SHARE = 0.5  # share of a text's trigrams that must come from the prompt alone
# the summarizer's and the self-reflection's templates of each pattern: the text a summary may copy
TEMPLATES = {
    "ebs": ("kgds/summarizer_ebs", "kgds/summarizer_ebs_guided", "kgds/reflection_ebs", "kgds/reflection_ebs_guided"),
    "abs": ("kgds/summarizer_abs", "kgds/summarizer_abs_guided", "kgds/reflection_abs", "kgds/reflection_abs_guided"),
}


def words(text: str) -> list[str]:
    """Lower-case words, with ``...`` (or ``…``) as a word of its own."""
    return ["..." if w in ("...", "\u2026") else w.lower() for w in WORD.findall(text)]


def grams(tokens: list[str]) -> list[tuple[str, ...]]:
    """Word trigrams; a text of one or two words is its words."""
    if len(tokens) < 3:
        return [(t,) for t in tokens]
    return [tuple(tokens[i : i + 3]) for i in range(len(tokens) - 2)]


def _gram_set(text: str) -> set[tuple[str, ...]]:
    tokens = words(text)
    return set(grams(tokens)) | {(t,) for t in tokens}


def echoes_prompt(text: str, prompt: str, material: str) -> bool:
    """Whether ``text`` is copied from ``prompt`` (instructions and examples) rather than
    from ``material`` (what was to be summarized); an empty text is not an echo."""
    own = grams(words(text))
    if not own:
        return False
    from_prompt, from_input = _gram_set(prompt), _gram_set(material)
    copied = sum(1 for g in own if g in from_prompt and g not in from_input)
    return copied >= ECHO_SHARE * len(own)


@functools.cache
def template_text(pattern: str) -> str:
    """The packaged summarizer and reflection templates of ``pattern``, variables unfilled."""
    from dialeval.agents.templates import load_template

    return "\n".join(body for ref in TEMPLATES.get(pattern, ()) for _, body in load_template(ref).sections)


def echoed_fields(summary: dict[str, Any], material: str) -> list[str]:
    """Which text fields of one summary entry (``opinion``, ABS ``background``) echo the prompt."""
    prompt = template_text(summary.get("pattern", ""))
    out = []
    for name in ("opinion", "background"):
        value = summary.get(name)
        if isinstance(value, str) and echoes_prompt(value, prompt, material):
            out.append(name)
    return out


def sample_material(sample: dict[str, Any]) -> str:
    """The input of one KGDS sample as text: its paragraphs and the discussion."""
    paragraphs = [str(p.get("paragraph_text", "")) for p in sample.get("SBK", [])]
    turns = [str(t) if not isinstance(t, dict) else " ".join(str(v) for v in t.values()) for t in sample.get("KGD", [])]
    return "\n".join(paragraphs + turns)


def echoes(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every flagged summary of the run: item, pattern, round and the fields that echo."""
    return [
        {"item": r["id"], "pattern": s["pattern"], "round": s["round"], "fields": s["echoes_prompt"]}
        for r in records
        for s in r.get("summaries", [])
        if s.get("echoes_prompt")
    ]
