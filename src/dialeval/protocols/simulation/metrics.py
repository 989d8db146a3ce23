"""Pure aggregation of simulated conversations: outcomes per scenario, pass^k / pass@k, stop reasons, audit findings.

Bot failures count against the bot (a trial that did not succeed); simulator failures
(an audit finding, an unreadable simulated turn) and judge failures (a success criterion
without a readable verdict) are left out of pass^k and counted beside it: re-simulate.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from dialeval.metrics.passk import pass_at_k, pass_hat_k, suite_pass_k
from dialeval.report.tables import cell, markdown_table, num

VALID = ("success", "failure", "bot_failure")


def per_scenario(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """scenario -> trials, valid trials, successes, outcome counts, stop reasons."""
    out: dict[str, dict[str, Any]] = {}
    for r in records:
        row = out.setdefault(r["scenario"], {"trials": 0, "valid": 0, "successes": 0, "outcomes": Counter(), "stop_reasons": Counter()})
        row["trials"] += 1
        row["valid"] += r["outcome"] in VALID
        row["successes"] += r["outcome"] == "success"
        row["outcomes"][r["outcome"]] += 1
        row["stop_reasons"][r["stop_reason"]] += 1
    return {s: {**row, "outcomes": dict(row["outcomes"]), "stop_reasons": dict(row["stop_reasons"])} for s, row in out.items()}


def audited(record: dict[str, Any]) -> set[int]:
    """The simulated turns some audit read: code checks and per-turn audits name their turn,
    the conversation audit the turns it reviewed."""
    out: set[int] = set()
    for a in record.get("audits", []):
        out |= set(a.get("turns") or []) if a.get("turn") is None else {a["turn"]}
    return out


def aggregate(records: list[dict[str, Any]], k: int, bot: str) -> dict[str, Any]:
    scenarios = per_scenario(records)
    for row in scenarios.values():
        n, c = row["valid"], row["successes"]
        row["pass_hat_k"] = {str(j): pass_hat_k(n, c, j) for j in range(1, k + 1)}
        row["pass_at_k"] = {str(j): pass_at_k(n, c, j) for j in range(1, k + 1)}
    tasks = [(row["valid"], row["successes"]) for row in scenarios.values()]
    findings = Counter(f["rule"] for r in records for a in r.get("audits", []) for f in a.get("findings", []))
    criteria: dict[str, Counter[str]] = {}
    for r in records:
        for c in r.get("criteria", []):
            criteria.setdefault(c["criterion"], Counter())[str(c["verdict"]) if c["verdict"] is not None else c["status"]] += 1
    return {
        "bot": bot,
        "k": k,
        "conversations": len(records),
        "outcomes": dict(Counter(r["outcome"] for r in records)),
        "stop_reasons": dict(Counter(r["stop_reason"] for r in records)),
        "bot_failures": sum(1 for r in records if r["outcome"] == "bot_failure"),
        "simulator_failures": sum(1 for r in records if r["outcome"] == "simulator_failure"),
        "judge_failures": sum(1 for r in records if r["outcome"] == "judge_failure"),
        "resimulated": sum(len(r.get("resimulated", [])) for r in records),
        "resent_after_interruption": sum(r.get("resent_after_interruption", 0) for r in records),
        "audit_findings": dict(findings),
        "audited_turns": sum(len(audited(r)) for r in records),
        "suite": {str(j): suite_pass_k(tasks, j) for j in range(1, k + 1)},
        "per_scenario": scenarios,
        "success_criteria": {name: dict(counts) for name, counts in criteria.items()},
    }


def _interval(ci: list[float] | None, reason: str | None = None) -> str:
    """``[low, high]``, or ``n/a`` with the reason the data gave no interval."""
    return f"[{num(ci[0])}, {num(ci[1])}]" if ci else cell(f"n/a ({reason})" if reason else "n/a")


def tables(metrics: dict[str, Any]) -> str:
    """Markdown: pass^k and pass@k, outcomes with bot and simulator failures apart, per scenario."""
    lines = [
        f"Bot under test: {cell(metrics.get('bot', '?'))}. {metrics.get('conversations', 0)} simulated conversations, "
        f"k = {metrics.get('k')} per scenario. **Bot failures: {metrics.get('bot_failures', 0)}** (counted against the bot); "
        f"**simulator failures: {metrics.get('simulator_failures', 0)}** (audit findings or unreadable simulated turns: "
        f"left out of pass^k, re-simulate them); judge failures: {metrics.get('judge_failures', 0)}; "
        f"spoiled conversations simulated again: {metrics.get('resimulated', 0)}; bot turns sent again after an "
        f"interruption (with their idempotency key): {metrics.get('resent_after_interruption', 0)}.",
        "",
    ]
    suite = [[j, row["tasks"], row["short"], num(row["pass_hat_k"]), _interval(row["pass_hat_k_ci"], row.get("pass_hat_k_ci_reason")),
              num(row["pass_at_k"]), _interval(row["pass_at_k_ci"], row.get("pass_at_k_ci_reason"))] for j, row in metrics.get("suite", {}).items()]
    lines += markdown_table(["k", "scenarios", "too few valid trials", "pass^k", "95% CI", "pass@k", "95% CI"], suite, "rrrrlrl")
    k = str(metrics.get("k"))
    rows = [
        [cell(name), row["trials"], row["valid"], row["successes"], num(row["pass_hat_k"].get(k)), num(row["pass_at_k"].get(k)),
         cell(", ".join(f"{o}: {n}" for o, n in sorted(row["outcomes"].items()))),
         cell(", ".join(f"{o}: {n}" for o, n in sorted(row["stop_reasons"].items())))]
        for name, row in metrics.get("per_scenario", {}).items()
    ]
    lines += ["", *markdown_table(["scenario", "trials", "valid", "successes", f"pass^{k}", f"pass@{k}", "outcomes", "stop reasons"], rows, "lrrrrrll")]
    if metrics.get("audit_findings"):
        found = [[cell(rule), n] for rule, n in sorted(metrics["audit_findings"].items())]
        lines += ["", f"Audit findings over {metrics.get('audited_turns', 0)} audited simulated turns:", "",
                  *markdown_table(["rule broken", "turns"], found, "lr")]
    if metrics.get("success_criteria"):
        judged = [[cell(name), cell(", ".join(f"{v}: {n}" for v, n in sorted(counts.items())))] for name, counts in metrics["success_criteria"].items()]
        lines += ["", *markdown_table(["success criterion", "verdicts"], judged, "ll")]
    return "\n".join(lines)
