"""`dialeval metrics vdact`: the classic metrics of prediction files (the paper's Table 5), no model, with their agreement with humans."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialeval.protocols.vdact.data import load_predictions
from dialeval.protocols.vdact.human_scores import load_human_scores
from dialeval.metrics.correlation import kendall_tau_b
from dialeval.protocols.vdact.tables import scaled
from dialeval.report.tables import cell, num, row, rule
from dialeval.metrics.text import classic_metrics, load_wordnet, per_answer_scores, resolve_spice_jar
from dialeval.protocols.vdact.options import VdactOptions, parse_options
from dialeval.protocols.vdact.metrics import majority_vote


def metrics_only(paths: list[Path], options: dict[str, Any]) -> str:
    """`dialeval metrics vdact --predictions FILE...`: BLEU, ROUGE-L, METEOR, SPICE, BERTScore, BARTScore per system."""
    opts = parse_options(options)
    wordnet, _ = load_wordnet()
    jar = resolve_spice_jar(opts.spice_jar)
    humans = load_human_scores(opts.human_scores) if opts.human_scores else {}
    rows, notes, correlations = [], [], []
    unavailable: dict[str, str] = {}
    signature = None
    for path in paths:
        preds = load_predictions(path)
        hyps = [t.gen_answer or "" for t in preds.turns]
        refs = [t.ref_answer for t in preds.turns]
        values = classic_metrics(hyps, refs, bertscore_model=opts.bertscore_model, wordnet=wordnet,
                                 spice_jar=jar, bartscore_model=opts.bartscore_model)
        for v in values:
            if v.unavailable:
                unavailable[v.name] = v.unavailable
            if v.name == "BLEU" and v.note:
                signature = v.note
        rows.append((preds.system, len(preds.turns), values))
        notes += [f"{preds.system}: {n}" for n in preds.notes]
        if humans:
            correlations.append(_classic_correlation(preds.system, preds.turns, humans, wordnet, opts, jar))
    names = [v.name for v in rows[0][2]] if rows else []
    lines = [row(["system", "turns", *names]), rule("lr" + "r" * len(names))]
    for system, n, values in rows:
        lines.append(row([cell(system), n, *(_value(v) for v in values)]))
    lines += ["", "Scores in % (0-100), except BARTScore (mean log-likelihood per token). BLEU is corpus BLEU-4; "
              "the others are means of per-answer scores."]
    if signature:
        lines.append(f"BLEU signature (sacrebleu): `{signature}`.")
    for name, reason in unavailable.items():
        lines.append(f"{name} unavailable: {reason}.")
    for note in notes:
        lines.append(f"Note, {note}.")
    if correlations:
        metrics = [m for m in ("BLEU", "ROUGE-L", "METEOR", "SPICE", "BERTScore", "BARTScore") if any(m in c for c in correlations)]
        lines += [
            "",
            "Kendall tau-b with human majority votes (per-answer scores; BLEU is smoothed sentence BLEU):",
            "",
            row(["system", "n", "excluded (no majority)", *metrics]),
            rule("lrr" + "r" * len(metrics)),
        ]
        for c in correlations:
            lines.append(row([cell(c["system"]), c["n"], c["excluded"], *(num(c.get(k), 4) for k in metrics)]))
    return "\n".join(lines)


def _value(v: Any) -> str:
    if v.name == "BARTScore":
        return num(v.value, 4)
    return scaled(v.value)


def _classic_correlation(
    system: str, turns: list[Any], humans: dict[tuple[str | None, str], list[int]], wordnet: Any, opts: VdactOptions, jar: str | None
) -> dict[str, Any]:
    given = [(t, humans.get((system, t.id)) or humans.get((None, t.id))) for t in turns]
    rated = [(t, majority_vote(h)) for t, h in given if h]
    kept = [(t, m) for t, m in rated if m is not None]
    human = [m for _, m in kept]
    scores, _ = per_answer_scores(
        [t.gen_answer or "" for t, _ in kept], [t.ref_answer for t, _ in kept], wordnet=wordnet, spice_jar=jar,
        bertscore_model=opts.bertscore_model, bartscore_model=opts.bartscore_model,
    )
    out: dict[str, Any] = {"system": system, "n": len(kept), "excluded": len(rated) - len(kept)}
    out.update({name: kendall_tau_b(values, human).tau for name, values in scores.items()})
    return out
