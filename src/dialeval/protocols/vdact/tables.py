"""The `vdact` report: paper-style Markdown tables with n and every kind of failure beside each mean."""

from __future__ import annotations

from typing import Any

from dialeval.models.usage import estimate_text
from dialeval.report.paired import system_test_lines
from dialeval.report.tables import cell, ci, num, pct, row, rule


def scaled(value: float | None) -> str:
    """A 0-1 score in % with two decimals, as the paper's tables print them."""
    return pct(value, 2, sign="")


def _example_line(metrics: dict[str, Any]) -> list[str]:
    example = metrics.get("example")  # None for judges that show no example
    if example is None:
        return []
    if isinstance(example, list):
        return [f"**Items were judged with different one-shot examples** ({', '.join(example)}): use a new run id per example."]
    if example == "built-in":
        return ["One-shot example: dialeval's built-in, hand-written dialogue (the paper uses a real VDAct dialogue: "
                "option example_path)."]
    return [f"One-shot example: `{example}`."]


def tables(metrics: dict[str, Any]) -> str:
    unreadable = metrics.get("unreadable_rule")
    lines = [f"Judge: `{metrics['judge']}`, video summary: `{metrics['summary']}`."]
    lines += _example_line(metrics)
    if unreadable:
        lines.append(f"Headline mean: an unreadable reply (unparsed or truncated) counts as {unreadable['score']}, following the "
                     f"authors' code: {unreadable['source']}. The valid-only mean leaves those turns out.")
    else:
        lines.append("Means leave the judge's failures out (no released rule scores them); they are counted beside.")
    lines.append("A turn the system left unanswered is the system's failure: scored lowest without asking the judge.")
    for dim, (low, high) in metrics["dimensions"].items():
        lines += [
            "",
            f"**{dim}** ({low}-{high}; scaled = (s - {low}) / {high - low}, in %; 95% CI: bootstrap interval over turns, n/a under two):",
            "",
            row(["system", "dialogues", "turns", "judged", "no answer", "unparsed", "truncated", "error", "n", "mean", "scaled (%)",
                 "95% CI (%)", "valid n", "valid mean", "valid scaled (%)"]),
            rule("l" + "r" * 14),
        ]
        for name, s in metrics["systems"].items():
            d = s["dimensions"][dim]
            lines.append(row([
                cell(name), s["dialogues"], *(d[k] for k in ("turns", "judged", "no_answer", "unparsed", "truncated", "error", "n")),
                num(d["mean"]), scaled(d["mean_scaled"]), ci(d.get("ci_scaled"), 2, scale=100), d["valid_n"], num(d["valid_mean"]),
                scaled(d["valid_mean_scaled"]),
            ]))
    lines += system_test_lines(metrics.get("system_tests") or [], unit="turn", scores="headline scores")
    lines += [
        "",
        "Cost per dialogue and for the whole prediction file (extrapolated from the judged dialogues when a run is limited):",
        "",
        row(["system", "judged", "calls / dialogue", "input tok / dialogue", "output tok / dialogue", "file: dialogues", "file: calls",
             "file: input tok", "file: output tok", "file: cost (USD)"]),
        rule("l" + "r" * 9),
    ]
    for name, s in metrics["systems"].items():
        u = s["usage"]
        per, est = u["per_dialogue"], u["file_estimate"]
        cost = estimate_text(u, est["cost_usd"])
        lines.append(row([
            cell(name), u["judged_dialogues"], f"{per['calls']:.1f}", f"{per['input_tokens']:.0f}", f"{per['output_tokens']:.0f}",
            u["file_dialogues"], f"{est['calls']:.0f}", f"{est['input_tokens']:.0f}", f"{est['output_tokens']:.0f}", cost,
        ]))
    first = next(iter(metrics["dimensions"]))
    lines += ["", f"Scores by question type ({first}, headline; keyword rules; `others` = all turns not of that type), scaled in %:", ""]
    lines += [row(["system", "type", "n", "failures", "scaled (%)", "95% CI (%)", "others n", "others failures", "others scaled (%)"]),
              rule("llrrrrrrr")]
    for name, s in metrics["systems"].items():
        for kind, b in s["question_types"].items():
            lines.append(row([
                cell(name), kind, b["type"]["n"], _failures(b["type"]), scaled(b["type"]["mean_scaled"]), ci(b["type"].get("ci_scaled"), 2, scale=100),
                b["others"]["n"], _failures(b["others"]), scaled(b["others"]["mean_scaled"]),
            ]))
    humans = [(n, d, h) for n, s in metrics["systems"].items() for d, h in s["human"].items()]
    if humans:
        lines += [
            "",
            "Agreement with human majority votes (Kendall tau-b; turns where annotators all disagree are excluded). "
            "The permutation test compares the judge with the other metric of highest tau, as the paper does:",
            "",
            row(["system", "dimension", "n", "excluded (no majority)", "excluded (judge failure)", "judge tau-b", "valid-only tau-b (n)",
                 "best other metric", "its tau-b", "difference", "permutation p"]),
            rule("llrrrrrlrrr"),
        ]
        for name, dim, h in humans:
            v = h["valid_only"]
            lines.append(row([
                cell(name), dim, h["n"], h["excluded_no_majority"], h["excluded_judge_failure"], num(h["kendall_tau_b"], 4),
                f"{num(v['kendall_tau_b'], 4)} ({v['n']})", h["best_other"] or "n/a", num(h.get("best_other_tau"), 4),
                num(h.get("difference"), 4, signed=True), num(h.get("vs_best_p_value"), 4),
            ]))
        others = sorted({m for _, _, h in humans for m in h["other_metrics"]})
        lines += ["", row(["system", "dimension", *others]), rule("ll" + "r" * len(others))]
        for name, dim, h in humans:
            lines.append(row([cell(name), dim, *(num(h["other_metrics"].get(m), 4) for m in others)]))
        missing = {m: r for _, _, h in humans for m, r in h["unavailable"].items()}
        lines += [""] if missing else []
        for m, reason in missing.items():
            lines.append(f"{m} unavailable: {reason}.")
    return "\n".join(lines)


def _failures(summary: dict[str, Any]) -> str:
    return ", ".join(f"{k} {summary[k]}" for k in ("no_answer", "unparsed", "truncated", "error") if summary[k]) or "0"
