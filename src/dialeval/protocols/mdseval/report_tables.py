"""The MDSEval report's tables, its glossary and the model-free `dialeval metrics mdseval` entry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialeval.models.usage import estimate_text
from dialeval.report.tables import markdown_table, num, row, rule
from dialeval.protocols.mdseval.data import ASPECTS, SHORT
from dialeval.protocols.mdseval.aggregation import LABEL


def _fig(e: dict[str, Any] | None, digits: int = 1) -> str:
    if not e or e.get("value") is None:
        return "n/a"
    text = f"{e['value']:.{digits}f}"
    if e.get("low") is not None:
        text += f" [{e['low']:.{digits}f}, {e['high']:.{digits}f}]"
    return text


def tables(m: dict[str, Any]) -> str:
    seen = ", ".join(f"{k} ({v} dialogues)" for k, v in m.get("judge_input", {}).items()) or "none"
    lines = [f"**Judges saw:** {seen}."]
    if m.get("captioner_input"):
        lines.append("**Image-to-Prompt captioner saw:** " + ", ".join(f"{k} ({v})" for k, v in m["captioner_input"].items()) + ".")
    lines += [
        "",
        f"Dialogues with human scores: {m.get('with_human_scores', 0)}. Figures are over readable judge answers only;"
        " brackets give 95% bootstrap intervals over dialogues.",
    ]
    if m.get("scores"):
        aspects = [a for a in ASPECTS if any(a in t for t in m["scores"].values())]
        head = row(["evaluator", *(SHORT[a] for a in aspects)])
        line = rule("l" + "r" * len(aspects))
        for key, title, digits in (("spearman", "Spearman rho x100 (per dialogue, averaged)", 1), ("mse", "MSE against the human mean", 2)):
            lines += ["", f"{title}:", "", head, line]
            for ev, t in m["scores"].items():
                lines.append(row([LABEL[ev], *(_fig(t.get(a, {}).get(key), digits) for a in aspects)]))
        lines += ["", "What the score figures rest on (scores used / unreadable answers / dialogues where rho is undefined):", "", head, line]
        for ev, t in m["scores"].items():
            cells = [f"{t[a]['scores']} / {t[a]['unreadable']} / {t[a]['spearman']['undefined']}" if a in t else "-" for a in aspects]
            lines.append(row([LABEL[ev], *cells]))
    if m.get("pairwise"):
        p = m["pairwise"]
        lines += [
            "",
            "Pairwise accuracy x100 (every pair asked in both orders; human ties left out):",
            "",
            row(["aspect", "both orders", "original order", "swapped order", "same pick in both orders", "used", "unreadable", "human ties"]),
            rule("lrrrrrrr"),
        ]
        for a, r in p.items():
            cons = "n/a" if r["consistency"] is None else f"{r['consistency']:.1f}% of {r['pairs_both_readable']}"
            lines.append(row([
                SHORT[a], _fig(r["accuracy"]), _fig(r["accuracy_original"]), _fig(r["accuracy_swapped"]), cons,
                r["accuracy"]["n"], r["unreadable"], r["human_ties"],
            ]))
        lines += [
            "",
            "Positional bias: share x100 of answers preferring the summary shown first, against the human ratio:",
            "",
            row(["aspect", "judge, original order", "human, original order", "judge, swapped order", "human, swapped order"]),
            rule("lrrrr"),
        ]
        for a, r in p.items():
            h = r["human_first_share"]
            lines.append(row([
                SHORT[a], _fig(r["first_share"]["original"]), num(h["original"], 1), _fig(r["first_share"]["swapped"]), num(h["swapped"], 1),
            ]))
    if m.get("faithfulness"):
        lines += [
            "",
            "Faithfulness (4 labels; balanced accuracy and macro F1 x100):",
            "",
            row(["level", "BAcc", "F1", "used", "unreadable", "no human label (no majority / undetermined)"]),
            rule("lrrrrr"),
        ]
        for level, r in m["faithfulness"].items():
            lines.append(row([level, _fig(r["balanced_accuracy"]), _fig(r["f1"]), r["n"], r["unreadable"], r["no_human_label"]]))
    u = m.get("usage")
    if u:
        per, est = u["per_dialogue"], u["file_estimate"]
        lines += [
            "",
            f"Cost of the whole file ({u['file_dialogues']} dialogues"
            + (f", extrapolated from {u['dialogues']} judged" if u["extrapolated"] else "")
            + "):",
            "",
            *markdown_table(
                [None, "calls", "input tokens", "output tokens", "cost (USD)"],
                [["per dialogue", f"{per['calls']:.1f}", f"{per['input_tokens']:.0f}", f"{per['output_tokens']:.0f}", estimate_text(u, per["cost_usd"])],
                 ["whole file", f"{est['calls']:.0f}", f"{est['input_tokens']:.0f}", f"{est['output_tokens']:.0f}", estimate_text(u, est["cost_usd"])]],
                "lrrrr",
            ),
        ]
    lines += ["", "Score histograms of each evaluator against the human ratings: `score_histograms.png` in the run folder."]
    return "\n".join(lines)


def metrics_only(paths: list[Path], options: dict[str, Any]) -> str:
    from dialeval.protocols.mdseval.tools import run_tool

    return run_tool(paths, options)


GLOSSARY = {code: aspect for aspect, code in SHORT.items()}
