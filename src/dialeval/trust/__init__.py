"""The judge trust card: candidate judges on labelled units, agreement against the human
ceiling, bias probes, cost, and the cheapest candidate the figures support (docs/trust.md).

``dialeval.trust(data, labels, rubric, judges, **settings)`` builds a card: this package
is callable, since importing any of its modules sets ``dialeval.trust`` to the package
and would hide a function of the same name.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

PROBES = ("position", "verbosity", "self_preference", "needle", "consistency")


def card(data: str | Path, labels: str | Path, rubric: str, judges: list[Any], **settings: Any) -> dict[str, Any]:
    """The judge trust card (``dialeval trust``): ``judges`` are model specs, model settings
    (dicts) or ``{model, context, template, name}`` candidates; ``settings`` are
    :class:`dialeval.trust.build.TrustSettings` fields (``tolerance``, ``repeats``, ``probes``,
    ``options``, ``output_dir``, ``corpus``, ``dry_run``...). Returns card.json's content (its ``folder``)."""
    from dialeval.trust.build import TrustSettings, build
    from dialeval.trust.candidates import as_candidate

    return build(TrustSettings(data=Path(data), labels=Path(labels), rubric=rubric,
                               candidates=[as_candidate(j) for j in judges], **settings))


class _CallablePackage(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return card(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
