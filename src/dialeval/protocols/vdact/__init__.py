"""`vdact`: VDEval (session-based judge) and its baselines on VDAct prediction files.

One item is one system's dialogue. Options choose the judge (session, turn, lave,
video_chatgpt) and the video summary (none, template, refined), which spans the paper's
ablation (Table 6). Model-free classic metrics (Table 5) come from ``metrics_only``.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from dialeval.benchmarks import Benchmark, RunFacts, register_benchmark
from dialeval.protocols.vdact.view import conversation_view
from dialeval.protocols.vdact.figures import figures
from dialeval.config import ConfigError
from dialeval.protocols.vdact.data import Dialogue, load_dialogues, load_human_scores, load_predictions
from dialeval.metrics.correlation import kendall_tau_b
from dialeval.metrics.paired import system_tests
from dialeval.protocols.vdact.tables import scaled, tables
from dialeval.report.tables import cell, num, row, rule
from dialeval.metrics.text import classic_metrics, load_wordnet, per_answer_scores, resolve_spice_jar
from dialeval.protocols.vdact.options import (
    NO_ANSWER_STATUS,
    DIMENSIONS,
    UNREADABLE_RULES,
    EXAMPLE_JUDGES,
    LABELS,
    VdactOptions,
    parse_options,
)
from dialeval.protocols.vdact.metrics import (
    SCALES,
    headline_scores,
    human_agreement,
    majority_vote,
    question_types,
    score_summary,
    type_breakdown,
)
from dialeval.protocols.vdact.common import ROLES
from dialeval.protocols.vdact import lave_judge, llm_acc, llm_rel, session_judge, turn_judge, video_chatgpt  # noqa: F401  (registers the agents)

def load(path: Path, options: dict[str, Any]) -> list[Dialogue]:
    opts = parse_options(options)
    return load_dialogues(
        path,
        summary=opts.summary_kind,  # type: ignore[arg-type]
        kg_dir=opts.kg_dir,
        summary_path=opts.summary_path,
        human_scores=opts.human_scores,
        example_path=opts.example_path,
        example_dialogue=opts.example_dialogue,
    )


def _graph():
    from dialeval.protocols.vdact.graph import build_graph

    return build_graph()


def to_input(item: Dialogue, options: dict[str, Any]) -> dict[str, Any]:
    """The graph's input: the dialogue in its data file's format, its summary and the example."""
    return {
        "records": item.prediction_records(),
        "summary": item.summary,
        "example": item.example.model_dump() if item.example else None,
    }


def to_record(item: Dialogue, state: dict[str, Any]) -> dict[str, Any]:
    from dialeval.models.usage import current_ledger

    judged = {entry["turn_id"]: entry for entry in state.get("judged", [])}
    calls = [entry["call"] for entry in state.get("judged", []) if entry.get("call")]
    agent = calls[0]["agent"] if calls else None
    ledger = current_ledger.get()
    example = state.get("example") or {}
    return {
        "id": item.id,
        "system": item.system,
        "dial_id": item.dial_id,
        "scenario": item.scenario,
        "agent": agent,
        "summary_used": item.summary is not None,
        "example": (example.get("source") or "built-in") if agent in EXAMPLE_JUDGES else None,
        "turns": [
            {
                "id": t.id,
                "turn_num": t.turn_num,
                "scores": judged.get(t.id, {}).get("scores"),
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


def _agent(records: list[dict[str, Any]], opts: VdactOptions) -> str:
    from dialeval.protocols.vdact.graph import JUDGE_AGENTS

    agents = {str(r["agent"]) for r in records if r.get("agent")}
    if len(agents) > 1:
        raise ConfigError(f"records mix judges: {sorted(agents)}")
    return agents.pop() if agents else JUDGE_AGENTS[opts.judge]


def _dimensions(agent: str, records: list[dict[str, Any]]) -> tuple[str, ...]:
    if agent in DIMENSIONS:
        return DIMENSIONS[agent]
    found: dict[str, None] = {}
    for r in records:
        for t in r["turns"]:
            found.update(dict.fromkeys(t.get("scores") or {}))
    unknown = [d for d in found if d not in SCALES]
    if unknown:
        raise ConfigError(f"agent {agent} gives scores on unknown scales: {unknown}")
    return tuple(found)


def _pairs(turns: list[dict[str, Any]], dim: str) -> list[tuple[float | None, str]]:
    return [((t["scores"] or {}).get(dim), t["status"]) for t in turns]


def unit_id(record: dict[str, Any], turn: dict[str, Any]) -> str:
    """A turn's unit id, ``<dial_id>/<turn_num>``: the same in every system's prediction file,
    so runs over two systems' files (and two systems in one run) align turn by turn."""
    return f"{record['dial_id']}/{turn['turn_num']}"


def _system_scores(rows: list[dict[str, Any]], dims: tuple[str, ...], unreadable_as: float | None) -> dict[str, dict[str, float | None]]:
    """Per dimension, every turn's headline score by unit id (None: not scored)."""
    out: dict[str, dict[str, float | None]] = {}
    for dim in dims:
        out[dim] = {}
        for r in rows:
            out[dim].update(zip((unit_id(r, t) for t in r["turns"]), headline_scores(_pairs(r["turns"], dim), unreadable_as)))
    return out


def _usage_estimate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Tokens and calls per judged dialogue, scaled up to every dialogue of the file."""
    n = len(rows)
    total: defaultdict[str, float] = defaultdict(float)
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
        "from_cache": bool(total["cached"]),  # cache hits cost nothing now: the file's cost is not measured
    }


def baseline_scores(run_dirs: list[str]) -> dict[str, dict[str, float | None]]:
    """Per metric of other vdact runs, the headline score of every turn ``<item id>/<turn>``.

    Lets the significance test consider the LLM baselines (LAVE, LLM-Rel) as the paper
    does; each run's own released rule for unreadable replies applies.
    """
    from dialeval.run.folder import read_results

    out: dict[str, dict[str, float | None]] = {}
    for run_dir in run_dirs:
        rows = read_results(Path(run_dir))
        records = [r["result"] for r in rows if r.get("status") == "ok"]
        if not records:
            raise ConfigError(f"option baseline_runs: {run_dir} holds no finished vdact items")
        agent = _agent(records, VdactOptions())
        rule = UNREADABLE_RULES.get(agent)
        for dim in _dimensions(agent, records):
            label = LABELS.get(agent, agent) if dim == "rating" else dim
            scores: dict[str, float | None] = {}
            for r in records:
                values = headline_scores(_pairs(r["turns"], dim), rule[0] if rule else None)
                scores.update({f"{r['id']}/{t['turn_num']}": v for t, v in zip(r["turns"], values)})
            out[f"{label} [{Path(run_dir).name}]"] = scores
    return out


def aggregate(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    opts = parse_options(options)
    agent = _agent(records, opts)
    dims = _dimensions(agent, records)
    rule = UNREADABLE_RULES.get(agent)
    unreadable_as = rule[0] if rule else None
    wordnet, baselines = None, {}
    if any(t.get("human") for r in records for t in r["turns"]):
        wordnet, _ = load_wordnet()
        baselines = baseline_scores(opts.baseline_runs)
    systems: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        systems[r["system"]].append(r)
    table = {}
    for name, rows in sorted(systems.items()):
        turns = [t for r in rows for t in r["turns"]]
        ids = [r["id"] for r in rows for _ in r["turns"]]
        low, high = SCALES[dims[0]]
        table[name] = {
            "dialogues": len(rows),
            "turns": len(turns),
            "dimensions": {d: score_summary(_pairs(turns, d), *SCALES[d], unreadable_as) for d in dims},
            "question_types": type_breakdown(
                [(t["types"], s, st) for t, (s, st) in zip(turns, _pairs(turns, dims[0]))], low, high, unreadable_as
            ),
            "usage": _usage_estimate(rows),
            "human": {
                d: h
                for d in dims
                if (h := human_agreement(
                    ids, turns, d, unreadable_as, baselines=baselines, permutations=opts.permutations, seed=opts.seed,
                    wordnet=wordnet, spice_jar=resolve_spice_jar(opts.spice_jar), bertscore_model=opts.bertscore_model,
                    bartscore_model=opts.bartscore_model,
                )) is not None
            },
        }
    examples = sorted({r["example"] for r in records if r.get("example")})
    paired = system_tests({name: _system_scores(rows, dims, unreadable_as) for name, rows in systems.items()}, seed=opts.seed)
    return {
        "judge": agent,
        "dimensions": {d: list(SCALES[d]) for d in dims},
        "unreadable_rule": {"score": rule[0], "source": rule[1]} if rule else None,
        "summary": opts.summary_kind,
        "example": examples[0] if len(examples) == 1 else (examples or None),
        "systems": table,
        "system_tests": paired,
    }


def score_dimensions(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = defaultdict(list)
    for r in records:
        for t in r["turns"]:
            if t["status"] == "ok":
                for dim, value in (t["scores"] or {}).items():
                    out[dim].append(value)
    return dict(out)


def item_scores(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per dimension, the score of every turn ``<dial_id>/<turn>`` the judge read (or the
    system left unanswered); the unit id never names the prediction file (:func:`unit_id`)."""
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for r in records:
        for t in r["turns"]:
            if t["status"] in ("ok", NO_ANSWER_STATUS):
                for dim, value in (t["scores"] or {}).items():
                    out[dim][unit_id(r, t)] = value
    return dict(out)


# ---------------------------------------------------------------- model-free metrics


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


def describe(run: RunFacts) -> str:
    """The system responses of the data file and the judge that scored them."""
    return f"the system responses in `{run.data}`, judged by `{run.model('judge')}` ({run.options.get('judge', 'session')} judge)"


register_benchmark(
    Benchmark(
        name="vdact",
        title="VDAct / VDEval: video-grounded dialogue answers judged turn by turn",
        paper="Imrattanatrai et al., AAAI 2025, a video-grounded dialogue dataset and metric for event-driven activities",
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
        conversation_view=conversation_view,
        sample_key=lambda item: item.dial_id,  # --limit: the same dialogues in every system's file
        describe=describe,
        figures=figures,
        scales=dict(SCALES),
    )
)
