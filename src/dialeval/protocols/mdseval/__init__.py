"""`mdseval`: how far can a judge of multimodal dialogue summaries be trusted?

One item is one dialogue with its candidate summaries and human scores. The selected
evaluators (pointwise, pairwise in both orders, faithfulness, Image-to-Prompt,
Checklist-CoT) judge every summary; the report sets them against the human means as
the paper's Tables 3-5 do, with 95% bootstrap intervals over dialogues, the positional
bias of the pairwise judge, score histograms (PNG), and the cost of the whole file.
Model-free tools: ``dialeval metrics mdseval-agreement | mdseval-meki | mdseval-select``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from dialeval.benchmarks import Benchmark, RunFacts, register_benchmark
from dialeval.protocols.mdseval.view import conversation_view
from dialeval.protocols.mdseval.figures import figures
from dialeval.config import parse_options
from dialeval.models.usage import estimate_text
from dialeval.report.tables import markdown_table, num, row, rule
from dialeval.protocols.mdseval.data import ASPECTS, SCALES, SHORT, MdsDialogue, load_mdseval
from dialeval.protocols.mdseval import metrics as mm
from dialeval.protocols.mdseval.common import ROLES
from dialeval.protocols.mdseval.human import human_mean, majority_label, summary_faithfulness
from dialeval.protocols.mdseval import checklist, faithfulness, image_prompt, pairwise, pointwise, summarizer  # noqa: F401  (registers the agents)

SCORE_EVALUATORS = ("pointwise", "image_prompt", "checklist")
LABEL = {"pointwise": "MLLM-as-a-judge", "image_prompt": "Image-to-Prompt", "checklist": "Checklist-CoT", "pairwise": "MLLM-as-a-judge (pairwise)", "faithfulness": "MLLM-as-a-judge"}


def _options(options: dict[str, Any]):
    from dialeval.protocols.mdseval.common import MdsevalOptions

    return parse_options(MdsevalOptions, options, "mdseval")


def load(path: Path, options: dict[str, Any]) -> list[MdsDialogue]:
    opts = _options(options)
    items = load_mdseval(path, dialogues=opts.dialogues, images=opts.image_dir)
    for item in items:
        assert item.__pydantic_extra__ is not None  # MdsDialogue keeps extra fields
        item.__pydantic_extra__["file_dialogues"] = len(items)  # for the whole-file cost estimate
        item.votes_rule = opts.faithfulness_votes
    return items


def _graph():
    from dialeval.protocols.mdseval.graph import build_graph

    return build_graph()


def to_input(item: MdsDialogue, options: dict[str, Any]) -> dict[str, Any]:
    return {"record": item.model_dump(by_alias=True, exclude_none=True)}


def human_side(item: MdsDialogue) -> dict[str, Any]:
    """The paper's aggregation: means per aspect, a label per sentence (the item's vote
    rule, see :func:`majority_label`), Appendix F per summary."""
    means = {a: [human_mean(h.scores(a)) for h in item.human_annotations] for a in ASPECTS}
    ratings = {a: [h.scores(a) for h in item.human_annotations] for a in ASPECTS}
    sentences = [
        [majority_label(h.faithfulness_sentence.get(str(i + 1), []), item.votes_rule) for i in range(len(s.summary_sentence_lvl))]
        for s, h in zip(item.summary_list, item.human_annotations)
    ]
    return {
        "means": means,
        "ratings": ratings,
        "sentence_labels": sentences,
        "summary_labels": [summary_faithfulness(labels) for labels in sentences],
    }


def to_record(item: MdsDialogue, state: dict[str, Any]) -> dict[str, Any]:
    from dialeval.models.usage import current_ledger

    ledger = current_ledger.get()
    rows = {k: state.get(k) or [] for k in ("scores", "preferences", "faithfulness", "captions", "candidates")}
    calls = [r["call"] for k in rows for r in rows[k] if r.get("call")]
    inputs = sorted({r["input"] for k in ("scores", "preferences", "faithfulness") for r in rows[k] if r.get("input")})
    return {
        "id": item.id,
        "summaries": len(item.summary_list),
        "judge_input": inputs,
        "human": human_side(item) if item.human_annotations else None,
        **{k: [{x: v for x, v in r.items() if x != "call"} | {"status": (r.get("call") or {}).get("status", "skipped")} for r in rows[k]] for k in rows},
        "usage": ledger.totals() if ledger is not None else {},
        "file_dialogues": (item.model_extra or {}).get("file_dialogues", 1),
        "calls": calls,
    }


# ------------------------------------------------------------------ aggregation


def _score_table(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    evaluators = sorted({r["evaluator"] for rec in records for r in rec["scores"]}, key=SCORE_EVALUATORS.index)
    for ev in evaluators:
        out[ev] = {}
        aspects = [a for a in ASPECTS if any(r["aspect"] == a and r["evaluator"] == ev for rec in records for r in rec["scores"])]
        for aspect in aspects:
            groups, unreadable = [], 0
            for rec in records:
                means = rec["human"]["means"][aspect] if rec["human"] else None
                pairs = []
                for r in rec["scores"]:
                    if r["evaluator"] != ev or r["aspect"] != aspect:
                        continue
                    if r["score"] is None:
                        unreadable += 1
                    elif means and means[r["summary"]] is not None:
                        pairs.append((float(r["score"]), means[r["summary"]]))
                groups.append(pairs)
            out[ev][aspect] = mm.score_figures(groups, unreadable)
    return out


def _pairwise(records: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    aspects = [a for a in ASPECTS if any(p["aspect"] == a for rec in records for p in rec["preferences"])]
    for aspect in aspects:
        picks: dict[str, list[list[tuple[int, int]]]] = {"both": [], "original": [], "swapped": []}
        firsts: dict[str, list[list[int]]] = {"original": [], "swapped": []}
        human_first: dict[str, list[list[int]]] = {"original": [], "swapped": []}
        unreadable = ties = consistent = both_readable = 0
        for rec in records:
            means = rec["human"]["means"][aspect] if rec["human"] else None
            per: dict[str, list[tuple[int, int]]] = {k: [] for k in picks}
            first_share: dict[str, list[int]] = {k: [] for k in firsts}
            human_share: dict[str, list[int]] = {k: [] for k in firsts}
            chosen: dict[tuple[int, int], list[int]] = defaultdict(list)
            for p in rec["preferences"]:
                if p["aspect"] != aspect:
                    continue
                order = "swapped" if p["swapped"] else "original"
                shown = (p["first"], p["second"])
                if p["pick"] is None:
                    unreadable += 1
                    continue
                first_share[order].append(p["pick"])
                chosen[tuple(sorted(shown))].append(shown[p["pick"]])
                human = mm.human_preference(means[shown[0]], means[shown[1]]) if means else None
                if human is None:
                    ties += 1
                    continue
                human_share[order].append(human)
                per["both"].append((shown[p["pick"]], shown[human]))
                per[order].append((shown[p["pick"]], shown[human]))
            for k in picks:
                picks[k].append(per[k])
            for k in firsts:
                firsts[k].append(first_share[k])
                human_first[k].append(human_share[k])
            for answers in chosen.values():
                if len(answers) == 2:
                    both_readable += 1
                    consistent += answers[0] == answers[1]
        out[aspect] = {
            "accuracy": mm.estimate(picks["both"], mm.accuracy, n=sum(map(len, picks["both"]))),
            "accuracy_original": mm.estimate(picks["original"], mm.accuracy, n=sum(map(len, picks["original"]))),
            "accuracy_swapped": mm.estimate(picks["swapped"], mm.accuracy, n=sum(map(len, picks["swapped"]))),
            "first_share": {k: mm.estimate(firsts[k], mm.share_first, n=sum(map(len, firsts[k]))) for k in firsts},
            "human_first_share": {k: mm.share_first(human_first[k]) for k in firsts},
            "consistency": 100 * consistent / both_readable if both_readable else None,
            "pairs_both_readable": both_readable,
            "unreadable": unreadable,
            "human_ties": ties,
        }
    return out


def _faithfulness(records: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for level in ("summary", "sentence"):
        rows = [(rec, f) for rec in records for f in rec["faithfulness"] if f["level"] == level]
        if not rows:
            continue
        groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
        unreadable = no_human = 0
        for rec, f in rows:
            groups[rec["id"]]  # every dialogue is a group, even an empty one
            if f["label"] is None:
                unreadable += 1
                continue
            human = None
            if rec["human"]:
                human = (
                    rec["human"]["summary_labels"][f["summary"]]
                    if level == "summary"
                    else rec["human"]["sentence_labels"][f["summary"]][f["sentence"]]
                )
            if human is None:
                no_human += 1
                continue
            groups[rec["id"]].append((f["label"], human))
        g = list(groups.values())
        pairs = [p for grp in g for p in grp]
        out[level] = {
            "balanced_accuracy": mm.estimate(g, mm.balanced_accuracy),
            "f1": mm.estimate(g, mm.macro_f1),
            "n": len(pairs),
            "unreadable": unreadable,
            "no_human_label": no_human,
            "judge_labels": dict(Counter(p[0] for p in pairs)),
            "human_labels": dict(Counter(p[1] for p in pairs)),
        }
    return out


def _usage(records: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(records)
    total: Counter = Counter()
    for r in records:
        total.update({k: v for k, v in r.get("usage", {}).items()})
    per = {k: total[k] / n for k in ("calls", "requests", "input_tokens", "output_tokens", "cost_usd")}
    file_n = max(r.get("file_dialogues", 1) for r in records)
    return {
        "dialogues": n,
        "file_dialogues": file_n,
        "per_dialogue": per,
        "file_estimate": {k: per[k] * file_n for k in ("calls", "input_tokens", "output_tokens", "cost_usd")},
        "extrapolated": n < file_n,
        "cost_known": not total["unpriced_calls"],  # a model without a price: cost unknown, not 0
        "from_cache": bool(total["cached"]),  # cache hits cost nothing now: the file's cost is not measured
    }


def aggregate(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    seen = Counter(label for r in records for label in r["judge_input"])
    captions = Counter(c["from"] for r in records for c in r["captions"])
    return {
        "judge_input": dict(seen),
        "captioner_input": dict(captions),
        "scores": _score_table(records),
        "pairwise": _pairwise(records),
        "faithfulness": _faithfulness(records),
        "usage": _usage(records),
        "with_human_scores": sum(1 for r in records if r["human"]),
    }


def score_dimensions(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = defaultdict(list)
    for rec in records:
        for r in rec["scores"]:
            if r["score"] is not None:
                low, high = SCALES[r["aspect"]]
                out[f"{r['evaluator']} {r['aspect']} ({low}-{high})"].append(r["score"])
    return dict(sorted(out.items()))


def item_scores(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per evaluator and aspect, the score of each summary (unit ``<dialogue id>/<summary>``)."""
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for rec in records:
        for r in rec["scores"]:
            if r["score"] is not None:
                out[f"{r['evaluator']} {r['aspect']}"][f"{rec['id']}/{r['summary']}"] = float(r["score"])
    return dict(out)


# ------------------------------------------------------------------ tables


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


def plot_histograms(path: Path, records: list[dict[str, Any]]) -> Path | None:
    """One panel per aspect: share of each score value, human ratings vs every evaluator."""
    judged = [a for a in ASPECTS if any(r["aspect"] == a and r["score"] is not None for rec in records for r in rec["scores"])]
    if not judged:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(1, len(judged), figsize=(3.2 * len(judged), 3), squeeze=False)
    try:
        for ax, aspect in zip(axes[0], judged):
            low, high = SCALES[aspect]
            values = np.arange(low, high + 1)
            series: dict[str, list[int]] = {}
            series["human"] = [s for rec in records if rec["human"] for scores in rec["human"]["ratings"][aspect] for s in scores]
            for rec in records:
                for r in rec["scores"]:
                    if r["aspect"] == aspect and r["score"] is not None:
                        series.setdefault(LABEL[r["evaluator"]], []).append(r["score"])
            width = 0.8 / len(series)
            for i, (name, scores) in enumerate(series.items()):
                counts = Counter(scores)
                shares = [counts[int(v)] / len(scores) if scores else 0 for v in values]
                ax.bar(values + (i - (len(series) - 1) / 2) * width, shares, width, label=f"{name} (n={len(scores)})")
            ax.set_title(SHORT[aspect], fontsize=10)
            ax.set_xticks(values)
            ax.set_ylim(0, 1)
        axes[0][0].set_ylabel("share of scores")
        axes[0][-1].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path, dpi=100)
    finally:
        plt.close(fig)
    return path


def after_run(run_dir: Path, records: list[dict[str, Any]], m: dict[str, Any]) -> None:
    """Score histograms (PNG) and, when summaries were generated, the candidate pool (JSONL)."""
    import json

    plot_histograms(Path(run_dir) / "score_histograms.png", records)
    pool = [
        {"dialogue_id": rec["id"], "setup": c["setup"], "summary": c["summary"]}
        for rec in records
        for c in rec["candidates"]
        if c["summary"] is not None
    ]
    if pool:
        from dialeval.secrets import scrub

        lines = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in pool)
        (Path(run_dir) / "candidates.jsonl").write_text(scrub(lines), encoding="utf-8")


def metrics_only(paths: list[Path], options: dict[str, Any]) -> str:
    from dialeval.protocols.mdseval.tools import run_tool

    return run_tool(paths, options)


GLOSSARY = {code: aspect for aspect, code in SHORT.items()}


def describe(run: RunFacts) -> str:
    """The judges set against the human ratings (and the summarizer, when it wrote summaries)."""
    evaluators = run.options.get("evaluators") or ["pointwise", "pairwise", "faithfulness"]
    line = (f"the judges ({', '.join(f'{e}: `{run.model(e)}`' for e in evaluators)}), "
            f"set against the human ratings of the summaries in `{run.data}`")
    if run.options.get("setups"):
        line += f"; new summaries written by `{run.model('summarizer')}` are judged too"
    return line


register_benchmark(
    Benchmark(
        name="mdseval",
        title="MDSEval: meta-evaluation of judges of multimodal dialogue summaries",
        paper="Liu et al., MDSEval: a meta-evaluation benchmark for multimodal dialogue summarization",
        load=load,
        graph=_graph,
        to_input=to_input,
        to_record=to_record,
        aggregate=aggregate,
        score_dimensions=score_dimensions,
        tables=tables,
        **ROLES.benchmark_fields(),
        system_output="summaries",
        after_run=after_run,
        metrics_only=metrics_only,
        item_scores=item_scores,
        conversation_view=conversation_view,
        glossary=GLOSSARY,
        describe=describe,
        figures=figures,
        scales={a: (float(lo), float(hi)) for a, (lo, hi) in SCALES.items()},
    )
)
