"""The KGDS report's tables (the paper's Table 1 and Table 2, feedback, echoes) and `dialeval metrics kgds`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from dialeval.protocols.kgds.common import SYSTEM_GENERATION
from dialeval.config import ConfigError
from dialeval.report.tables import cell, ci, num, pct, row, rule
from dialeval.protocols.kgds.data import load_kgds, load_predictions
from dialeval.protocols.kgds.metrics import ERROR_TYPES, bsp_scores, macro
from dialeval.protocols.kgds.aggregation import BACKGROUND_METRIC, PATTERN_TITLES


def _pct(figure: dict[str, Any] | float | None) -> str:
    """A macro average (a figure's mean, or a bare share) in % without the sign."""
    return pct(figure["mean"] if isinstance(figure, dict) else figure, 2, sign="")


def _ci(figure: dict[str, Any]) -> str:
    """A macro average's 95% bootstrap interval over samples, in %."""
    return ci(figure.get("ci"), 2, scale=100)


def _delta(value: float | None) -> str:
    return "" if value is None else f" ({num(100 * value, 2, signed=True)})"


def _counts(cell: dict[str, Any]) -> str:
    """n and the failures of each kind beside a mean; rare kinds only when present."""
    text = f"n={cell['n']} sys={cell['system_failed']} unp={cell['judge_unparsed']} trunc={cell['judge_truncated']}"
    extra = {"judge_error": "err", "undefined": "undef", "not_given": "not given"}
    return text + "".join(f" {label}={cell[k]}" for k, label in extra.items() if cell.get(k))


LEGEND = [
    "n = samples in the mean; sys = of those, summaries the system failed to give (empty, cut off,",
    "unreadable; scored 0); unp / trunc = samples left out because a judge verdict was unparsed /",
    "truncated (err = errored, undef = no gold to score against, not given = not in the predictions).",
]


def tables(metrics: dict[str, Any]) -> str:
    """Table 1 (per pattern: background R-P-F1, CAO R, OP GM) and Table 2 (error types)."""
    lines = [
        "Macro averages in % over samples, as in the paper's Table 1. In parentheses: change of the",
        "last self-reflection round over round 0. CI: 95% bootstrap interval over samples (n/a under two).",
        *LEGEND,
        "",
        row(["pattern", "round", "background", "R", "R CI", "P", "P CI", "F1", "F1 CI", "background counts", "CAO R", "CAO R CI",
             "CAO counts", "OP GM", "OP GM CI", "OP counts"]),
        rule("lrlrrrrrrlrrlrrl"),
    ]
    patterns = metrics.get("patterns", {})
    for pattern, block in patterns.items():
        change = block.get("change") or {}
        last = max(block["rounds"], key=int) if block["rounds"] else None
        for r, t in block["rounds"].items():
            d = (lambda k: _delta(change.get(k))) if r == last and r != "0" else (lambda k: "")
            lines.append(row([
                PATTERN_TITLES[pattern], r, BACKGROUND_METRIC[pattern],
                *(text for k in ("recall", "precision", "f1") for text in (_pct(t[k]) + d(k), _ci(t[k]))),
                _counts(t["f1"]), _pct(t["cao_recall"]) + d("cao_recall"), _ci(t["cao_recall"]), _counts(t["cao_recall"]),
                _pct(t["op_gm"]) + d("op_gm"), _ci(t["op_gm"]), _counts(t["op_gm"]),
            ]))
    lines += [
        "",
        "Error types of unknowable opinions, % of classified errors. macro = mean over samples of each",
        "sample's shares (samples with a classified error); pooled = all classified errors counted",
        "together. Failed summaries have no opinion to classify (sys); unparsed / truncated",
        "classifications are left out and counted.",
        "",
        row(["pattern", "round", "shares", *ERROR_TYPES, "samples", "classified", "unp", "trunc", "sys"]),
        rule("lrl" + "r" * (len(ERROR_TYPES) + 5)),
    ]
    for pattern, block in patterns.items():
        change = block.get("change") or {}
        last = max(block["rounds"], key=int) if block["rounds"] else None
        for r, t in block["rounds"].items():
            e = t["errors"]
            for way in ("macro", "pooled"):
                moved = (change.get(way) or {}) if r == last and r != "0" else {}
                cells = [_pct(e[way][code]) + _delta(moved.get(code)) for code in ERROR_TYPES]
                lines.append(row([
                    PATTERN_TITLES[pattern], r, way, *cells,
                    *(e[k] for k in ("samples", "classified", "judge_unparsed", "judge_truncated", "system_failed")),
                ]))
    ratios = [(r, t["retrieval_ratio"]) for r, t in patterns.get("ebs", {}).get("rounds", {}).items() if t.get("retrieval_ratio")]
    if ratios:
        lines += ["", "EBS paragraph retrieval ratio (the paper's Fig. 2), % of the sample's paragraphs retrieved:"]
        for r, ratio in ratios:
            lines.append(f"- round {r}: macro {_pct(ratio['macro'])}, pooled {_pct(ratio['pooled'])} (n={ratio['n']})")
    fb = metrics.get("feedback")
    if fb:
        rate = pct(fb["gold_win_rate"])
        others = "; ".join(f"{n} {reason}" for reason, n in sorted((fb.get("not_judged") or {}).items()))
        lines += [
            "",
            f"EBS feedback judgement: gold win rate {rate} (n={fb['judged']}: {fb['gold_wins']} gold wins; "
            f"left out: {fb.get('judge_unparsed', 0)} unparsed, {fb.get('judge_truncated', 0)} truncated; "
            f"not asked: {fb['same_as_gold']} EBS identical to gold" + (f"; {others}" if others else "") + ").",
        ]
    flagged = metrics.get("prompt_echoes") or []
    if flagged:
        lines += ["", "Summaries that echo the prompt's own placeholder or instructions (scored as given, see above):"]
        lines += [
            f"- {cell(e['item'])} {PATTERN_TITLES.get(e['pattern'], e['pattern'])} round {e['round']}: {', '.join(e['fields'])}"
            for e in flagged
        ]
    for g in metrics.get("system_generation") or []:
        paper = SYSTEM_GENERATION
        lines += [
            "",
            f"System under test ({g['model']}): max_tokens {g['max_tokens']}, temperature {g['temperature']:g}, "
            f"JSON {'by native structured output' if g.get('structured_output') else 'asked in the prompt only'} "
            f"(paper: {paper['max_tokens']}, {paper['temperature']:g}, in the prompt only).",
        ]
    return "\n".join(lines)


def metrics_only(paths: list[Path], options: dict[str, Any]) -> str:
    """``dialeval metrics kgds --predictions FILE --data KGDS.json``: BSP scores, no model."""
    data = options.get("data")
    if not data:
        raise ConfigError("dialeval metrics kgds: give the data file the predictions refer to: --data KGDS.json")
    samples = load_kgds(data)
    lines = [
        "Macro averages in %; a sample the file has no EBS for scores 0 (counted in sys).",
        "",
        row(["predictions", "round", "BSP R", "BSP P", "BSP F1", "n", "sys"]),
        rule("lrrrrrr"),
    ]
    for path in paths:
        preds = load_predictions(path, samples)
        rounds = sorted({p.round for ps in preds.values() for p in ps if p.pattern == "ebs"})
        for r in rounds:
            scores, outcomes = [], []
            for sample in samples:
                pred = next((p for p in preds.get(sample.id, []) if p.pattern == "ebs" and p.round == r), None)
                prf = bsp_scores(cast(list[int], pred.background) if pred else [], sample.supporting, sample.nonsupporting)
                scores.append(prf)
                outcomes.append("undefined" if prf is None else "ok" if pred else "system_failed")
            cells = [macro((s.__dict__[k] if s else None for s in scores), outcomes) for k in ("recall", "precision", "f1")]
            lines.append(row([cell(path), r, *(_pct(c) for c in cells), cells[0]["n"], cells[0]["system_failed"]]))
    return "\n".join(lines)
