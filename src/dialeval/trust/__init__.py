"""The judge trust card: candidate judges on labelled units, agreement against the human
ceiling, bias probes, cost, and the cheapest candidate the figures support (docs/trust.md).

``dialeval.trust_card(data, labels, rubric, judges, **settings)`` (or :func:`card` here)
builds a card; ``dialeval trust`` is the same from the command line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def card(data: str | Path, labels: str | Path, rubric: str, judges: list[Any], **settings: Any) -> dict[str, Any]:
    """The judge trust card (``dialeval trust``): ``judges`` are model specs, model settings
    (dicts) or ``{model, context, template, name}`` candidates; ``settings`` are
    :class:`dialeval.trust.build.TrustSettings` fields (``tolerance``, ``repeats``, ``probes``,
    ``options``, ``output_dir``, ``corpus``, ``dry_run``...). Returns card.json's content (its ``folder``).
    The card's modules load on the first call, so ``import dialeval.trust`` stays light."""
    from dialeval.trust.build import TrustSettings, build
    from dialeval.trust.candidates import as_candidate

    return build(TrustSettings(data=Path(data), labels=Path(labels), rubric=rubric,
                               candidates=[as_candidate(j) for j in judges], **settings))
