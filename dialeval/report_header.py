"""The first lines of a report: what the run evaluated, who judged it, and what the codes mean.

Why: a reader of a report must know without opening the config which agent
implementation and which model played each role, and what ``OM`` or ``IMP`` stand for.
The models shown are those the calls actually went to (from the usage records), not
the configured ones, so the header cannot claim a model that was never asked.
"""

from __future__ import annotations

from typing import Any

from dialeval.benchmarks import Benchmark


def glossary(benchmark: str) -> dict[str, str]:
    """The codes a benchmark's tables use and what they stand for (imports only that benchmark's names)."""
    if benchmark == "kgds":
        from dialeval.metrics.kgds import ERROR_TYPES

        return {
            "EBS": "extractive background summary",
            "ABS": "abstractive background summary",
            "AOS": "abstractive opinion summary",
            "BSP": "background-supporting paragraphs",
            "KBSAF": "key background-supporting atomic facts",
            "CAO": "clear atomic opinions",
            "OP GM": "overall performance, geometric mean",
            **ERROR_TYPES,
        }
    if benchmark == "mmrc":
        from dialeval.data.mmrc import ABILITY_NAMES

        return {
            **ABILITY_NAMES,
            "EP": "extraction precision",
            "IMP": "image management precision",
            "RP": "refuse precision",
        }
    return {}


def evaluated(bench: Benchmark, resolved: dict[str, Any]) -> str:
    """One line: what was under evaluation in this run."""
    context = resolved.get("context", {})
    options = context.get("options", {})
    default = (context.get("default_model") or {}).get("spec")

    def model(role: str) -> str:
        return (context.get("models", {}).get(role) or {}).get("spec") or default

    data = resolved.get("data")
    if bench.name == "kgds":
        if options.get("predictions"):
            return f"the summaries in `{options['predictions']}` (for the samples in `{data}`)"
        rounds = options.get("reflection_rounds", 1)
        return f"summaries written by `{model('summarizer')}` for `{data}` (structured prompt, {rounds} self-reflection round(s))"
    if bench.name == "mmrc":
        notes = {"both": "without and with NOTE-TAKING", "on": "with NOTE-TAKING", "off": "without NOTE-TAKING"}
        return f"answers of `{model('responder')}` to the questions in `{data}`, {notes[options.get('note_taking', 'both')]}"
    return f"the system outputs in `{data}`"


def role_rows(bench: Benchmark, resolved: dict[str, Any], per_agent: dict[str, dict[str, Any]]) -> list[str]:
    """``| role | agent | model(s) called |`` for each role of the benchmark."""
    chosen = resolved.get("context", {}).get("agents", {})
    rows = ["| role | agent | model(s) called |", "|---|---|---|"]
    for role, default in bench.roles.items():
        agent = chosen.get(role, default)
        stems = {agent, default, f"{bench.name}.{role}"}  # calls are recorded under such names
        models = sorted({m for name, a in per_agent.items() if _recorded_as(name, stems) for m in a["models"]})
        rows.append(f"| {role} | `{agent}` | {', '.join(f'`{m}`' for m in models) or 'no call recorded'} |")
    return rows


def _recorded_as(name: str, stems: set[str]) -> bool:
    """``kgds.summarizer.ebs`` and ``mmrc.judge_ar`` are calls of ``kgds.summarizer`` and ``mmrc.judge``."""
    return any(name == stem or name.startswith((stem + ".", stem + "_")) for stem in stems)


def header(bench: Benchmark, resolved: dict[str, Any], usage: dict[str, Any]) -> list[str]:
    """The report lines that follow the run facts: what was evaluated, roles, glossary."""
    lines = [f"- evaluated: {evaluated(bench, resolved)}", ""]
    if bench.roles:
        lines += [*role_rows(bench, resolved, usage.get("per_agent", {})), ""]
    terms = glossary(bench.name)
    if terms:
        lines += ["Abbreviations: " + "; ".join(f"{code} = {name}" for code, name in terms.items()) + ".", ""]
    return lines
