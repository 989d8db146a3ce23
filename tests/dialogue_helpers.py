"""Builders shared by the dialogue tests: conversations, a fast embedding, a scripted judge."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from dialeval.testing.scripted import prompt_text
from tests.test_mmrc_graph import fake_embed  # noqa: F401  (a hashed bag of words instead of MiniLM: fast tests)

ALLERGY = "I am allergic to peanuts"
CONTRADICTION = "You could bake a peanut butter cake for the party."


def long_conversation(exchanges: int = 110, contradict_at: int = 100) -> dict[str, Any]:
    """A user states an allergy in the first turn; the assistant suggests peanuts much later.

    ``exchanges`` user/assistant pairs (2 turns each); the contradiction is the reply of
    exchange ``contradict_at`` (turn ``2 * contradict_at``)."""
    messages: list[dict[str, str]] = [
        {"role": "user", "content": f"Before we plan anything: {ALLERGY}."},
        {"role": "assistant", "content": "Thanks, I will keep that in mind for every suggestion."},
    ]
    for k in range(2, exchanges + 1):
        messages.append({"role": "user", "content": f"Next question number {k}: what should I prepare for day {k} of the event?"})
        reply = CONTRADICTION if k == contradict_at else f"For day {k}, prepare name tags, water and a printed schedule."
        messages.append({"role": "assistant", "content": reply})
    return {"id": "party", "messages": messages}


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0].strip()


def scripted_reviewer(messages: list[Any]) -> str:
    """Note-taker and judge in one script: the note keeps the allergy; the judge marks a
    reply inconsistent when its prompt shows both the allergy and the peanut suggestion."""
    text = prompt_text(messages)
    if "note-keeper" in text:
        note = json.loads(between(text, "<note>", "</note>"))
        if "allergic to peanuts" in between(text, "<exchange>", "</exchange>"):
            note.setdefault("user_facts", {})["allergy"] = "allergic to peanuts"
        return json.dumps(note)
    if "atomic facts" in text:  # split the text at commas and full stops
        claim = text.rsplit("<text>", 1)[1].split("</text>", 1)[0]  # the last tags: the system prompt names them too
        return json.dumps({"facts": [part.strip() for part in re.split(r"[,.]", claim) if part.strip()]})
    if "<facts>" in text:  # only the tightened bulb is in the lamp's documents
        facts = between(text, "<facts>", "</facts>").splitlines()
        return json.dumps({"verdicts": [
            {"fact": i + 1, "reason": "checked", "label": "supported" if "screwed" in fact else "unsupported"}
            for i, fact in enumerate(facts)
        ]})
    reply = re.findall(r'<reply turn="\d+">(.*?)</reply>', text, re.S)[-1]
    bad = "peanut" in reply and "allergic to peanuts" in text.rsplit("<reply turn=", 1)[0]
    verdict = 1 if bad else 5
    return json.dumps({"rationale": "contradicts the allergy" if bad else "fits what the user said", "verdict": verdict})
