"""`kgds`: knowledge-grounded discussion summarization, evaluated hierarchically.

Options (``RunConfig.options``, validated by :class:`KgdsOptions`): ``patterns``
(``[ebs, abs]``), ``reflection_rounds`` (1), ``one_fact_per_call`` (false),
``feedback_judge`` (true), ``predictions`` (a file of the system's own summaries, see
:mod:`dialeval.protocols.kgds.data`; the summarizer is then skipped), ``decompose_missing_facts``,
``summary_retries`` (0). The summarizer, reflection and feedback roles generate with the
paper's max_tokens 4096 and temperature 0 unless their model sets them.
Templates can be replaced per key: ``summarizer_ebs``, ``summarizer_abs``,
``reflection_ebs``, ``reflection_abs``, ``feedback_judge``, ``fact_verifier``,
``opinion_verifier``, ``error_classifier``, ``fact_decomposer``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast


from dialeval.protocols.kgds.common import ROLES, SYSTEM_GENERATION, KgdsOptions
from dialeval.benchmarks import Benchmark, RunFacts, register_benchmark
from dialeval.protocols.kgds.figures import figures
from dialeval.config import ConfigError
from dialeval.report.tables import cell, num, pct, row, rule
from dialeval.config import parse_options as config_options
from dialeval.protocols.kgds.data import KgdsSample, load_kgds, load_predictions, missing_predictions
from dialeval.protocols.kgds.prompt_echo import echoed_fields, echoes, sample_material
from dialeval.protocols.kgds.metrics import ERROR_TYPES, SCORED, aggregate_scores, bsp_scores, macro, win_rate
from dialeval.protocols.kgds import error_classifier, fact_decomposer, fact_verifier, feedback_judge, opinion_verifier, reflection, summarizer  # noqa: F401  (registers the agents)

PATTERN_TITLES = {"ebs": "EBS-AOS", "abs": "ABS-AOS"}
BACKGROUND_METRIC = {"ebs": "BSP", "abs": "KBSAF"}


@dataclass
class KgdsItem:
    """One sample to evaluate, with the system's predictions when they are given."""

    id: str
    sample: KgdsSample
    predictions: list[dict[str, Any]] | None = field(default=None)  # Prediction dumps and missing entries


def parse_options(options: dict[str, Any]) -> KgdsOptions:
    return config_options(KgdsOptions, options, "kgds")


def load(path: Path, options: dict[str, Any]) -> list[KgdsItem]:
    opts = parse_options(options)
    samples = load_kgds(path)
    if opts.predictions is None:
        return [KgdsItem(s.id, s) for s in samples]
    preds = load_predictions(opts.predictions, samples)
    missing = missing_predictions(preds, [s.id for s in samples])
    return [KgdsItem(s.id, s, [p.model_dump() for p in preds.get(s.id, [])] + missing[s.id]) for s in samples]


def to_input(item: KgdsItem, options: dict[str, Any]) -> dict[str, Any]:
    """The sample as it is in KGDS.json (the graph's input format), plus options."""
    return {
        **item.sample.model_dump(exclude_none=True),
        "options": parse_options(options).model_dump(),
        "predictions": item.predictions,
    }


def _without_messages(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "messages"} for r in rows]


def to_record(item: KgdsItem, state: dict[str, Any]) -> dict[str, Any]:
    parts = ("summaries", "fact_checks", "opinion_checks", "error_checks", "feedback", "decompositions")
    record: dict[str, Any] = {"id": item.id, "scores": state.get("scores", {})}
    for part in parts:
        record[part] = _without_messages(state.get(part) or [])
    material = sample_material(item.sample.model_dump())
    for summary in record["summaries"]:  # flagged, still scored: the summary is the system's
        summary["echoes_prompt"] = echoed_fields(summary, material)
    record["calls"] = [r["call"] for part in parts for r in record[part] if r.get("call")]
    return record


def aggregate(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    feedback = [f for r in records for f in r.get("feedback", [])]
    judged = [f for f in feedback if "call" in f]
    skipped = {reason: sum(1 for f in feedback if f.get("skipped") == reason) for reason in {f.get("skipped") for f in feedback} - {None}}
    generation = sorted(
        {json.dumps(s["generation"], sort_keys=True) for r in records for s in r.get("summaries", []) if s.get("generation")}
    )
    return {
        "samples": len(records),
        "patterns": aggregate_scores([r["scores"] for r in records]),
        "feedback": {
            **win_rate([f["winner"] for f in judged], [f.get("status") or f["call"]["status"] for f in judged]),
            "same_as_gold": skipped.pop("same as gold", 0),
            "not_judged": skipped,
        },
        "system_generation": [json.loads(g) for g in generation],
        "prompt_echoes": echoes(records),
    }


def score_dimensions(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    facts = [float(v) for r in records for c in r.get("fact_checks", []) for v in c["knowable"] if v is not None]
    opinions = [float(c["knowable"]) for r in records for c in r.get("opinion_checks", []) if c["knowable"] is not None]
    return {"fact knowable (0/1)": facts, "opinion knowable (0/1)": opinions}


def _pct(figure: dict[str, Any] | float | None) -> str:
    """A macro average (a figure's mean, or a bare share) in % without the sign."""
    return pct(figure["mean"] if isinstance(figure, dict) else figure, 2, sign="")


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
        "last self-reflection round over round 0.",
        *LEGEND,
        "",
        row(["pattern", "round", "background", "R", "P", "F1", "background counts", "CAO R", "CAO counts", "OP GM", "OP counts"]),
        rule("lrlrrrlrlrl"),
    ]
    patterns = metrics.get("patterns", {})
    for pattern, block in patterns.items():
        change = block.get("change") or {}
        last = max(block["rounds"], key=int) if block["rounds"] else None
        for r, t in block["rounds"].items():
            d = (lambda k: _delta(change.get(k))) if r == last and r != "0" else (lambda k: "")
            lines.append(row([
                PATTERN_TITLES[pattern], r, BACKGROUND_METRIC[pattern], *(_pct(t[k]) + d(k) for k in ("recall", "precision", "f1")),
                _counts(t["f1"]), _pct(t["cao_recall"]) + d("cao_recall"), _counts(t["cao_recall"]),
                _pct(t["op_gm"]) + d("op_gm"), _counts(t["op_gm"]),
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


def item_scores(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per sample, every scored metric as ``"<pattern>/r<round>/<metric>"`` (e.g.
    ``abs/r0/op_gm``): zeros of failed summaries included, judge failures left out."""
    out: dict[str, dict[str, float]] = {}
    for record in records:
        for pattern, rounds in record.get("scores", {}).items():
            for r, summary in rounds.items():
                for name, value in scored_values(pattern, summary).items():
                    out.setdefault(f"{pattern}/r{r}/{name}", {})[record["id"]] = value
    return out


def scored_values(pattern: str, row: dict[str, Any]) -> dict[str, float]:
    """The metrics of one summary that carry a value (outcome ok or system_failed)."""
    prefix = BACKGROUND_METRIC[pattern].lower()
    values: dict[str, float] = {}
    if row["outcome"]["background"] in SCORED and row["background"]:
        for key, short in (("recall", "r"), ("precision", "p"), ("f1", "f1")):
            values[f"{prefix}_{short}"] = row["background"][key]
    for key in ("cao_recall", "op_gm"):
        if row["outcome"][key] in SCORED and row[key] is not None:
            values[key] = row[key]
    return values


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


def _graph():
    from dialeval.protocols.kgds.graph import build_graph

    return build_graph()


GLOSSARY = {
    "EBS": "extractive background summary",
    "ABS": "abstractive background summary",
    "AOS": "abstractive opinion summary",
    "BSP": "background-supporting paragraphs",
    "KBSAF": "key background-supporting atomic facts",
    "CAO": "clear atomic opinions",
    "OP GM": "overall performance, geometric mean",
    **ERROR_TYPES,
}


def notices(metrics: dict[str, Any]) -> list[str]:
    """The report's first warning when summaries echo the prompt instead of the input."""
    flagged = metrics.get("prompt_echoes") or []
    if not flagged:
        return []
    items = len({e["item"] for e in flagged})
    return [
        f"**Summaries that echo the prompt.** {len(flagged)} {'summary' if len(flagged) == 1 else 'summaries'} of "
        f"{items} {'sample' if items == 1 else 'samples'} {'copies' if len(flagged) == 1 else 'copy'} the prompt's "
        "own placeholder or instructions (e.g. `Person1 ... Person2 ...`) instead of summarizing the input; "
        "their scores are kept as the system's but say nothing about summarizing (listed under Results)."
    ]


def describe(run: RunFacts) -> str:
    """Whose summaries the run scored: a predictions file's, or the summarizer's."""
    if run.predictions:
        return f"the summaries in `{run.predictions}` (for the samples in `{run.data}`)"
    rounds = run.options.get("reflection_rounds", 1)
    return f"summaries written by `{run.model('summarizer')}` for `{run.data}` (structured prompt, {rounds} self-reflection round(s))"


register_benchmark(
    Benchmark(
        name="kgds",
        title="KGDS: knowledge-grounded discussion summarization, hierarchical evaluation",
        paper="Zhou et al., What are they talking about? Benchmarking LLMs for Knowledge-Grounded Discussion Summarization",
        load=load,
        graph=_graph,
        to_input=to_input,
        to_record=to_record,
        aggregate=aggregate,
        score_dimensions=score_dimensions,
        tables=tables,
        **ROLES.benchmark_fields(),
        metrics_only=metrics_only,
        item_scores=item_scores,
        system_output="summaries",
        glossary=GLOSSARY,
        describe=describe,
        figures=figures,
        notices=notices,
    )
)
