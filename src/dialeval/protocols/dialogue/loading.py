"""Dialogue items: the options checked, the conversations read for a run, the graph's input and the record kept of each."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from dialeval.config import parse_options
from dialeval.errors import ConfigError, DataError
from dialeval.protocols.dialogue.common import DialogueOptions
from dialeval.conversation.data import Conversation, Turn, load_conversations, with_versus
from dialeval.protocols.dialogue.human import load_labels
from dialeval.conversation.labels import LabelWarning, only_labelled
from dialeval.conversation.rubric import load_rubric, parse_rubric
from dialeval.conversation.votes import holds_votes, read_votes
from dialeval.protocols.dialogue.view import image_label


def options_of(options: dict[str, Any]) -> DialogueOptions:
    """The options, with the rubric read and the chosen criteria checked (before any call)."""
    parsed = parse_options(DialogueOptions, options, "dialogue")
    rubric = load_rubric(parsed.rubric)
    names = [c.name for c in rubric.criteria]
    for name in parsed.criteria or []:
        if name not in names:
            raise ConfigError(f"dialogue option 'criteria': {name!r} is not a criterion of {rubric.source} ({', '.join(names)})")
    return parsed


def load(path: Path, options: dict[str, Any]) -> list[Conversation]:
    parsed = options_of(options)
    conversations = load_conversations(path, parsed.format, parsed.columns)
    if "rubric" not in parsed.model_fields_set:
        conversations = own_rubrics(conversations, path)
    named = [c.id for c in conversations if looks_like_a_name(c.system) and "system" not in c.metadata]
    if named:
        warnings.warn(f"{path}: field 'system' of {len(named)} conversations (first {named[0]!r}: "
                      f"{next(c.system for c in conversations if c.id == named[0])!r}) reads like a system's name, but it is "
                      "the system prompt the judge is shown; name the system under test in metadata.system", UserWarning, stacklevel=2)
    if parsed.human_scores and holds_votes(parsed.human_scores):  # issue 49: pairwise votes, for a versus run
        if not parsed.versus:
            raise ConfigError(f"{parsed.human_scores}: holds pairwise votes (a / b / tie): give option versus=FILE")
        read_votes(parsed.human_scores, load_rubric(parsed.rubric))  # bad votes stop before the first call
    elif parsed.human_scores:
        labels = load_labels(parsed.human_scores, load_rubric(parsed.rubric), conversations, parsed.human_rule,
                             majority_tie=parsed.majority_tie)
        for warning in labels.warnings:
            warnings.warn(warning, LabelWarning, stacklevel=2)
        if parsed.judge_only == "labelled":
            conversations = only_labelled(conversations, labels)
    elif parsed.judge_only == "labelled":
        raise ConfigError("dialogue option judge_only=labelled needs the labels: give option human_scores=FILE")
    return with_versus(conversations, parsed.versus) if parsed.versus else conversations


def own_rubrics(conversations: list[Conversation], path: Path) -> list[Conversation]:
    """Conversations that carry their own rubric (``metadata.rubric``: a path relative to the
    data file, as a simulation run writes them, or the rubric itself), resolved and read before any call."""
    out = []
    for index, conv in enumerate(conversations):
        own = conv.metadata.get("rubric")
        if own is None:
            out.append(conv)
            continue
        where = (path.parent / str(own)).resolve()
        try:
            if isinstance(own, dict):
                parse_rubric(own, "metadata.rubric")
                out.append(conv)
                continue
            load_rubric(str(where))
        except ConfigError as err:
            raise DataError(path, str(err), record=f"{index} (id={conv.id!r})", field="metadata.rubric") from None
        out.append(conv.model_copy(update={"metadata": {**conv.metadata, "rubric": str(where)}}))
    return out


def looks_like_a_name(system: str) -> bool:
    """A ``system`` field of one short word (``bot-v2``) names a system; a prompt is a sentence."""
    text = system.strip()
    return 0 < len(text) <= 40 and len(text.split()) == 1


def to_input(item: Conversation, options: dict[str, Any]) -> dict[str, Any]:
    return item.model_dump()


def _images(turn: Turn) -> dict[str, list[str]]:
    """A turn's pictures by name only, for the viewer (absent when it has none)."""
    return {"images": [image_label(i.source) for i in turn.images]} if turn.images else {}


def _tools(turn: Turn) -> dict[str, Any]:
    """A turn's tool calls with their results, and the expected calls (absent when it has none)."""
    out: dict[str, Any] = {}
    if turn.tool_calls:
        out["tool_calls"] = [c.model_dump(exclude_defaults=True) for c in turn.tool_calls]
    if turn.reference_tool_calls is not None:
        out["reference_tool_calls"] = [c.model_dump(exclude_defaults=True) for c in turn.reference_tool_calls]
    return out


def to_record(item: Conversation, state: dict[str, Any]) -> dict[str, Any]:
    name = item.metadata.get("system")  # the system under test's name (``system`` is its prompt)
    return {
        "id": item.id,
        **({"system": name} if isinstance(name, str) and name.strip() else {}),
        "system_prompt": item.system,
        "summary": item.summary,
        **({"metadata": item.metadata} if item.metadata else {}),  # an imported unit's source ids: scores go back there
        "turns": [{"turn": t.number, "role": t.role, "text": t.text, **_images(t), **_tools(t)} for t in item.turns],
        "turn_units": state.get("turn_units", []),
        "conversation_units": state.get("conversation_units", []),
        "note_updates": state.get("note_updates", []),
        "pairwise_units": state.get("pairwise_units", []),
        "grounding_units": state.get("grounding_units", []),
    }
