"""What the KGDS report says in words: its glossary, its first warning and what the run scored."""

from __future__ import annotations

from typing import Any

from dialeval.benchmarks import RunFacts
from dialeval.protocols.kgds.metrics import ERROR_TYPES

GLOSSARY = {
    "EBS": "extractive background summary",
    "ABS": "abstractive background summary",
    "AOS": "abstractive opinion summary",
    "BSP": "background-supporting paragraphs",
    "KBSAF": "key background-supporting atomic facts",
    "CAO": "clear atomic opinions",
    "OP GM": "overall performance, geometric mean",
    **ERROR_TYPES,
}


def notices(metrics: dict[str, Any]) -> list[str]:
    """The report's first warning when summaries echo the prompt instead of the input."""
    flagged = metrics.get("prompt_echoes") or []
    if not flagged:
        return []
    items = len({e["item"] for e in flagged})
    return [
        f"**Summaries that echo the prompt.** {len(flagged)} {'summary' if len(flagged) == 1 else 'summaries'} of "
        f"{items} {'sample' if items == 1 else 'samples'} {'copies' if len(flagged) == 1 else 'copy'} the prompt's "
        "own placeholder or instructions (e.g. `Person1 ... Person2 ...`) instead of summarizing the input; "
        "their scores are kept as the system's but say nothing about summarizing (listed under Results)."
    ]


def describe(run: RunFacts) -> str:
    """Whose summaries the run scored: a predictions file's, or the summarizer's."""
    if run.predictions:
        return f"the summaries in `{run.predictions}` (for the samples in `{run.data}`)"
    rounds = run.options.get("reflection_rounds", 1)
    return f"summaries written by `{run.model('summarizer')}` for `{run.data}` (structured prompt, {rounds} self-reflection round(s))"
