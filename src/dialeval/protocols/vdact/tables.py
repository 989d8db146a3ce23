"""The `vdact` report: paper-style Markdown tables with n and every kind of failure beside each mean."""

from __future__ import annotations

from typing import Any


def num(value: float | None, fmt: str = "{:.2f}") -> str:
    return "n/a" if value is None else fmt.format(value)


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}"


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
    rule = metrics.get("unreadable_rule")
    lines = [f"Judge: `{metrics['judge']}`, video summary: `{metrics['summary']}`."]
    lines += _example_line(metrics)
    if rule:
        lines.append(f"Headline mean: an unreadable reply (unparsed or truncated) counts as {rule['score']}, following the "
                     f"authors' code: {rule['source']}. The valid-only mean leaves those turns out.")
    else:
        lines.append("Means leave the judge's failures out (no released rule scores them); they are counted beside.")
    lines.append("A turn the system left unanswered is the system's failure: scored lowest without asking the judge.")
    for dim, (low, high) in metrics["dimensions"].items():
        lines += [
            "",
            f"**{dim}** ({low}-{high}; scaled = (s - {low}) / {high - low}, in %):",
            "",
            "| system | dialogues | turns | judged | no answer | unparsed | truncated | error | n | mean | scaled (%) | valid n | valid mean | valid scaled (%) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, s in metrics["systems"].items():
            d = s["dimensions"][dim]
            lines.append(
                f"| {name} | {s['dialogues']} | {d['turns']} | {d['judged']} | {d['no_answer']} | {d['unparsed']} | {d['truncated']} "
                f"| {d['error']} | {d['n']} | {num(d['mean'])} | {pct(d['mean_scaled'])} | {d['valid_n']} "
                f"| {num(d['valid_mean'])} | {pct(d['valid_mean_scaled'])} |"
            )
    lines += [
        "",
        "Cost per dialogue and for the whole prediction file (extrapolated from the judged dialogues when a run is limited):",
        "",
        "| system | judged | calls / dialogue | input tok / dialogue | output tok / dialogue | file: dialogues | file: calls | file: input tok | file: output tok | file: cost (USD) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in metrics["systems"].items():
        u = s["usage"]
        per, est = u["per_dialogue"], u["file_estimate"]
        cost = f"{est['cost_usd']:.4f}" if u.get("cost_known", True) else "unknown"
        lines.append(
            f"| {name} | {u['judged_dialogues']} | {per['calls']:.1f} | {per['input_tokens']:.0f} | {per['output_tokens']:.0f} "
            f"| {u['file_dialogues']} | {est['calls']:.0f} | {est['input_tokens']:.0f} | {est['output_tokens']:.0f} | {cost} |"
        )
    first = next(iter(metrics["dimensions"]))
    lines += ["", f"Scores by question type ({first}, headline; keyword rules; `others` = all turns not of that type), scaled in %:", ""]
    lines += ["| system | type | n | failures | scaled (%) | others n | others failures | others scaled (%) |",
              "|---|---|---:|---:|---:|---:|---:|---:|"]
    for name, s in metrics["systems"].items():
        for kind, b in s["question_types"].items():
            lines.append(
                f"| {name} | {kind} | {b['type']['n']} | {_failures(b['type'])} | {pct(b['type']['mean_scaled'])} "
                f"| {b['others']['n']} | {_failures(b['others'])} | {pct(b['others']['mean_scaled'])} |"
            )
    humans = [(n, d, h) for n, s in metrics["systems"].items() for d, h in s["human"].items()]
    if humans:
        lines += [
            "",
            "Agreement with human majority votes (Kendall tau-b; turns where annotators all disagree are excluded). "
            "The permutation test compares the judge with the other metric of highest tau, as the paper does:",
            "",
            "| system | dimension | n | excluded (no majority) | excluded (judge failure) | judge tau-b | valid-only tau-b (n) "
            "| best other metric | its tau-b | difference | permutation p |",
            "|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|",
        ]
        for name, dim, h in humans:
            v = h["valid_only"]
            lines.append(
                f"| {name} | {dim} | {h['n']} | {h['excluded_no_majority']} | {h['excluded_judge_failure']} "
                f"| {num(h['kendall_tau_b'], '{:.4f}')} | {num(v['kendall_tau_b'], '{:.4f}')} ({v['n']}) "
                f"| {h['best_other'] or 'n/a'} | {num(h.get('best_other_tau'), '{:.4f}')} "
                f"| {num(h.get('difference'), '{:+.4f}')} | {num(h.get('vs_best_p_value'), '{:.4f}')} |"
            )
        others = sorted({m for _, _, h in humans for m in h["other_metrics"]})
        lines += ["", "| system | dimension | " + " | ".join(others) + " |", "|---|---|" + "---:|" * len(others)]
        for name, dim, h in humans:
            lines.append(f"| {name} | {dim} | " + " | ".join(num(h["other_metrics"].get(m), "{:.4f}") for m in others) + " |")
        missing = {m: r for _, _, h in humans for m, r in h["unavailable"].items()}
        lines += [""] if missing else []
        for m, reason in missing.items():
            lines.append(f"{m} unavailable: {reason}.")
    return "\n".join(lines)


def _failures(summary: dict[str, Any]) -> str:
    return ", ".join(f"{k} {summary[k]}" for k in ("no_answer", "unparsed", "truncated", "error") if summary[k]) or "0"
