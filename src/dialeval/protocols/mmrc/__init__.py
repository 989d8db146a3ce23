"""`mmrc`: six conversational abilities, answered without and with NOTE-TAKING.

Each conversation is replayed turn by turn, the model under test replying itself (the
paper's Algorithm 1; recorded replies are an option); with NOTE-TAKING on, a note-taker
keeps a JSON note in Chroma after every user turn. The questions are then asked one
after another, without and/or with the note; judges score each answer 0-5 against its
label, and the objective precisions (EP, IMP, RP) are computed. The report gives both
conditions, their deltas (the paper's Tables 3 and 6), the n and the failures of each
kind beside every figure, and a radar chart. docs/fidelity.md lists every choice.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


from dialeval.benchmarks import Benchmark, RunFacts, register_benchmark
from dialeval.protocols.mmrc.view import conversation_view
from dialeval.config import parse_options
from dialeval.report.paired import system_test_lines
from dialeval.report.tables import num, pct, row, rule
from dialeval.protocols.mmrc.data import ABILITIES, ABILITY_NAMES, Conversation, load_conversations
from dialeval.protocols.mmrc import metrics as metrics
from dialeval.protocols.mmrc.metrics import ep_counts, image_hits
from dialeval.protocols.mmrc.common import ROLES
from dialeval.protocols.mmrc import helpers, judge, notetaker, responder  # noqa: F401  (registers the agents)

CONDITION_LABEL = {"off": "responder", "on": "+ NOTE-TAKING"}


def _options(options: dict[str, Any]):
    from dialeval.protocols.mmrc.common import MmrcOptions

    return parse_options(MmrcOptions, options, "mmrc")


def load(path: Path, options: dict[str, Any]) -> list[Conversation]:
    _options(options)  # a bad option stops the run before any item starts
    return load_conversations(path)


def _graph():
    from dialeval.protocols.mmrc.graph import build_graph

    return build_graph()


def to_input(item: Conversation, options: dict[str, Any]) -> dict[str, Any]:
    """The graph input is the conversation record itself (image paths resolved)."""
    return item.model_dump()


def _question_rows(item: Conversation, state: dict[str, Any]) -> list[dict[str, Any]]:
    def keyed(name: str) -> dict[tuple[str, int], dict[str, Any]]:
        return {(x["condition"], x["index"]): x for x in state.get(name) or []}

    grades, items, refusals = keyed("grades"), keyed("item_checks"), keyed("refusal_checks")
    rows = []
    for answer in sorted(state.get("answers") or [], key=lambda a: (a["condition"] != "off", a["index"])):
        key = (answer["condition"], answer["index"])
        question = item.questions[answer["index"]]
        call = answer["call"]
        text = call["raw"].strip()
        grade = grades.get(key)
        check = items.get(key)
        ep = None
        if check is not None:
            n_model, n_hit = ep_counts(check["matches"])
            ep = {"status": check["status"], "method": check["method"], "items": check["items"], "n_model": n_model, "n_hit": n_hit}
        refusal = refusals.get(key)
        rows.append(
            {
                "condition": answer["condition"],
                "index": answer["index"],
                "ability": question.ability,
                "format": question.format,
                "question": question.question,
                "reference": question.answer,
                "refuse": question.refuse,
                "answer": text,
                "answer_status": call["status"],
                "notes_mode": answer["notes_mode"],
                "notes_entries": answer["notes_entries"],
                "notes_total": answer["notes_total"],
                "score": grade["score"] if grade else None,
                "score_source": grade["source"] if grade else None,
                "judge_status": grade["call"]["status"] if grade and grade["call"] else None,
                "ep": ep,
                "imp": image_hits(text, question.images) if question.images and call["status"] != "error" else None,
                "refusal": None
                if refusal is None
                else {k: refusal[k] for k in ("expected", "refused", "status", "method")},
            }
        )
    return rows


def to_record(item: Conversation, state: dict[str, Any]) -> dict[str, Any]:
    replies = state.get("replies") or []
    updates = state.get("note_updates") or []
    ok_notes = [u["call"]["value"] for u in updates if u["call"]["status"] == "ok"]
    calls = [r["call"] for r in replies] + [u["call"] for u in updates]
    calls += [a["call"] for a in state.get("answers") or []]
    calls += [g["call"] for g in state.get("grades") or [] if g["call"]]
    calls += [c["call"] for name in ("item_checks", "refusal_checks") for c in state.get(name) or [] if c.get("call")]
    return {
        "id": item.id,
        "domain": item.domain,
        "turns": len(item.turns),
        "images": len(item.images),
        "live_replies": len(replies),
        "note": ok_notes[-1] if ok_notes else None,
        "note_updates": [{"turn": u["turn"], "status": u["call"]["status"], "change": u["change"]} for u in updates],
        "questions": _question_rows(item, state),
        "calls": calls,
    }


def aggregate(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    return metrics.aggregate(records)


def _dimension(condition: str, metric: str) -> str:
    return f"{metric}, notes {condition}"


def item_scores(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per condition: the judge score (0-5) of every "<conversation id>/<ability>" (the mean
    when a conversation has several questions of one ability), and EP / IMP per question
    of theirs; unreadable verdicts are left out."""
    collected: dict[str, dict[str, list[float]]] = {}

    def add(dimension: str, unit: str, value: float | None) -> None:
        if value is not None:
            collected.setdefault(dimension, {}).setdefault(unit, []).append(value)

    for record in records:
        for q in record["questions"]:
            unit = f"{record['id']}/{q['ability']}"
            add(_dimension(q["condition"], "score (0-5)"), unit, q["score"])
            if q.get("ep") is not None and q["ep"]["status"] == "ok":
                add(_dimension(q["condition"], "EP"), unit, metrics.extraction_precision(q["ep"]["n_model"], q["ep"]["n_hit"]))
            if q.get("imp") is not None:
                add(_dimension(q["condition"], "IMP"), unit, metrics.image_precision(q["imp"]["hits"], q["imp"]["misses"]))
    return {
        dim: {unit: sum(v) / len(v) for unit, v in sorted(units.items())} for dim, units in sorted(collected.items())
    }


def score_dimensions(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Judge scores per ability and condition, for the report's score histograms."""
    out: dict[str, list[float]] = {}
    for record in records:
        for q in record["questions"]:
            if q["score"] is not None and q["score_source"] == "judge":
                out.setdefault(f"{q['ability']} notes {q['condition']} (0-5)", []).append(q["score"])
    return dict(sorted(out.items()))


def _signed(value: float | None, as_pct: bool = False) -> str:
    if value is None:
        return ""
    return f"{num(100 * value, 1, signed=True)} pts" if as_pct else num(value, signed=True)


FAILURE_HEAD = row([
    "figure", "value", "change", "n", "cut off (judged as is)", "empty (scored 0)", "judge or helper failed (left out)",
    "errored (left out)", "also",
])


def _row(name: str, value: str, change: str, figure: dict[str, Any], failed_key: str | None, also: str = "") -> str:
    failed = figure.get(failed_key, 0) if failed_key else "-"
    return row([name, value, change, figure["n"], figure["cut_off"], figure["empty"], failed, figure["errored"], also])


def tables(m: dict[str, Any]) -> str:
    conds = m.get("conditions", {})
    d = m.get("deltas", {})
    lines = [
        "Judge scores are 0-5 means per ability; EP and IMP are precisions (0-1); RP is refusals given"
        " / refusals expected. Beside each figure: n (what it rests on) and the failures of each kind:"
        " the model under test's own (cut-off answers judged as they stand, empty answers scored 0) count"
        " in it; unreadable judge or helper verdicts and errored calls are left out. On the NOTE-TAKING"
        " table, change is against the responder alone.",
    ]
    for cond, s in conds.items():
        delta = d if cond == "on" else {}
        lines += ["", f"**{CONDITION_LABEL[cond]}** (notes {cond})", "", FAILURE_HEAD, rule("lrrrrrrrl")]
        for a in ABILITIES:
            lines.append(_row(f"{a} (0-5)", num(s["abilities"][a]["mean"]), _signed(delta.get(a)), s["abilities"][a], "judge_failed"))
        n_overall = sum(s["abilities"][a]["n"] for a in ABILITIES)
        lines.append(row(["overall (0-5)", num(s["overall"]), _signed(delta.get("overall")), n_overall, None, None, None, None, "mean of the ability means"]))
        ep, imp, rp = s["EP"], s["IMP"], s["RP"]
        lines.append(_row("EP", num(ep["value"], 3), _signed(delta.get("EP")), ep, "helper_failed", f"named no item: {ep['named_none']} (scored 0)"))
        lines.append(_row("IMP", num(imp["value"], 3), _signed(delta.get("IMP")), imp, None))
        lines.append(
            _row("RP", pct(rp["value"]), _signed(delta.get("RP"), as_pct=True), rp, "helper_failed",
                 f"{rp['refused']} of {rp['n']} refused; refusals where an answer was due: {rp['false_refusals']} of {rp['answerable']}")
        )  # fmt: skip
        answers = s["answers"]
        counts = ", ".join(f"{k} {v}" for k, v in sorted(answers.items()) if k != "total")
        cut = f"; notes cut to fit the context window: {s['notes_cut']}" if cond == "on" else ""
        lines += ["", f"Answers: {answers['total']} ({counts}){cut}."]
    nt = m.get("note_taking", {})
    if nt.get("updates"):
        lines += ["", f"Note-taker: {nt['updates']} updates, {nt['ok']} usable, {nt['unusable']} unusable (note kept unchanged)."]
    lines += system_test_lines(m.get("condition_tests") or [], unit="question", scores="judge scores", compared="NOTE-TAKING off (A) and on (B)")
    if conds:
        lines += ["", "Radar chart of the six abilities: `radar.png` in the run folder."]
    return "\n".join(lines)


def plot_radar(path: Path, m: dict[str, Any]) -> Path | None:
    """The six ability means of each condition on one radar chart (PNG)."""
    conds = m.get("conditions", {})
    if not conds:
        return None
    import math

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    angles = [2 * math.pi * i / len(ABILITIES) for i in range(len(ABILITIES))]
    fig = plt.figure(figsize=(4.5, 4.5))
    try:
        ax = fig.add_subplot(projection="polar")
        scored = [False] * len(ABILITIES)
        for cond, summary in conds.items():
            # an ability without a score is a gap in the line, never a point at 0
            values = [math.nan if v is None else v for v in metrics.radar_values(summary)]
            scored = [was or not math.isnan(v) for was, v in zip(scored, values)]
            ax.plot(angles + angles[:1], values + values[:1], marker="o", label=CONDITION_LABEL[cond])
            if not any(math.isnan(v) for v in values):
                ax.fill(angles + angles[:1], values + values[:1], alpha=0.15)
        ax.set_xticks(angles)
        ax.set_xticklabels([a if ok else f"{a}\n(no score)" for a, ok in zip(ABILITIES, scored)])
        ax.set_ylim(0, 5)
        ax.set_title("MMRC abilities (0-5; no score = gap)", fontsize=10)
        ax.legend(loc="lower right", bbox_to_anchor=(1.15, -0.1), fontsize=8)
        fig.savefig(path, dpi=100, bbox_inches="tight")
    finally:
        plt.close(fig)
    return path


def after_run(run_dir: Path, records: list[dict[str, Any]], m: dict[str, Any]) -> None:
    plot_radar(Path(run_dir) / "radar.png", m)


GLOSSARY = {**ABILITY_NAMES, "EP": "extraction precision", "IMP": "image management precision", "RP": "refuse precision"}
NOTES = {"both": "without and with NOTE-TAKING", "on": "with NOTE-TAKING", "off": "without NOTE-TAKING"}


def describe(run: RunFacts) -> str:
    """The responder's answers, in the note-taking conditions the run asked for."""
    return f"answers of `{run.model('responder')}` to the questions in `{run.data}`, {NOTES[run.options.get('note_taking', 'both')]}"


register_benchmark(
    Benchmark(
        name="mmrc",
        title="MMRC: six conversational abilities, with and without NOTE-TAKING",
        paper="Xue et al., MMRC: a benchmark for understanding multimodal LLMs in real-world conversation",
        load=load,
        graph=_graph,
        to_input=to_input,
        to_record=to_record,
        aggregate=aggregate,
        score_dimensions=score_dimensions,
        tables=tables,
        item_scores=item_scores,
        conversation_view=conversation_view,
        **ROLES.benchmark_fields(),
        after_run=after_run,
        glossary=GLOSSARY,
        describe=describe,
    )
)
