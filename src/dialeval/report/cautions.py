"""What a reader must be warned about before trusting a report's numbers.

Why: a judge whose answers mostly could not be read, a server that refused requests
dozens of times, or a correlation over two units all produce tables that look as solid
as any other; these checks put the caveat next to them (and on the CLI).

Thresholds (documented in ``docs/reports.md``):

- :data:`UNUSABLE_WARN_SHARE`: a judge agent with this share or more of its answers
  ``unparsed`` or ``truncated`` gets a banner at the top of the report and a warning
  line on the CLI.
- :data:`FEW_UNITS`: a correlation, p-value or confidence interval computed on fewer
  units is listed as too few to read.

A run judged by a toy model (:attr:`ModelSpec.is_toy`, e.g. the bundled SmolLM2-135M)
says first that its numbers are a smoke test; the rule follows the models' own marking,
not their names.
"""

from __future__ import annotations

from typing import Any, Iterator

from dialeval.judge_spec import spec_of
from dialeval.benchmarks import Benchmark
from dialeval.spec import ModelSpec, SpecError

UNUSABLE_WARN_SHARE = 0.10
FEW_UNITS = 10
# keys that mark a dict of metrics as a statistic whose meaning needs enough units
_STATISTICS = frozenset({"pearson", "spearman", "kendall", "kendall_tau_b", "tau", "rho", "p_value", "low", "high",
                         "ci_low", "ci_high", "krippendorff_alpha"})
MAX_LISTED = 12


def judge_warnings(per_agent: dict[str, dict[str, Any]], system_agents: set[str]) -> list[str]:
    """One sentence per judge agent at or above :data:`UNUSABLE_WARN_SHARE` unreadable answers
    (the system under test's own failures are reported apart, in ``system_outputs``)."""
    out = []
    for agent, a in per_agent.items():
        if agent in system_agents or not a.get("calls"):
            continue
        bad = a.get("unparsed", 0) + a.get("truncated", 0)
        share = bad / a["calls"]
        if share >= UNUSABLE_WARN_SHARE and is_simulator(agent):
            out.append(
                f"simulator {agent} ({', '.join(a.get('models', []))}): {bad} of {a['calls']} turns ({share:.0%}) could not be "
                f"read ({a.get('unparsed', 0)} unparsed, {a.get('truncated', 0)} cut off); the conversations they ended count "
                f"as simulator failures, apart from the system's (warning at {UNUSABLE_WARN_SHARE:.0%})"
            )
        elif share >= UNUSABLE_WARN_SHARE:
            rest = ("it gave no score; each raw answer and why it could not be read are in results.jsonl "
                    "(`dialeval view`)" if bad == a["calls"] else "its scores rest on the rest")
            out.append(
                f"judge {agent} ({', '.join(a.get('models', []))}): {bad} of {a['calls']} answers ({share:.0%}) could not be "
                f"read ({a.get('unparsed', 0)} unparsed, {a.get('truncated', 0)} cut off); {rest} "
                f"(warning at {UNUSABLE_WARN_SHARE:.0%})"
            )
    return out


def is_simulator(agent: str) -> bool:
    """``simulation.user_simulator``: an agent that plays a user, not a judge (its unreadable turns spoil conversations, not scores)."""
    return any(part.endswith("simulator") for part in agent.split("."))


def retries_text(totals: dict[str, Any]) -> str | None:
    """``91 retries (80 HTTP 429)``, or ``None`` when no request was sent again."""
    retries = int(totals.get("retries", 0) or 0)
    if not retries:
        return None
    limited = int(totals.get("rate_limited", 0) or 0)
    return f"{retries} {'retry' if retries == 1 else 'retries'}" + (f" ({limited} HTTP 429)" if limited else "")


def few_units(metrics: dict[str, Any]) -> list[str]:
    """``path: n=2`` for each statistic in ``metrics`` computed on fewer than :data:`FEW_UNITS` units."""
    return [f"{path}: n={n}" for path, n in _statistics(metrics, "") if n < FEW_UNITS]


def _statistics(node: Any, path: str) -> Iterator[tuple[str, int]]:
    if not isinstance(node, dict):
        return
    n = node.get("n", node.get("dialogues"))  # MDSEval averages per dialogue: its units are dialogues
    if isinstance(n, int) and not isinstance(n, bool) and _STATISTICS & set(node) and any(
        node.get(k) is not None for k in _STATISTICS & set(node)
    ):
        yield path or "(top)", n
    for key, value in node.items():
        if key != "run":
            yield from _statistics(value, f"{path}.{key}" if path else str(key))


def toy_judges(bench: Benchmark, resolved: dict[str, Any]) -> list[str]:
    """The toy models that played a judging role (any role but the system under test's)."""
    context = resolved.get("context", {})
    default = (context.get("default_model") or {}).get("spec")
    models = context.get("models", {})
    roles = [r for r in (bench.roles or {"judge": ""}) if r not in bench.system_roles]
    specs = {spec_of(models.get(role)) or default for role in roles}
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
