"""VDAct records to numbers: scores per system and dimension, their agreement with humans and the baselines, per-turn units for `compare`."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from dialeval.config import ConfigError
from dialeval.metrics.paired import system_tests
from dialeval.metrics.text import load_wordnet, resolve_spice_jar
from dialeval.protocols.vdact.options import NO_ANSWER_STATUS, DIMENSIONS, UNREADABLE_RULES, LABELS, VdactOptions, parse_options
from dialeval.protocols.vdact.metrics import SCALES, headline_scores, human_agreement, score_summary, type_breakdown


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
    paired = system_tests({name: _system_scores(rows, dims, unreadable_as) for name, rows in systems.items()}, scales=dict(SCALES))
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
