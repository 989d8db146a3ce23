"""MMRC items: the conversations read for a run, the graph's input, the record kept of each question and what the run evaluated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialeval.benchmarks import RunFacts
from dialeval.config import parse_options
from dialeval.protocols.mmrc.data import Conversation, load_conversations
from dialeval.protocols.mmrc.metrics import ep_counts, image_hits


def _options(options: dict[str, Any]):
    from dialeval.protocols.mmrc.common import MmrcOptions

    return parse_options(MmrcOptions, options, "mmrc")


def load(path: Path, options: dict[str, Any]) -> list[Conversation]:
    _options(options)  # a bad option stops the run before any item starts
    return load_conversations(path)


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
        # the model's own replies, which later turns and questions saw (the viewer shows them)
        "replies": [{"turn": r["turn"], "text": r["text"], "status": r["call"]["status"]} for r in replies],
        "note": ok_notes[-1] if ok_notes else None,
        "note_updates": [{"turn": u["turn"], "status": u["call"]["status"], "change": u["change"]} for u in updates],
        "questions": _question_rows(item, state),
        "calls": calls,
    }


NOTES = {"both": "without and with NOTE-TAKING", "on": "with NOTE-TAKING", "off": "without NOTE-TAKING"}


def describe(run: RunFacts) -> str:
    """The responder's answers, in the note-taking conditions the run asked for."""
    return f"answers of `{run.model('responder')}` to the questions in `{run.data}`, {NOTES[run.options.get('note_taking', 'both')]}"
