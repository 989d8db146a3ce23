"""`vdact`: VDEval (session-based judge) and its baselines on VDAct prediction files.

One item is one system's dialogue. Options choose the judge (session, turn, llm_acc,
llm_rel) and the video summary (none, template, refined), which spans the paper's
ablation (Table 6). Model-free classic metrics (Table 5) come from ``metrics_only``.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dialeval.benchmarks import Benchmark, register_benchmark
from dialeval.config import ConfigError
from dialeval.config import parse_options as config_options
from dialeval.data.vdact import Dialogue, load_dialogues, load_human_scores, load_predictions
from dialeval.metrics.correlation import kendall_tau_b, permutation_test
from dialeval.metrics.text import classic_metrics, load_wordnet, meteor_scores, rouge_l_scores, sentence_bleu
from dialeval.metrics.vdact import SCALES, majority_vote, question_types, score_summary, type_breakdown

JudgeKind = Literal["session", "turn", "llm_acc", "llm_rel"]
AGENT_KINDS = {
    "vdact.session_judge": "session",
    "vdact.turn_judge": "turn",
    "vdact.llm_acc": "llm_acc",
    "vdact.llm_rel": "llm_rel",
}


class VdactOptions(BaseModel):
    """Options of the `vdact` benchmark (``--option key=value`` or ``options:`` in a config)."""

    model_config = ConfigDict(extra="forbid")

    judge: JudgeKind = "session"
    summary: Literal["none", "template", "refined"] | None = Field(
        default=None, description="video summary in the prompt; default refined for the session judge, none otherwise"
    )
    kg_dir: str | None = Field(default=None, description="folder with the summary zips or folders (default <data>/../kg)")
    summary_path: str | None = Field(default=None, description="one summary zip or folder, overriding kg_dir")
    human_scores: str | None = Field(default=None, description="JSON/JSONL file of human 1-3 scores per turn")
    permutations: int = Field(default=10_000, ge=1)
    seed: int = 0
    bertscore_model: str | None = Field(default=None, description="local model folder for BERTScore")
    bertscore_layers: int | None = None

    @property
    def summary_kind(self) -> str:
        if self.summary is not None:
            return self.summary
        return "refined" if self.judge == "session" else "none"


def parse_options(options: dict[str, Any]) -> VdactOptions:
    return config_options(VdactOptions, options, "vdact")


def load(path: Path, options: dict[str, Any]) -> list[Dialogue]:
    opts = parse_options(options)
    return load_dialogues(
        path,
        summary=opts.summary_kind,  # type: ignore[arg-type]
        kg_dir=opts.kg_dir,
        summary_path=opts.summary_path,
        human_scores=opts.human_scores,
    )


def _graph():
    from dialeval.graphs.vdact import build_graph

    return build_graph()


def to_input(item: Dialogue, options: dict[str, Any]) -> dict[str, Any]:
    return {"dialogue": item.model_dump()}


def to_record(item: Dialogue, state: dict[str, Any]) -> dict[str, Any]:
    from dialeval.usage import current_ledger

    judged = {entry["turn_id"]: entry for entry in state.get("judged", [])}
    calls = [entry["call"] for entry in state.get("judged", [])]
    ledger = current_ledger.get()
    return {
        "id": item.id,
        "system": item.system,
        "dial_id": item.dial_id,
        "scenario": item.scenario,
        "agent": calls[0]["agent"] if calls else None,
        "summary_used": item.summary is not None,
        "turns": [
            {
                "id": t.id,
                "turn_num": t.turn_num,
                "score": judged.get(t.id, {}).get("score"),
                "status": judged.get(t.id, {}).get("status", "missing"),
                "types": question_types(t.question, t.reference),
                "human": t.human,
                "reference": t.reference,
                "candidate": t.candidate,
            }
            for t in item.turns
        ],
        "usage": ledger.totals() if ledger is not None else {},
        "source_dialogues": item.source_dialogues,
        "source_turns": item.source_turns,
        "calls": calls,
    }


def _kind(records: list[dict[str, Any]], opts: VdactOptions) -> str:
    agents = {r.get("agent") for r in records if r.get("agent")}
    kinds = {AGENT_KINDS.get(a, opts.judge) for a in agents} or {opts.judge}
    if len(kinds) > 1:
        raise ConfigError(f"records mix judges of different scales: {sorted(kinds)}")
    return kinds.pop()


def _usage_estimate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Tokens and calls per judged dialogue, scaled up to every dialogue of the file."""
    n = len(rows)
    total = defaultdict(float)
    for r in rows:
        for key, value in r.get("usage", {}).items():
            total[key] += value
    per_dialogue = {k: total[k] / n for k in ("calls", "requests", "input_tokens", "output_tokens", "cost_usd")}
    file_dialogues = rows[0]["source_dialogues"]
    return {
        "judged_dialogues": n,
        "judged_turns": sum(len(r["turns"]) for r in rows),
        "file_dialogues": file_dialogues,
        "file_turns": rows[0]["source_turns"],
        "per_dialogue": per_dialogue,
        "file_estimate": {k: per_dialogue[k] * file_dialogues for k in ("calls", "input_tokens", "output_tokens", "cost_usd")},
        "extrapolated": n < file_dialogues,
        "cost_known": not total["unpriced_calls"],  # a model without a price: cost unknown, not 0
    }


def _human_correlation(turns: list[dict[str, Any]], opts: VdactOptions) -> dict[str, Any] | None:
    """Judge vs human majority vote (Kendall tau-b) and a permutation test against ROUGE-L."""
    rated = [t for t in turns if t.get("human")]
    if not rated:
        return None
    majority = [majority_vote(t["human"]) for t in rated]
    kept = [(t, m) for t, m in zip(rated, majority) if m is not None]
    judge = [t["score"] for t, _ in kept]
    human = [m for _, m in kept]
    rouge = rouge_l_scores([t["candidate"] for t, _ in kept], [t["reference"] for t, _ in kept])
    corr = kendall_tau_b(judge, human)
    test = permutation_test(judge, rouge, human, permutations=opts.permutations, seed=opts.seed)
    return {
        "rated_turns": len(rated),
        "excluded_no_majority": len(rated) - len(kept),
        "excluded_unparsed": sum(1 for s in judge if s is None),
        "n": corr.n,
        "kendall_tau_b": corr.tau,
        "p_value": corr.p_value,
        "reason": corr.reason,
        "rouge_l_tau_b": test.tau_b,
        "vs_rouge_l_difference": test.difference,
        "vs_rouge_l_p_value": test.p_value,
        "permutations": test.permutations,
    }


def aggregate(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    opts = parse_options(options)
    kind = _kind(records, opts)
    low, high = SCALES[kind]
    systems: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        systems[r["system"]].append(r)
    table = {}
    for name, rows in sorted(systems.items()):
        turns = [t for r in rows for t in r["turns"]]
        table[name] = {
            **score_summary([t["score"] for t in turns], low, high),
            "dialogues": len(rows),
            "question_types": type_breakdown([(t["types"], t["score"]) for t in turns], low, high),
            "usage": _usage_estimate(rows),
            "human": _human_correlation(turns, opts),
        }
    return {"judge": kind, "scale": [low, high], "summary": opts.summary_kind, "systems": table}


def score_dimensions(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    return {"turn score": [t["score"] for r in records for t in r["turns"] if t["score"] is not None]}


def _num(value: float | None, fmt: str = "{:.2f}") -> str:
    return "n/a" if value is None else fmt.format(value)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}"


def tables(metrics: dict[str, Any]) -> str:
    low, high = metrics["scale"]
    lines = [
        f"Judge: `{metrics['judge']}`, video summary: `{metrics['summary']}`. Scaled = (s - {low}) / {high - low}, in %.",
        "",
        f"| system | dialogues | turns | scored | unparsed | mean ({low}-{high}) | scaled (%) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in metrics["systems"].items():
        lines.append(
            f"| {name} | {s['dialogues']} | {s['turns']} | {s['scored']} | {s['unparsed']} | {_num(s['mean'])} | {_pct(s['mean_scaled'])} |"
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
    lines += ["", "Scores by question type (keyword rules; `others` = all turns not of that type), scaled in %:", ""]
    lines += ["| system | type | n | scaled (%) | others n | others scaled (%) |", "|---|---|---:|---:|---:|---:|"]
    for name, s in metrics["systems"].items():
        for kind, b in s["question_types"].items():
            lines.append(
                f"| {name} | {kind} | {b['type']['scored']} | {_pct(b['type']['mean_scaled'])} "
                f"| {b['others']['scored']} | {_pct(b['others']['mean_scaled'])} |"
            )
    humans = {n: s["human"] for n, s in metrics["systems"].items() if s["human"]}
    if humans:
        lines += [
            "",
            "Agreement with human majority votes (Kendall tau-b; turns where annotators all disagree are excluded):",
            "",
            "| system | n | excluded (no majority) | excluded (unparsed) | judge tau-b | ROUGE-L tau-b | difference | permutation p |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, h in humans.items():
            lines.append(
                f"| {name} | {h['n']} | {h['excluded_no_majority']} | {h['excluded_unparsed']} | {_num(h['kendall_tau_b'], '{:.4f}')} "
                f"| {_num(h['rouge_l_tau_b'], '{:.4f}')} | {_num(h['vs_rouge_l_difference'], '{:+.4f}')} | {_num(h['vs_rouge_l_p_value'], '{:.4f}')} |"
            )
    return "\n".join(lines)


# ---------------------------------------------------------------- model-free metrics


def metrics_only(paths: list[Path], options: dict[str, Any]) -> str:
    """`dialeval metrics vdact --predictions FILE...`: BLEU, ROUGE-L, METEOR, BERTScore per system."""
    opts = parse_options(options)
    wordnet, missing = load_wordnet()
    humans = load_human_scores(opts.human_scores) if opts.human_scores else {}
    rows, notes, correlations = [], [], []
    unavailable: dict[str, str] = {}
    signature = None
    for path in paths:
        preds = load_predictions(path)
        hyps = [t.gen_answer for t in preds.turns]
        refs = [t.ref_answer for t in preds.turns]
        values = classic_metrics(hyps, refs, bertscore_model=opts.bertscore_model, wordnet=wordnet)
        for v in values:
            if v.unavailable:
                unavailable[v.name] = v.unavailable
            if v.name == "BLEU" and v.note:
                signature = v.note
        rows.append((preds.system, len(preds.turns), values))
        notes += [f"{preds.system}: {n}" for n in preds.notes]
        if humans:
            correlations.append(_classic_correlation(preds.system, preds.turns, humans, wordnet))
    names = [v.name for v in rows[0][2]] if rows else []
    lines = ["| system | turns | " + " | ".join(names) + " |", "|---|---:|" + "---:|" * len(names)]
    for system, n, values in rows:
        lines.append(f"| {system} | {n} | " + " | ".join(_pct(v.value) for v in values) + " |")
    lines += ["", "Scores in % (0-100). BLEU is corpus BLEU-4; ROUGE-L and METEOR are means of per-answer scores."]
    if signature:
        lines.append(f"BLEU signature (sacrebleu): `{signature}`.")
    for name, reason in unavailable.items():
        lines.append(f"{name} unavailable: {reason}.")
    for note in notes:
        lines.append(f"Note, {note}.")
    if correlations:
        lines += [
            "",
            "Kendall tau-b with human majority votes (per-answer sentence BLEU, ROUGE-L, METEOR):",
            "",
            "| system | n | excluded (no majority) | BLEU | ROUGE-L | METEOR |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for c in correlations:
            lines.append(
                f"| {c['system']} | {c['n']} | {c['excluded']} | "
                + " | ".join(_num(c[k], "{:.4f}") for k in ("BLEU", "ROUGE-L", "METEOR"))
                + " |"
            )
    return "\n".join(lines)


def _classic_correlation(system: str, turns: list[Any], humans: dict[tuple[str | None, str], list[int]], wordnet: Any) -> dict[str, Any]:
    rated = [(t, humans.get((system, t.id)) or humans.get((None, t.id))) for t in turns]
    rated = [(t, majority_vote(h)) for t, h in rated if h]
    kept = [(t, m) for t, m in rated if m is not None]
    hyps = [t.gen_answer for t, _ in kept]
    refs = [t.ref_answer for t, _ in kept]
    human = [m for _, m in kept]
    out: dict[str, Any] = {"system": system, "n": len(kept), "excluded": len(rated) - len(kept)}
    out["BLEU"] = kendall_tau_b(sentence_bleu(hyps, refs), human).tau
    out["ROUGE-L"] = kendall_tau_b(rouge_l_scores(hyps, refs), human).tau
    out["METEOR"] = kendall_tau_b(meteor_scores(hyps, refs, wordnet), human).tau if wordnet is not None else None
    return out


register_benchmark(
    Benchmark(
        name="vdact",
        title="VDAct / VDEval: video-grounded dialogue answers judged turn by turn",
        paper="vdact-vdeval.txt (Imrattanatrai et al., AAAI 2025)",
        load=load,
        graph=_graph,
        to_input=to_input,
        to_record=to_record,
        aggregate=aggregate,
        score_dimensions=score_dimensions,
        tables=tables,
        roles={"judge": "vdact.session_judge"},
        metrics_only=metrics_only,
    )
)
