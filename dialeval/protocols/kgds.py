"""`kgds`: knowledge-grounded discussion summarization, evaluated hierarchically.

Options (``RunConfig.options``, validated by :class:`KgdsOptions`): ``patterns``
(``[ebs, abs]``), ``reflection_rounds`` (1), ``one_fact_per_call`` (false),
``feedback_judge`` (true), ``predictions`` (a file of the system's own summaries, see
:mod:`dialeval.data.kgds`; the summarizer is then skipped), ``decompose_missing_facts``.
Templates can be replaced per key: ``summarizer_ebs``, ``summarizer_abs``,
``reflection_ebs``, ``reflection_abs``, ``feedback_judge``, ``fact_verifier``,
``opinion_verifier``, ``error_classifier``, ``fact_decomposer``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from dialeval.agents.kgds_common import KgdsOptions
from dialeval.benchmarks import Benchmark, register_benchmark
from dialeval.config import ConfigError
from dialeval.config import parse_options as config_options
from dialeval.data.kgds import KgdsSample, Prediction, load_kgds, load_predictions
from dialeval.metrics.kgds import ERROR_TYPES, aggregate_scores, bsp_scores, macro, win_rate

PATTERN_TITLES = {"ebs": "EBS-AOS", "abs": "ABS-AOS"}
BACKGROUND_METRIC = {"ebs": "BSP", "abs": "KBSAF"}


@dataclass
class KgdsItem:
    """One sample to evaluate, with the system's predictions when they are given."""

    id: str
    sample: KgdsSample
    predictions: list[Prediction] | None = field(default=None)


def parse_options(options: dict[str, Any]) -> KgdsOptions:
    return config_options(KgdsOptions, options, "kgds")


def load(path: Path, options: dict[str, Any]) -> list[KgdsItem]:
    opts = parse_options(options)
    samples = load_kgds(path)
    if opts.predictions is None:
        return [KgdsItem(s.id, s) for s in samples]
    preds = load_predictions(opts.predictions, samples)
    return [KgdsItem(s.id, s, preds.get(s.id, [])) for s in samples]


def to_input(item: KgdsItem, options: dict[str, Any]) -> dict[str, Any]:
    return {
        "sample": item.sample.model_dump(),
        "options": parse_options(options).model_dump(),
        "predictions": None if item.predictions is None else [p.model_dump() for p in item.predictions],
        "facts": [{**f.model_dump(), "fact_id": f.fact_id} for f in item.sample.scored_facts()],
        "fact_gaps": item.sample.paragraphs_without_facts(),
    }


def _without_messages(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k != "messages"} for row in rows]


def to_record(item: KgdsItem, state: dict[str, Any]) -> dict[str, Any]:
    parts = ("summaries", "fact_checks", "opinion_checks", "error_checks", "feedback", "decompositions")
    record: dict[str, Any] = {"id": item.id, "scores": state.get("scores", {})}
    for part in parts:
        record[part] = _without_messages(state.get(part) or [])
    record["calls"] = [row["call"] for part in parts for row in record[part] if row.get("call")]
    return record


def aggregate(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    judged = [f for r in records for f in r.get("feedback", []) if "call" in f]
    same = sum(1 for r in records for f in r.get("feedback", []) if f.get("skipped") == "same as gold")
    return {
        "samples": len(records),
        "patterns": aggregate_scores([r["scores"] for r in records]),
        "feedback": {**win_rate([f["winner"] for f in judged]), "same_as_gold": same},
    }


def score_dimensions(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    facts = [float(v) for r in records for c in r.get("fact_checks", []) for v in c["knowable"] if v is not None]
    opinions = [float(c["knowable"]) for r in records for c in r.get("opinion_checks", []) if c["knowable"] is not None]
    return {"fact knowable (0/1)": facts, "opinion knowable (0/1)": opinions}


def _pct(cell: dict[str, Any] | float | None) -> str:
    value = cell["mean"] if isinstance(cell, dict) else cell
    return "n/a" if value is None else f"{100 * value:.2f}"


def _delta(value: float | None) -> str:
    if value is None:
        return ""
    return f" ({'+' if value >= 0 else ''}{100 * value:.2f})"


def tables(metrics: dict[str, Any]) -> str:
    """Table 1 (per pattern: background R-P-F1, CAO R, OP GM) and Table 2 (error types)."""
    lines = [
        "Macro averages in % over samples (n = samples scored; skipped samples had an unreadable",
        "summary or verdict). In parentheses: change of the last self-reflection round over round 0.",
        "",
        "| pattern | round | background | R | P | F1 | CAO R | OP GM | n (bg / CAO / OP) |",
        "|---|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    patterns = metrics.get("patterns", {})
    for pattern, block in patterns.items():
        change = block.get("change") or {}
        last = max(block["rounds"], key=int) if block["rounds"] else None
        for r, t in block["rounds"].items():
            d = (lambda k: _delta(change.get(k))) if r == last and r != "0" else (lambda k: "")
            lines.append(
                f"| {PATTERN_TITLES[pattern]} | {r} | {BACKGROUND_METRIC[pattern]} | {_pct(t['recall'])}{d('recall')} "
                f"| {_pct(t['precision'])}{d('precision')} | {_pct(t['f1'])}{d('f1')} | {_pct(t['cao_recall'])}{d('cao_recall')} "
                f"| {_pct(t['op_gm'])}{d('op_gm')} | {t['f1']['n']} / {t['cao_recall']['n']} / {t['op_gm']['n']} of "
                f"{t['f1']['n'] + t['f1']['skipped']} |"
            )
    lines += [
        "",
        "Error types of unknowable opinions, % (macro over samples with classified errors):",
        "",
        "| pattern | round | " + " | ".join(ERROR_TYPES) + " | samples | classified | unreadable |",
        "|---|---:|" + "---:|" * (len(ERROR_TYPES) + 3),
    ]
    for pattern, block in patterns.items():
        change = block.get("change") or {}
        last = max(block["rounds"], key=int) if block["rounds"] else None
        for r, t in block["rounds"].items():
            e = t["errors"]
            cells = [
                _pct(e["macro"][code]) + (_delta(change.get(code)) if r == last and r != "0" else "") for code in ERROR_TYPES
            ]
            lines.append(
                f"| {PATTERN_TITLES[pattern]} | {r} | " + " | ".join(cells)
                + f" | {e['samples']} | {e['classified']} | {e['unclassified']} |"
            )
    fb = metrics.get("feedback")
    if fb:
        rate = "n/a" if fb["gold_win_rate"] is None else f"{100 * fb['gold_win_rate']:.1f}%"
        lines += [
            "",
            f"EBS feedback judgement: gold win rate {rate} ({fb['gold_wins']} of {fb['judged']} judged; "
            f"{fb['unreadable']} unreadable; {fb['same_as_gold']} EBS identical to gold, not judged).",
        ]
    return "\n".join(lines)


def metrics_only(paths: list[Path], options: dict[str, Any]) -> str:
    """``dialeval metrics kgds --predictions FILE --option data=KGDS.json``: BSP scores, no model."""
    data = options.get("data")
    if not data:
        raise ConfigError("kgds metrics need the data file: --option data=PATH")
    samples = load_kgds(data)
    lines = ["| predictions | round | BSP R | BSP P | BSP F1 | n |", "|---|---:|---:|---:|---:|---:|"]
    for path in paths:
        preds = load_predictions(path, samples)
        rounds = sorted({p.round for ps in preds.values() for p in ps if p.pattern == "ebs"})
        for r in rounds:
            scores = []
            for sample in samples:
                pred = next((p for p in preds.get(sample.id, []) if p.pattern == "ebs" and p.round == r), None)
                scores.append(None if pred is None else bsp_scores(pred.background, sample.supporting, sample.nonsupporting))
            cells = [macro(s.__dict__[k] if s else None for s in scores) for k in ("recall", "precision", "f1")]
            lines.append(f"| {path} | {r} | " + " | ".join(_pct(c) for c in cells) + f" | {cells[0]['n']} |")
    return "\n".join(lines)


def _graph():
    from dialeval.graphs.kgds import build_graph

    return build_graph()


register_benchmark(
    Benchmark(
        name="kgds",
        title="KGDS: knowledge-grounded discussion summarization, hierarchical evaluation",
        paper="kgds.txt (Zhou et al., KGDS benchmark)",
        load=load,
        graph=_graph,
        to_input=to_input,
        to_record=to_record,
        aggregate=aggregate,
        score_dimensions=score_dimensions,
        tables=tables,
        roles={
            "summarizer": "kgds.summarizer",
            "reflection": "kgds.reflection",
            "feedback_judge": "kgds.feedback_judge",
            "fact_decomposer": "kgds.fact_decomposer",
            "fact_verifier": "kgds.fact_verifier",
            "opinion_verifier": "kgds.opinion_verifier",
            "error_classifier": "kgds.error_classifier",
        },
        template_keys=("summarizer_ebs", "summarizer_abs", "reflection_ebs", "reflection_abs", "feedback_judge", "fact_decomposer", "fact_verifier", "opinion_verifier", "error_classifier"),
        metrics_only=metrics_only,
    )
)
