"""`dialogue`: the user's own conversations judged on the user's own rubric.

Per assistant turn and per conversation (and summary), one verdict per criterion with
its rationale, in a named context mode (full, window, session, notes) under a token
budget that bounds every prompt. See docs/dialogue.md.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from dialeval.benchmarks import Benchmark, register_benchmark
from dialeval.figures import Figure, judge_vs_human
from dialeval.errors import ConfigError
from dialeval.protocols.dialogue import conversation, grounding, judge, pairwise  # noqa: F401  (registers the agents)
from dialeval.protocols.dialogue.common import ROLES, DialogueOptions
from dialeval.protocols.dialogue.data import Conversation, Turn, load_conversations, with_versus
from dialeval.protocols.dialogue.human import agreement, load_labels
from dialeval.protocols.dialogue.labels import LabelWarning, only_labelled
from dialeval.protocols.dialogue.metrics import aggregate as aggregate_units
from dialeval.protocols.dialogue.metrics import item_labels, item_scores, score_dimensions, tables
from dialeval.protocols.dialogue.plots import rubric_histograms
from dialeval.protocols.dialogue.rubric import BUILT_IN, load_rubric
from dialeval.protocols.dialogue.view import conversation_view, image_label
from dialeval.config import parse_options


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
    named = [c.id for c in conversations if looks_like_a_name(c.system) and "system" not in c.metadata]
    if named:
        warnings.warn(f"{path}: field 'system' of {len(named)} conversations (first {named[0]!r}: "
                      f"{next(c.system for c in conversations if c.id == named[0])!r}) reads like a system's name, but it is "
                      "the system prompt the judge is shown; name the system under test in metadata.system", UserWarning, stacklevel=2)
    if parsed.human_scores:
        labels = load_labels(parsed.human_scores, load_rubric(parsed.rubric), conversations, parsed.human_rule)
        for warning in labels.warnings:
            warnings.warn(warning, LabelWarning, stacklevel=2)
        if parsed.judge_only == "labelled":
            conversations = only_labelled(conversations, labels)
    elif parsed.judge_only == "labelled":
        raise ConfigError("dialogue option judge_only=labelled needs the labels: give option human_scores=FILE")
    return with_versus(conversations, parsed.versus) if parsed.versus else conversations


def looks_like_a_name(system: str) -> bool:
    """A ``system`` field of one short word (``bot-v2``) names a system; a prompt is a sentence."""
    text = system.strip()
    return 0 < len(text) <= 40 and len(text.split()) == 1


def _graph():
    from dialeval.protocols.dialogue.graph import build_graph

    return build_graph()


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


def aggregate(records: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    parsed = parse_options(DialogueOptions, options, "dialogue")
    context = {"mode": parsed.context, "budget": parsed.context_budget, "window_turns": parsed.window_turns, "rubric": parsed.rubric}
    metrics = aggregate_units(records, context)
    if parsed.rubric not in BUILT_IN:  # the run's own copy: compare --human reads it from any folder
        path = Path(parsed.rubric).expanduser()
        metrics["option_files"] = {"rubric": {"name": path.name, "text": path.read_text(encoding="utf-8")}}
    if parsed.human_scores:
        labels = load_labels(parsed.human_scores, load_rubric(parsed.rubric), rule=parsed.human_rule)
        metrics["human_agreement"] = agreement(item_scores(records), labels)
        metrics["human_labels"] = labels.summary()
    return metrics


def human_scores(path: Path, options: dict[str, Any]) -> dict[str, dict[str, float]]:
    """A human-labels file as ``item_scores`` gives the judge's scores (the annotators
    combined by option ``human_rule``), so ``compare --human`` pairs them."""
    parsed = options_of(options)
    return load_labels(path, load_rubric(parsed.rubric), rule=parsed.human_rule).per_criterion()


def human_ratings(path: Path, options: dict[str, Any]) -> dict[str, dict[str, dict[str, float]]]:
    """Each annotator's labels per criterion and unit, for the human ceiling in ``compare --human``."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (unit, criterion), scores in load_labels(path, load_rubric(options_of(options).rubric)).by_unit().items():
        out.setdefault(criterion, {})[unit] = scores
    return out


def figures(records: list[dict[str, Any]], metrics: dict[str, Any], options: dict[str, Any]) -> list[Figure]:
    """Score histograms on the rubric's scales, and the judge against the human labels
    per criterion when the run was given some."""
    parsed = parse_options(DialogueOptions, options, "dialogue")
    out: list[Figure] = [*rubric_histograms(records, load_rubric(parsed.rubric))]
    if parsed.human_scores:
        out += judge_vs_human(item_scores(records), human_scores(Path(parsed.human_scores), options))
    return out


register_benchmark(
    Benchmark(
        name="dialogue",
        title="Your own conversations on your own rubric (turn and conversation level, bounded context)",
        paper="composes the papers' agents: VDEval session judge, MMRC note-taking, KGDS facts, MDSEval pairwise",
        load=load,
        graph=_graph,
        to_input=to_input,
        to_record=to_record,
        aggregate=aggregate,
        score_dimensions=score_dimensions,
        tables=tables,
        **ROLES.benchmark_fields(),
        item_scores=item_scores,
        item_labels=item_labels,
        conversation_view=conversation_view,
        human_scores=human_scores,
        human_ratings=human_ratings,
        figures=figures,
    )
)
