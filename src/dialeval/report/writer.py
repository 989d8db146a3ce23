"""Metrics files and the Markdown report of a run, judge reliability included.

Every report says, per agent, how many calls were made and what share came back
unparsed, truncated or failed, and, per scored dimension, the score histogram with a
flag when scores bunch on one value (the score-concentration bias MDSEval reports).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from dialeval.judge_spec import spec_of
from dialeval.report.judges import judge_lines, judge_stages
from dialeval.benchmarks import Benchmark, get_benchmark
from dialeval.metrics.scores import concentration, histogram
from dialeval.report.cautions import FEW_UNITS, few_units, judge_warnings, notices, retries_text
from dialeval.report.header import batch_line, citation, header, provenance_lines, system_outputs
from dialeval.report.tables import cell, code, markdown_table, pct
from dialeval.models.usage import as_written, cost_text, priced_cost, summarize_calls

CONCENTRATION_FLAG = 0.6  # share of one score value above which a dimension is flagged
MAX_FEW = 8  # statistics on too few units named in the report (all are in metrics.json)
KILLED = "the run was stopped before it finished"  # `dialeval report` of a run whose last session never ended


def agent_reliability(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per agent: calls, requests, cache hits, and shares of unparsed/truncated/error."""
    by_agent: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        for call in row.get("usage", []):
            by_agent[call["agent"]].append(call)
    out = {}
    for agent, calls in sorted(by_agent.items()):
        n = len(calls)
        statuses: defaultdict[str, int] = defaultdict(int)
        for c in calls:
            statuses[c["status"]] += 1
        out[agent] = {
            **as_written(summarize_calls(calls)),
            "unparsed": statuses["unparsed"],
            "truncated": statuses["truncated"],
            "error": statuses["error"],
            "unparsed_share": statuses["unparsed"] / n,
            "truncated_share": statuses["truncated"] / n,
            "error_share": statuses["error"] / n,
            "models": sorted({c["model"] for c in calls}),
            "latency_mean_s": _mean([c["latency_s"] for c in calls if c.get("latency_s") is not None]),
        }
    return out


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def score_reliability(bench: Benchmark, records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    for dimension, values in bench.score_dimensions(records).items():
        top, share = concentration(values)
        out[dimension] = {
            "n": len(values),
            "histogram": histogram(values),
            "most_common": top,
            "most_common_share": share,
            "concentrated": bool(values) and share >= CONCENTRATION_FLAG,
        }
    return out


def finish_run(
    run_dir: Path,
    bench: Benchmark,
    rows: list[dict[str, Any]],
    resolved: dict[str, Any],
    *,
    expected: int | None = None,
    stopped: str | None = None,
    decision: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Aggregate the finished items, then write ``metrics.json``, ``usage.json`` and
    ``report.md``. Failed items are counted, described and left out of every metric;
    ``expected`` items minus the rows are those a stopped run never started."""
    from dialeval.run.batch_state import read_rounds
    from dialeval.run.folder import failure_summary

    records = [r["result"] for r in rows if r["status"] == "ok"]
    options = resolved.get("options", {})
    metrics = bench.aggregate(records, options) if records else {}
    calls = [c for r in rows for c in r.get("usage", [])]
    dry_run = any(c.get("estimated") for c in calls)
    usage = {"total": as_written(summarize_calls(calls)), "per_agent": agent_reliability(rows)}
    judges = judge_stages(records)  # issue 49: ensembles and cascades, the share escalated and each stage's calls
    if judges:
        usage["judges"] = judges
    run_info = {
        "benchmark": bench.name,
        "items": len(rows),
        "finished": len(records),
        "failed": sum(1 for r in rows if r["status"] != "ok"),
        "not_evaluated": max(0, (expected or len(rows)) - len(rows)),
        "stopped": stopped,
        **({"decision": decision} if decision else {}),  # stop_when_decided: the decision, units used, calls saved
        "failures": failure_summary(rows, expected or len(rows)) or None,
        "dry_run": dry_run,
        "usage": usage["total"],
        "scores": score_reliability(bench, records),
        "system_outputs": system_outputs(bench, resolved, rows),
    }
    run_info.update(judgeable(run_info, rows, resolved, units_measured(bench, records)))
    run_info.update(_provenance_and_cautions(bench, metrics, usage, calls, resolved, run_info))
    drawn = records and not dry_run and resolved.get("figures", True)  # a run folder from before the setting draws them
    run_info["figures"] = _figures(run_dir, bench, records, metrics, options) if drawn else {}
    batches = read_rounds(run_dir)
    if batches:  # only batch runs say it: other runs' metrics.json stay as they were
        run_info["batches"] = batches
    metrics = {**metrics, "run": run_info}
    from dialeval.secrets import scrub  # a key echoed in an error message stays out

    (run_dir / "metrics.json").write_text(scrub(json.dumps(metrics, indent=2, default=str)))
    (run_dir / "usage.json").write_text(scrub(json.dumps(usage, indent=2)))
    (run_dir / "report.md").write_text(scrub(render_report(bench, metrics, usage, rows, resolved)))
    if bench.after_run is not None and records:
        bench.after_run(run_dir, records, metrics)
    return metrics


def units_measured(bench: Benchmark, records: list[dict[str, Any]]) -> int:
    """Units with a score in any dimension (a bot's failure scores; an unreadable verdict does not)."""
    if bench.item_scores is None:
        return len(records)
    return len({unit for units in bench.item_scores(records).values() for unit in units}) if records else 0


def judgeable(run_info: dict[str, Any], rows: list[dict[str, Any]], resolved: dict[str, Any], measured: int) -> dict[str, Any]:
    """``units_measured``, ``complete`` (every item settled, none failed or left out, a unit
    measured, not a dry run), the reasons it is not (``incomplete``), and ``unit_hashes`` (item
    id -> content hash of what it asked): what the gate and the exit code check (docs/gate.md)."""
    reasons = []
    if run_info["failed"]:
        reasons.append(f"{run_info['failed']} of {run_info['items']} items failed")
    if run_info["not_evaluated"]:
        reasons.append(f"{run_info['not_evaluated']} items not evaluated" + (f" ({run_info['stopped']})" if run_info["stopped"] else ""))
    if run_info["dry_run"]:
        reasons.append("a dry run: its scores are placeholders")
    if not run_info["finished"]:
        reasons.append("no item finished")
    elif not measured and not run_info["dry_run"]:
        reasons.append("no unit was measured: every verdict was unreadable or left out")
    if (resolved.get("provenance") or {}).get("finished", "") is None:  # `dialeval report` of a killed run
        reasons.append("its last session never finished (killed or still running): re-run the same command")
    hashes = {str(r["id"]): r["unit_hash"] for r in rows if r.get("unit_hash")}
    return {"units_measured": measured, "complete": not reasons, "incomplete": reasons, "unit_hashes": hashes}


def _provenance_and_cautions(
    bench: Benchmark, metrics: dict[str, Any], usage: dict[str, Any], calls: list[dict[str, Any]],
    resolved: dict[str, Any], run_info: dict[str, Any],
) -> dict[str, Any]:
    """``provenance`` (code, times, endpoints and server model names, templates), ``warnings``
    (judges past the unreadable threshold) and ``few_units`` (statistics on too few units)."""
    from dialeval.run.provenance import foreign_price_notes, served_models

    served = served_models(calls)
    cost_by_model: defaultdict[str, float] = defaultdict(float)
    for c in calls:
        cost_by_model[str(c.get("model"))] += float(c.get("cost") or 0.0)
    provenance = {
        **(resolved.get("provenance") or {}),
        "templates": (resolved.get("identity") or {}).get("templates") or {},
        "models": served,
        "price_notes": foreign_price_notes(served, cost_by_model),
    }
    system_agents = set((run_info.get("system_outputs") or {}).get("agents", []))
    return {
        "provenance": provenance,
        "warnings": judge_warnings(usage["per_agent"], system_agents),
        "few_units": few_units(metrics),
    }


def _figures(
    run_dir: Path, bench: Benchmark, records: list[dict[str, Any]], metrics: dict[str, Any], options: dict[str, Any]
) -> dict[str, str]:
    """Draw the score histograms and the benchmark's own figures; title -> ``plots/<name>.png``."""
    from dialeval.figures import Figure
    from dialeval.report.plots import draw, score_histograms

    figures: list[Figure] = [*score_histograms(records, bench.score_dimensions, bench.scales)]
    if bench.figures is not None:
        figures += bench.figures(records, metrics, options)
    return draw(figures, run_dir)


def render_report(
    bench: Benchmark, metrics: dict[str, Any], usage: dict[str, Any], rows: list[dict[str, Any]], resolved: dict[str, Any]
) -> str:
    run = metrics["run"]
    ctx = resolved.get("context", {})
    lines = [f"# {bench.title}", ""]
    killed = KILLED in (run.get("stopped") or "") or any("never finished" in str(r) for r in run.get("incomplete") or [])
    if run.get("failed") or run.get("not_evaluated") or killed:
        left = run.get("not_evaluated") or 0
        lines += [
            f"> **Incomplete run.** {run.get('failures') or ''}{' ' if run.get('failures') else ''}"
            + (f"{left} of {run['items'] + left} items not evaluated ({run.get('stopped') or 'the run stopped'}). " if left else "")
            + (f"Stopped: {run['stopped']}. " if run.get("stopped") and not left and not killed else "")
            + ("Its last session never finished (killed or still running). " if killed and not left else "")
            + "Failed and unevaluated items are left out of every number below; "
            "re-run the same command to retry them (see *Failed items*).",
            "",
        ]
    system = run.get("system_outputs") or {}
    if system.get("warning"):
        lines += [f"> **Mostly system failures.** {system['warning'][0].upper()}{system['warning'][1:]}.", ""]
    if run["dry_run"]:
        lines += [
            "> **Dry run.** No model was called: scores below are placeholders, token counts",
            "> and costs are estimates of what a real run would send.",
            "",
        ]
    lines += notices(bench, resolved, metrics)
    for warning in run.get("warnings") or []:
        lines += [f"> **Unreadable judge answers.** {warning[0].upper()}{warning[1:]}.", ""]
    lines += [
        f"- benchmark: `{bench.name}`{citation(bench)}",
        f"- data: `{resolved.get('data')}`",
        f"- default model: `{ctx.get('default_model', {}).get('spec')}`"
        + "".join(f"; {role}: `{spec_of(m)}`" for role, m in ctx.get("models", {}).items()),
        f"- items: {run['items']} evaluated, {run['finished']} finished, {run['failed']} failed"
        + (f", {run['not_evaluated']} not evaluated (run stopped)" if run.get("not_evaluated") else ""),
        *provenance_lines(run.get("provenance") or {}),
        *batch_line(run.get("batches")),
        *header(bench, resolved, usage, rows),
        "## Results",
        "",
        bench.tables(metrics) if run["finished"] else "_No item finished._",
        "",
    ]
    if run.get("few_units"):
        shown = run["few_units"][:MAX_FEW]
        more = len(run["few_units"]) - len(shown)
        lines += [f"Too few units to read (correlations, p-values and intervals on fewer than {FEW_UNITS}): "
                  + "; ".join(code(f) for f in shown) + (f"; and {more} more in metrics.json" if more else "") + ".", ""]
    if run.get("figures"):
        lines += ["## Figures", ""]
        for title, path in run["figures"].items():  # a paragraph each: renderers put adjacent images on one line
            lines += [f"![{cell(title)}]({path})", ""]
    lines += ["## Cost", ""]
    t = usage["total"]
    uncached = cost_text({**t, "cost_usd": t.get("cost_without_prompt_cache_usd", t["cost_usd"])})
    lines += markdown_table(
        ["calls", "requests sent", "response-cache hits", "input tokens", "of which prompt-cached", "output tokens",
         "cost (USD)", "cost without prompt caching (USD)"],
        [[t["calls"], t["requests"], t["cached"], t["input_tokens"], t.get("cached_input_tokens", 0),
          t["output_tokens"], cost_text(t), uncached]],
        "rrrrrrrr",
    )
    if t.get("cached_input_tokens"):
        source = "estimated with OpenAI's prefix rule (dry run)" if metrics["run"]["dry_run"] else "as the provider reported"
        lines += ["", f"Prompt-cached input tokens are billed at the provider's cached rate ({source})."]
    if t.get("unpriced_calls"):
        lines += [
            "",
            f"Cost unknown: no price is known for {', '.join(f'`{m}`' for m in t['unpriced_models'])} "
            f"({t['unpriced_calls']} calls); set `price` or `price_as` for that model. "
            f"Priced calls alone cost {priced_cost(t):.4f} USD.",
        ]
    if t.get("deduplicated"):
        shared = "1 request was" if t["deduplicated"] == 1 else f"{t['deduplicated']} requests were"
        lines += ["", f"Identical requests of this run sent once and shared: {shared} not sent and took the first "
                      "one's answer (deduplicated: no cost). Calls count each agent call once; requests sent, "
                      "response-cache hits and shared requests count its attempts, retries included."]
    retried = retries_text(t)
    if retried:
        lines += ["", f"Requests sent again after the server refused or failed them: {retried}."]
    lines += _agent_costs(usage["per_agent"])
    lines += judge_lines(usage.get("judges") or {})
    lines += ["", "## Judge reliability", ""]
    system_agents = set((run.get("system_outputs") or {}).get("agents", []))
    lines += markdown_table(
        ["agent", "model", "calls", "unparsed", "truncated", "errors"],
        [
            [cell(f"{agent} (system under test)" if agent in system_agents else agent), cell(", ".join(a["models"])),
             a["calls"], *(f"{a[k]} ({pct(a[k + '_share'])})" for k in ("unparsed", "truncated", "error"))]
            for agent, a in usage["per_agent"].items()
        ],
        "llrrrr",
    )
    scores = run["scores"]
    if scores and run.get("dry_run"):
        lines += ["", "A dry run's scores are placeholders: their histograms say nothing of a judge."]
    elif scores:
        lines += [""] + markdown_table(
            ["dimension", "n", "histogram", "most common", "flag"],
            [
                [cell(dim), s["n"], ", ".join(f"{k}: {v}" for k, v in s["histogram"].items()) or "-", s["most_common"] or "-",
                 f"scores bunch on {s['most_common']} ({pct(s['most_common_share'])})" if s["concentrated"] else ""]
                for dim, s in scores.items()
            ],
            "lrlll",
        )
    unparsed = [
        (r["id"], c)
        for r in rows
        if isinstance(r.get("result"), dict)
        for c in r["result"].get("calls", [])
        if c.get("status") in ("unparsed", "truncated", "error")
    ]
    if unparsed:
        lines += ["", f"### Answers that could not be used ({len(unparsed)})", ""]
        for item_id, c in unparsed[:10]:
            raw = (c.get("raw") or "").replace("\n", " ")[:200]
            lines.append(f"- {code(item_id)} {cell(c['agent'])}: **{c['status']}** ({cell(c.get('reason'))}): {code(raw)}")
        if len(unparsed) > 10:
            lines.append(f"- ... {len(unparsed) - 10} more in results.jsonl")
    failures = [r for r in rows if r["status"] != "ok"]
    if failures:
        lines += [
            "",
            f"## Failed items ({len(failures)})",
            "",
            "A model call of these items ended `error` (the model did not answer) or the item's",
            "evaluation raised; they count in no metric and a re-run retries them.",
            "",
        ]
        for r in failures[:20]:
            partial = " (partial record kept in results.jsonl)" if r.get("result") else ""
            lines.append(f"- {code(r['id'])}: {cell(r.get('error'))}{partial}")
        if len(failures) > 20:
            lines.append(f"- ... {len(failures) - 20} more in results.jsonl")
    return "\n".join(lines) + "\n"


def _agent_costs(per_agent: dict[str, dict[str, Any]]) -> list[str]:
    """The per-agent cost table (``usage.json``'s ``per_agent``): who spent the tokens and the time."""
    if not per_agent:
        return []
    return ["", "Per agent:", ""] + markdown_table(
        ["agent", "calls", "requests sent", "input tokens", "output tokens", "cost (USD)", "retries (HTTP 429)",
         "mean latency (s)"],
        [[cell(agent), a["calls"], a["requests"], a["input_tokens"], a["output_tokens"], cost_text(a),
          f"{a.get('retries', 0)} ({a.get('rate_limited', 0)})",
          "-" if a.get("latency_mean_s") is None else f"{a['latency_mean_s']:.2f}"]
         for agent, a in per_agent.items()],
        "lrrrrrrr",
    )


def write_report(run_dir: str | Path) -> dict[str, Any]:
    """Recompute metrics and the report of an existing run folder from its files."""
    from dialeval.run.folder import read_results

    run_dir = Path(run_dir)
    config_path = run_dir / "config.json"
    if not config_path.exists():
        raise FileNotFoundError(f"{run_dir} is not a run folder (no config.json)")
    from dialeval.config import ConfigError

    try:
        resolved = json.loads(config_path.read_text(encoding="utf-8"))
        if not isinstance(resolved, dict) or "benchmark" not in resolved:
            raise ValueError("not a run config (no 'benchmark')")
    except (ValueError, UnicodeDecodeError) as err:
        raise ConfigError(f"{config_path}: not a readable run config ({err})") from None
    bench = get_benchmark(resolved["benchmark"])
    rows = read_results(run_dir)
    if not rows:  # an empty report would read like a run whose items all vanished
        raise ConfigError(f"{run_dir}: no results yet: this run never evaluated an item (run it with `dialeval run`)")
    recorded = resolved.get("provenance") or {}
    if recorded.get("finished", "") is None and isinstance(recorded.get("items"), int):  # killed: its items were counted at start
        return finish_run(run_dir, bench, rows, resolved, expected=recorded["items"], stopped=KILLED)
    return finish_run(run_dir, bench, rows, resolved)
