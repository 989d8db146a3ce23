"""The first lines of a report: what the run evaluated, who judged it, and what the codes mean.

Why: a reader of a report must know without opening the config which agent
implementation and which model played each role, and what ``OM`` or ``IMP`` stand for.
The models shown are those the calls actually went to (from the usage records), not
the configured ones, so the header cannot claim a model that was never asked.
"""

from __future__ import annotations

from typing import Any, Sequence

from dialeval.judge_spec import spec_of
from dialeval.benchmarks import Benchmark, RunFacts
from dialeval.report.tables import code, markdown_table
from dialeval.run.provenance import mixed_code_warning


def evaluated(bench: Benchmark, resolved: dict[str, Any]) -> str:
    """One line: whose answers were under evaluation in this run, and who judged them.

    Why: the same data file can hold the references (the model under test answers) or the
    system outputs (a predictions file); a reader must not have to guess which. Each
    benchmark says it in its own words (``Benchmark.describe``)."""
    context = resolved.get("context", {})
    options = context.get("options", resolved.get("options", {}))
    default = (context.get("default_model") or {}).get("spec")

    def model(role: str) -> str | None:
        return spec_of(context.get("models", {}).get(role)) or default

    facts = RunFacts(data=resolved.get("data"), options=options, model=model)
    if bench.describe is not None:
        return bench.describe(facts)
    if facts.predictions:
        return f"the outputs in `{facts.predictions}` (for the records in `{facts.data}`)"
    return f"the records in `{facts.data}`"


def citation(bench: Benchmark) -> str:
    """`` (paper)`` after the benchmark name, without doubled parentheses; empty without a paper."""
    paper = bench.paper.strip().strip("()").strip()
    return f" ({paper})" if paper else ""


def role_rows(
    bench: Benchmark, resolved: dict[str, Any], per_agent: dict[str, dict[str, Any]], rows: Sequence[dict[str, Any]] = ()
) -> list[str]:
    """``| role | agent | model(s) called |`` for each role of the benchmark.

    Why the rows: an agent given by import path records its calls under the name it chose
    (``my_package.strict_judge``), which only the calls' ``role`` ties to its role."""
    chosen = resolved.get("context", {}).get("agents", {})
    by_role = _agents_by_role(rows)
    table = []
    for role, default in bench.roles.items():
        agent = chosen.get(role, default)
        stems = {agent, default, f"{bench.name}.{role}"} | by_role.get(role, set())  # calls are recorded under such names
        models = sorted({m for name, a in per_agent.items() if _recorded_as(name, stems) for m in a["models"]})
        table.append([role, code(agent, table=True), ", ".join(code(m, table=True) for m in models) or "no call recorded"])
    return markdown_table(["role", "agent", "model(s) called"], table, "lll")


def _agents_by_role(rows: Sequence[dict[str, Any]]) -> dict[str, set[str]]:
    """role -> the agent names its recorded calls carry (``results.jsonl``'s ``calls``)."""
    out: dict[str, set[str]] = {}
    for r in rows:
        for c in (r.get("result") or {}).get("calls", []) if isinstance(r.get("result"), dict) else []:
            if isinstance(c, dict) and c.get("role") and c.get("agent"):
                out.setdefault(str(c["role"]), set()).add(str(c["agent"]))
    return out


def _recorded_as(name: str, stems: set[str]) -> bool:
    """``kgds.summarizer.ebs`` and ``mmrc.judge_ar`` are calls of ``kgds.summarizer`` and ``mmrc.judge``."""
    return any(name == stem or name.startswith((stem + ".", stem + "_")) for stem in stems)


SYSTEM_FAILURE_SHARE = 0.5  # above this share of cut-off/unreadable system outputs, the run says so first


def system_outputs(bench: Benchmark, resolved: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """How many outputs of the system under test came back cut off or unreadable.

    Why: when the system fails almost everywhere every score is 0 or n/a for a reason that
    has nothing to do with the judges; the reader must learn that before the tables."""
    if not bench.system_roles:
        return None
    chosen = resolved.get("context", {}).get("agents", {})
    stems = set()
    for role in bench.system_roles:
        default = bench.roles.get(role, f"{bench.name}.{role}")
        stems |= {chosen.get(role, default), default, f"{bench.name}.{role}"}
    calls = [
        c
        for r in rows
        if isinstance(r.get("result"), dict)
        for c in r["result"].get("calls", [])
        if isinstance(c, dict) and _recorded_as(str(c.get("agent", "")), stems)
    ]
    if not calls:
        return None
    statuses = [c.get("status") for c in calls]
    info: dict[str, Any] = {
        "what": bench.system_output,
        "agents": sorted({str(c["agent"]) for c in calls}),
        "outputs": len(calls),
        "truncated": statuses.count("truncated"),
        "unparsed": statuses.count("unparsed"),
    }
    bad = info["truncated"] + info["unparsed"]
    info["warning"] = (
        f"{bad} of {len(calls)} {info['what']} of the system under test ({', '.join(info['agents'])}) were system "
        f"failures ({info['truncated']} cut off at the token limit, {info['unparsed']} unreadable), so the scores "
        "mostly measure those failures; give that role more max_tokens or structured_output: true"
        if bad and bad >= SYSTEM_FAILURE_SHARE * len(calls)
        else None
    )
    return info


def batch_line(batches: dict[str, Any] | None) -> list[str]:
    """``- batches: ...``: which models ran through provider batch APIs, in how many rounds,
    and where their batch rate comes from (a reader comparing costs must know)."""
    if not batches:
        return []
    models = batches.get("models") or {}
    rates = sorted({str(m.get("rate")) for m in models.values()})
    how = "would run" if batches.get("estimated") else "ran"
    return [
        f"- batches: {', '.join(code(name) for name in sorted(models))} {how} as provider batches in "
        f"{batches.get('rounds', 0)} round(s), priced at batch rates: {'; '.join(rates)}"
    ]


def header(bench: Benchmark, resolved: dict[str, Any], usage: dict[str, Any], rows: Sequence[dict[str, Any]] = ()) -> list[str]:
    """The report lines that follow the run facts: what was evaluated, roles, glossary."""
    lines = [f"- evaluated: {evaluated(bench, resolved)}", ""]
    if bench.roles:
        lines += [*role_rows(bench, resolved, usage.get("per_agent", {}), rows), ""]
    terms = bench.glossary
    if terms:
        lines += ["Abbreviations: " + "; ".join(f"{code} = {name}" for code, name in terms.items()) + ".", ""]
    return lines


def provenance_lines(provenance: dict[str, Any]) -> list[str]:
    """Which code ran, when, which endpoints answered under which model names, which templates.

    Why: a local server answering under ``openai:gpt-4o-mini`` must not read as OpenAI;
    the endpoints and the model names shown are those of the recorded calls."""
    lines = []
    if provenance.get("dialeval"):  # runs written before provenance was recorded have none
        commit = provenance.get("git_commit")
        when = f"{provenance.get('first_started') or provenance.get('started')} to {provenance.get('finished') or 'unfinished'}"
        if provenance.get("first_started") and provenance.get("first_started") != provenance.get("started"):
            when += f" (resumed {provenance['started']})"
        modified = ", with changes not committed" if provenance.get("git_modified") else ""
        lines.append(f"- run: dialeval {provenance['dialeval']}" + (f" (git {commit[:12]}{modified})" if commit else "") + f", {when} UTC")
        mixed = mixed_code_warning(provenance)
        if mixed:
            lines.append(f"- caution: {mixed}")
    for model, seen in (provenance.get("models") or {}).items():
        if not (seen.get("endpoints") or seen.get("server_models")):
            continue
        where = ", ".join(code(u) for u in seen.get("endpoints", [])) or "a local backend"
        answered = ", ".join(code(m) for m in seen.get("server_models", []))
        lines.append(f"- {code(model)} called at {where}" + (f"; the server answered as {answered}" if answered else ""))
    templates = provenance.get("templates") or {}
    if templates:
        lines.append("- templates: " + "; ".join(f"{key} {code(t.get('sha256', '')[:12])}" for key, t in templates.items())
                     + " (the others are those packaged with this version)")
    lines += [f"- note: {note}" for note in provenance.get("price_notes", [])]
    return lines
