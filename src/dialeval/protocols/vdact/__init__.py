"""`vdact`: VDEval (session-based judge) and its baselines on VDAct prediction files.

One item is one system's dialogue. Options choose the judge (session, turn, lave,
video_chatgpt) and the video summary (none, template, refined), which spans the paper's
ablation (Table 6). Model-free classic metrics (Table 5) come from
:func:`.classic_table.metrics_only`; this module only registers the benchmark.
"""

from __future__ import annotations

from dialeval.benchmarks import Benchmark, register_benchmark
from dialeval.protocols.vdact.view import conversation_view
from dialeval.protocols.vdact.figures import figures
from dialeval.protocols.vdact.tables import tables
from dialeval.protocols.vdact.metrics import SCALES
from dialeval.protocols.vdact.common import ROLES
from dialeval.protocols.vdact.options import VdactOptions
from dialeval.protocols.vdact import lave_judge, llm_acc, llm_rel, session_judge, turn_judge, video_chatgpt  # noqa: F401  (registers the agents)
from dialeval.protocols.vdact.aggregation import aggregate, item_scores, score_dimensions
from dialeval.protocols.vdact.classic_table import metrics_only
from dialeval.protocols.vdact.loading import describe, load, to_input, to_record


def _graph():
    from dialeval.protocols.vdact.graph import build_graph

    return build_graph()


register_benchmark(
    Benchmark(
        name="vdact",
        options_model=VdactOptions,
        title="VDAct / VDEval: video-grounded dialogue answers judged turn by turn",
        paper="Imrattanatrai et al., AAAI 2025, a video-grounded dialogue dataset and metric for event-driven activities",
        load=load,
        graph=_graph,
        to_input=to_input,
        to_record=to_record,
        aggregate=aggregate,
        score_dimensions=score_dimensions,
        tables=tables,
        **ROLES.benchmark_fields(),
        metrics_only=metrics_only,
        item_scores=item_scores,
        conversation_view=conversation_view,
        sample_key=lambda item: item.dial_id,  # --limit: the same dialogues in every system's file
        describe=describe,
        figures=figures,
        scales=dict(SCALES),
        # the dialogue's questions and references, not one system's answers
        unit_content=lambda item: [item.dial_id, [[t.turn_num, t.question, t.reference] for t in item.turns]],
    )
)
