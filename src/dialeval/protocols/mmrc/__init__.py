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

from dialeval.benchmarks import Benchmark, register_benchmark
from dialeval.protocols.mmrc.view import conversation_view
from dialeval.protocols.mmrc.common import ROLES, MmrcOptions
from dialeval.protocols.mmrc import helpers, judge, notetaker, responder  # noqa: F401  (registers the agents)
from dialeval.protocols.mmrc.aggregation import aggregate, frame_columns, item_scores, score_dimensions
from dialeval.protocols.mmrc.loading import describe, load, to_input, to_record
from dialeval.protocols.mmrc.radar import figures
from dialeval.protocols.mmrc.report_tables import GLOSSARY, tables


def _graph():
    from dialeval.protocols.mmrc.graph import build_graph

    return build_graph()


register_benchmark(
    Benchmark(
        name="mmrc",
        options_model=MmrcOptions,
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
        frame_columns=frame_columns,
        conversation_view=conversation_view,
        **ROLES.benchmark_fields(),
        figures=figures,
        glossary=GLOSSARY,
        describe=describe,
    )
)
