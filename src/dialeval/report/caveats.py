"""What a run's numbers are worth when a toy model judged it.

Why: the bundled SmolLM2-135M makes every offline example run end to end, and its
reports fill their tables; a reader must not take those figures for a measurement. The
sentence follows the models' own marking (:attr:`ModelSpec.is_toy`), not their names.
"""

from __future__ import annotations

from typing import Any

from dialeval.benchmarks import Benchmark
from dialeval.models.spec import ModelSpec, SpecError


def toy_judges(bench: Benchmark, resolved: dict[str, Any]) -> list[str]:
    """The toy models that played a judging role (any role but the system under test's)."""
    context = resolved.get("context", {})
    default = (context.get("default_model") or {}).get("spec")
    models = context.get("models", {})
    roles = [r for r in (bench.roles or {"judge": ""}) if r not in bench.system_roles]
    specs = {(models.get(role) or {}).get("spec") or default for role in roles}
    toys = []
    for spec in sorted(s for s in specs if s):
        try:
            if ModelSpec.parse(spec).is_toy:
                toys.append(spec)
        except SpecError:
            continue
    return toys


def notices(bench: Benchmark, resolved: dict[str, Any], metrics: dict[str, Any]) -> list[str]:
    """The report's opening warnings from this module: the toy-judge sentence, then the
    benchmark's own (:attr:`Benchmark.notices`), each a quoted paragraph."""
    own = bench.notices(metrics) if bench.notices is not None else []
    return toy_model_note(bench, resolved) + [line for text in own for line in (f"> {text}", "")]


def toy_model_note(bench: Benchmark, resolved: dict[str, Any]) -> list[str]:
    """One report paragraph when a toy model judged the run, else nothing."""
    toys = toy_judges(bench, resolved)
    if not toys:
        return []
    names = ", ".join(f"`{t}`" for t in toys)
    return [
        f"> **A smoke test, not a measurement.** The judge ({names}) is a toy model (a tiny model bundled for trying dialeval offline): "
        "these numbers show that the pipeline runs end to end and fills its tables, not how good the "
        "evaluated outputs are or what a capable judge would say.",
        "",
    ]
