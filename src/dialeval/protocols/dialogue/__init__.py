"""`dialogue`: the user's own conversations judged on the user's own rubric.

Per assistant turn and per conversation (and summary), one verdict per criterion with
its rationale, in a named context mode (full, window, session, notes) under a token
budget that bounds every prompt. See docs/dialogue.md.

This module only registers the benchmark; its parts live in ``loading``, ``aggregation``,
``human_compare`` and ``figures``.
"""

from __future__ import annotations

from dialeval.benchmarks import Benchmark, register_benchmark
from dialeval.protocols.dialogue import conversation, grounding, judge, pairwise  # noqa: F401  (registers the agents)
from dialeval.protocols.dialogue.aggregation import aggregate
from dialeval.protocols.dialogue.common import ROLES, DialogueOptions
from dialeval.protocols.dialogue.figures import figures
from dialeval.protocols.dialogue.human_compare import human_ratings, human_scores
from dialeval.protocols.dialogue.loading import load, to_input, to_record
from dialeval.protocols.dialogue.metrics import item_labels, item_scores, score_dimensions, tables
from dialeval.protocols.dialogue.view import conversation_view


def _graph():
    from dialeval.protocols.dialogue.graph import build_graph

    return build_graph()


register_benchmark(
    Benchmark(
        name="dialogue",
        options_model=DialogueOptions,
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
        # what the user said and the facts given: another bot's replies to the same turns are the same unit
        unit_content=lambda item: [[t.role, t.text] for t in item.turns if t.role == "user"] + [item.grounding],
    )
)
