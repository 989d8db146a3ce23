"""MMDU items: the dialogues (and given answers) read for a run, the graph's input, the record kept of each turn, its calls and what the run judged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialeval.benchmarks import RunFacts
from dialeval.config import parse_options
from dialeval.protocols.mmdu.data import MmduItem, load_dialogues, load_human_scores, load_predictions
from dialeval.protocols.mmdu.metrics import DIMENSIONS


def read_options(options: dict[str, Any]):
    from dialeval.protocols.mmdu.common import MmduOptions

    return parse_options(MmduOptions, options, "mmdu")


def load(path: Path, options: dict[str, Any]) -> list[MmduItem]:
    opts = read_options(options)
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


def calls_per_item(item: MmduItem, options: dict[str, Any]) -> int:
    """One judge call per turn, and one responder call per turn unless answers are given
    (a reply that errors ends the dialogue early: the bar then stops short of its total)."""
    turns = len(item.dialogue.turns)
    return turns if item.answers is not None else 2 * turns


def describe(run: RunFacts) -> str:
    """A predictions file's answers or the responder's, and the judge that scored them."""
    judged = f"judged by `{run.model('judge')}` against the reference answers in `{run.data}`"
    if run.predictions:
        return f"the answers in `{run.predictions}` to the questions in `{run.data}`, {judged}"
    return f"answers of `{run.model('responder')}` (role responder) to the questions in `{run.data}`, {judged}"
