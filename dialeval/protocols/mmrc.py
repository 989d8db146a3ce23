"""`mmrc`: six conversational abilities, answered without and with NOTE-TAKING.

Each conversation is replayed turn by turn (recorded or live replies); with NOTE-TAKING
on, a note-taker keeps a JSON note in Chroma after every user turn. The responder then
answers the six questions with and/or without the notes, judges score each answer 0-5,
and the objective precisions (EP, IMP, RP) are computed. The report gives both
conditions and their deltas (the paper's Tables 3 and 6) and a radar chart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


from dialeval.benchmarks import Benchmark, register_benchmark
from dialeval.config import parse_options
from dialeval.data.mmrc import ABILITIES, Conversation, load_conversations
from dialeval.metrics import mmrc as metrics
from dialeval.metrics.mmrc import ep_counts, image_hits

CONDITION_LABEL = {"off": "responder", "on": "+ NOTE-TAKING"}


def _options(options: dict[str, Any]):
    from dialeval.agents.mmrc_common import MmrcOptions

    return parse_options(MmrcOptions, options, "mmrc")


def load(path: Path, options: dict[str, Any]) -> list[Conversation]:
    _options(options)  # a bad option stops the run before any item starts
    return load_conversations(path)


def _graph():
    from dialeval.graphs.mmrc import build_graph

    return build_graph()


def to_input(item: Conversation, options: dict[str, Any]) -> dict[str, Any]:
    return {"item": item.model_dump()}


def _question_rows(item: Conversation, state: dict[str, Any]) -> list[dict[str, Any]]:
    def keyed(name: str) -> dict[tuple[str, int], dict[str, Any]]:
        return {(x["condition"], x["index"]): x for x in state.get(name) or []}

    grades, items, refusals = keyed("grades"), keyed("item_checks"), keyed("refusal_checks")
    rows = []
    for answer in state.get("answers") or []:
        key = (answer["condition"], answer["index"])
        question = item.questions[answer["index"]]
        call = answer["call"]
        text = call["raw"].strip()
        grade = grades.get(key)
        score = grade["call"]["value"]["score"] if grade and grade["call"]["status"] == "ok" else None
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
                "score": score,
                "judge_status": grade["call"]["status"] if grade else None,
                "ep": ep,
                "imp": image_hits(text, question.images) if question.images and call["status"] == "ok" else None,
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
    calls += [g["call"] for g in state.get("grades") or []]
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


def score_dimensions(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for record in records:
        for q in record["questions"]:
            if q["score"] is not None:
                out.setdefault(f"{q['ability']} notes {q['condition']} (0-5)", []).append(q["score"])
    return dict(sorted(out.items()))


def _num(value: float | None, digits: int = 2, pct: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{100 * value:.1f}%" if pct else f"{value:.{digits}f}"


def _signed(value: float | None, pct: bool = False) -> str:
    if value is None:
        return ""
    return f" ({'+' if value >= 0 else ''}{100 * value:.1f})" if pct else f" ({'+' if value >= 0 else ''}{value:.2f})"


def tables(m: dict[str, Any]) -> str:
    conds = m.get("conditions", {})
    d = m.get("deltas", {})
    head = "| | " + " | ".join(ABILITIES) + " | overall | EP | IMP | RP |"
    lines = [
        "Judge scores are 0-5 means per ability; EP and IMP are precisions (0-1), RP a share."
        " On the NOTE-TAKING row the change against the responder alone is in brackets.",
        "",
        head,
        "|---|" + "---:|" * (len(ABILITIES) + 4),
    ]
    for cond, s in conds.items():
        delta = d if cond == "on" else {}
        cells = [_num(s["abilities"][a]["mean"]) + _signed(delta.get(a)) for a in ABILITIES]
        cells.append(_num(s["overall"]) + _signed(delta.get("overall")))
        cells.append(_num(s["EP"]["value"], 3) + _signed(delta.get("EP")))
        cells.append(_num(s["IMP"]["value"], 3) + _signed(delta.get("IMP")))
        cells.append(_num(s["RP"]["value"], pct=True) + _signed(delta.get("RP"), pct=True))
        lines.append(f"| {CONDITION_LABEL[cond]} | " + " | ".join(cells) + " |")
    lines += ["", "What each figure rests on (scored / not scored):", "", "| | " + " | ".join(ABILITIES) + " | EP n (empty, skipped) | IMP n (skipped) | RP n (skipped) | answers ok / total |", "|---|" + "---|" * (len(ABILITIES) + 4)]
    for cond, s in conds.items():
        cells = [f"{s['abilities'][a]['n']} / {s['abilities'][a]['unscored']}" for a in ABILITIES]
        cells.append(f"{s['EP']['n']} ({s['EP']['empty']}, {s['EP']['skipped']})")
        cells.append(f"{s['IMP']['n']} ({s['IMP']['skipped']})")
        cells.append(f"{s['RP']['n']} ({s['RP']['skipped']})")
        cells.append(f"{s['answers'].get('ok', 0)} / {s['answers']['total']}")
        lines.append(f"| {CONDITION_LABEL[cond]} | " + " | ".join(cells) + " |")
    nt = m.get("note_taking", {})
    if nt.get("updates"):
        lines += ["", f"Note-taker: {nt['updates']} updates, {nt['ok']} usable, {nt['unusable']} unusable (note kept unchanged)."]
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


register_benchmark(
    Benchmark(
        name="mmrc",
        title="MMRC: six conversational abilities, with and without NOTE-TAKING",
        paper="mmrc.txt",
        load=load,
        graph=_graph,
        to_input=to_input,
        to_record=to_record,
        aggregate=aggregate,
        score_dimensions=score_dimensions,
        tables=tables,
        roles={
            "reply": "mmrc.reply",
            "notetaker": "mmrc.notetaker",
            "answer": "mmrc.answer",
            "judge": "mmrc.ability_judge",
            "item_extractor": "mmrc.item_extractor",
            "refusal_detector": "mmrc.refusal_detector",
        },
        after_run=after_run,
    )
)
