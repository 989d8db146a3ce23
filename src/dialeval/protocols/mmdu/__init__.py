"""`mmdu`: multi-turn, multi-image answers judged turn by turn on six dimensions and Overall.

One item is one dialogue. The model under test answers its questions in turn (role
``responder``), unless a predictions file gives the answers; the judge (role ``judge``)
scores every answered turn 1-10 on Creativity, Richness, Visual Perception, Logical
Coherence, Answer Accuracy, Image Relationship Understanding and Overall. Scores are
averaged over turns, then over dialogues, x10 (the paper's Table 2). Expert scores
give judge-vs-human Pearson/Spearman/Kendall; runs of several judges on the same
answers give the judge-vs-judge table (``dialeval metrics mmdu --predictions RUN RUN``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dialeval.benchmarks import Benchmark, RunFacts, register_benchmark
from dialeval.protocols.mmdu.view import conversation_view
from dialeval.protocols.mmdu.figures import figures
from dialeval.config import parse_options
from dialeval.report.tables import markdown_table, num
from dialeval.protocols.mmdu.data import MmduItem, load_dialogues, load_human_scores, load_predictions
from dialeval.protocols.mmdu import metrics as metrics
from dialeval.protocols.mmdu.metrics import DIMENSIONS, SHORT
from dialeval.protocols.mmdu.common import ROLES
from dialeval.protocols.mmdu import judge, responder  # noqa: F401  (registers the agents)


def _options(options: dict[str, Any]):
    from dialeval.protocols.mmdu.common import MmduOptions

    return parse_options(MmduOptions, options, "mmdu")


def load(path: Path, options: dict[str, Any]) -> list[MmduItem]:
    opts = _options(options)
    dialogues = load_dialogues(path, opts.image_root)
    answers = load_predictions(opts.predictions, dialogues) if opts.predictions else {}
    human: dict[tuple[str, int], float] = load_human_scores(opts.human_scores, dialogues) if opts.human_scores else {}
    system = opts.system or (Path(opts.predictions).stem if opts.predictions else "responder")
    return [
        MmduItem(
            id=d.id,
            dialogue=d,
            answers=answers.get(d.id),
            system=system,
            human={turn: score for (did, turn), score in human.items() if did == d.id},
        )
        for d in dialogues
    ]


def _graph():
    from dialeval.protocols.mmdu.graph import build_graph

    return build_graph()


def to_input(item: MmduItem, options: dict[str, Any]) -> dict[str, Any]:
    record = item.dialogue.model_dump(mode="json")
    record["conversations"] = [{"from": m["role"], "value": m["value"]} for m in record["conversations"]]
    return {**record, "answers": item.answers}


def to_record(item: MmduItem, state: dict[str, Any]) -> dict[str, Any]:
    replies = {r["turn"]: r for r in state.get("replies") or []}
    grades = {g["turn"]: g for g in state.get("grades") or []}
    turns = []
    for turn in item.dialogue.turns:
        reply = replies.get(turn.number)
        grade = grades.get(turn.number)
        dims = (grade or {}).get("dimensions") or {}
        answer: str | None
        if item.answers is not None:
            answer, answer_status = item.answers[turn.number - 1], "given"
        else:
            answer = reply["text"] if reply else None
            answer_status = reply["call"]["status"] if reply else "not asked"
        turns.append(
            {
                "turn": turn.number,
                "answered": answer is not None and answer_status != "error",
                "answer_status": answer_status,
                "answer": answer,
                "history_turns": reply["history_turns"] if reply else None,
                "dropped_turns": reply["dropped_turns"] if reply else 0,
                "prompt_tokens": reply["prompt_tokens"] if reply else None,
                "judge_status": grade["call"]["status"] if grade else None,
                "judge_images": grade["images"] if grade else [],
                "scores": {d: dims.get(d, {}).get("score") for d in DIMENSIONS},
                "unparsed": {d: dims[d]["reason"] for d in DIMENSIONS if d in dims and dims[d]["status"] != "ok"},
                "explanation": grade["explanation"] if grade else "",
                "human": item.human.get(turn.number),
            }
        )
    calls = [r["call"] for r in state.get("replies") or []] + [g["call"] for g in state.get("grades") or []]
    return {
        "id": item.id,
        "system": item.system,
        "images": len(item.dialogue.image),
        "dropped_turns": sum(t["dropped_turns"] for t in turns),
        "turns": turns,
        "calls": calls,
    }


def aggregate(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    opts = _options(options)
    out = {
        "system": records[0]["system"] if records else None,
        "scores": metrics.benchmark_scores(records, opts.aggregation),
        "human": metrics.human_agreement(records),
        # pictures sent with judge requests: dry runs count their caption lines, not image tokens
        "judge_pictures": sum(len(t["judge_images"]) for r in records for t in r["turns"] if t["judge_status"] is not None),
        "context": {
            "window": opts.context_window,
            "policy": opts.overflow,
            "dialogues_with_dropped_turns": {r["id"]: r["dropped_turns"] for r in records if r["dropped_turns"]},
        },
    }
    return out


def score_dimensions(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    return {
        f"{d} (1-10)": [t["scores"][d] for r in records for t in r["turns"] if t["scores"].get(d) is not None]
        for d in DIMENSIONS
    }


def item_scores(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per dimension, the readable 1-10 score of every judged turn, keyed ``<dialogue id>/<turn>``."""
    return {
        d: {f"{r['id']}/{t['turn']}": t["scores"][d] for r in records for t in r["turns"] if t["scores"].get(d) is not None}
        for d in DIMENSIONS
    }


def tables(m: dict[str, Any]) -> str:
    s = m["scores"]
    how = "mean over each dialogue's turns, then over dialogues" if s["aggregation"] == "dialogue" else "mean over all turns"
    lines = [
        f"Scores 1-10 x10 ({how}); Overall is the paper's Avg. column.",
        "",
        *metrics.scores_table({m["system"]: s}, label="system"),
        "",
        f"{s['dialogues']} dialogues, {s['turns']} turns: {s['answered']} answered, {s['judged']} judged, "
        f"{s['judge_failed']} judge answers unusable (left out). Pictures sent to the judge: {m['judge_pictures']}"
        " (dry runs count their caption lines, not image tokens).",
        "",
        *markdown_table(
            [None, *(SHORT[d] for d in DIMENSIONS)],
            [[label, *(s["dimensions"][d][key] for d in DIMENSIONS)] for label, key in (("turns scored", "turns"), ("unparsed (left out)", "unparsed"))],
            "l" + "r" * len(DIMENSIONS),
        ),
    ]
    ctx = m["context"]
    if ctx["window"] is not None:
        dropped = ctx["dialogues_with_dropped_turns"]
        lines += ["", f"Context window {ctx['window']} tokens, policy `{ctx['policy']}`: "
                  + (", ".join(f"`{k}` dropped {v} turn(s) of history" for k, v in dropped.items()) if dropped else "no turn dropped.")]
    human = m.get("human")
    if human:
        lines += [
            "",
            f"Judge vs expert Overall scores ({human['rated_turns']} rated turns, {human['judge_missing']} without a judge score):",
            "",
            *markdown_table(
                ["level", "n", "Pearson", "Spearman", "Kendall tau-b"],
                [[level, human[level]["n"], *(num(human[level][k], 3) for k in ("pearson", "spearman", "kendall_tau_b"))]
                 for level in ("turns", "dialogues")],
                "lrrrr",
            ),
        ]
    return "\n".join(lines)


def _judge_label(run_dir: Path) -> str:
    config = json.loads((run_dir / "config.json").read_text())
    ctx = config.get("context", {})
    model = ctx.get("models", {}).get("judge") or ctx.get("default_model") or {}
    return f"{model.get('spec', '?')} ({run_dir.name})"


def calls_per_item(item: MmduItem, options: dict[str, Any]) -> int:
    """One judge call per turn, and one responder call per turn unless answers are given
    (a reply that errors ends the dialogue early: the bar then stops short of its total)."""
    turns = len(item.dialogue.turns)
    return turns if item.answers is not None else 2 * turns


def compare_judges(paths: list[Path], options: dict[str, Any]) -> str:
    """Judge-vs-judge table of run folders that judged the same answers (``dialeval metrics mmdu``)."""
    from dialeval.run.folder import read_results

    runs = {}
    for path in paths:
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"{path} is not a run folder (no config.json)")
        runs[_judge_label(path)] = [row["result"] for row in read_results(path) if row["status"] == "ok"]
    return metrics.agreement_table(metrics.judge_agreement(runs, _options(options).aggregation))


GLOSSARY = {code: name for name, code in SHORT.items() if code != name.split()[0]}


def describe(run: RunFacts) -> str:
    """A predictions file's answers or the responder's, and the judge that scored them."""
    judged = f"judged by `{run.model('judge')}` against the reference answers in `{run.data}`"
    if run.predictions:
        return f"the answers in `{run.predictions}` to the questions in `{run.data}`, {judged}"
    return f"answers of `{run.model('responder')}` (role responder) to the questions in `{run.data}`, {judged}"


register_benchmark(
    Benchmark(
        name="mmdu",
        title="MMDU: multi-turn, multi-image answers judged on six dimensions and Overall",
        paper="Liu et al., MMDU: a multi-turn multi-image dialog understanding benchmark",
        load=load,
        graph=_graph,
        to_input=to_input,
        to_record=to_record,
        aggregate=aggregate,
        score_dimensions=score_dimensions,
        tables=tables,
        **ROLES.benchmark_fields(),
        metrics_only=compare_judges,
        calls_per_item=calls_per_item,
        item_scores=item_scores,
        conversation_view=conversation_view,
        glossary=GLOSSARY,
        describe=describe,
        figures=figures,
        scales={d: (1.0, 10.0) for d in DIMENSIONS},
    )
)
