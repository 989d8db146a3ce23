"""`mmdu`: multi-turn, multi-image answers judged turn by turn on six dimensions and Overall.

One item is one dialogue. The model under test answers its questions in turn (role
``responder``), unless a predictions file gives the answers; the judge (role ``judge``)
scores every answered turn 1-10 on Creativity, Richness, Visual Perception, Logical
Coherence, Answer Accuracy, Image Relationship Understanding and Overall. Scores are
averaged over turns, then over dialogues, x10 (the paper's Table 2). Expert scores
give judge-vs-human Pearson/Spearman/Kendall; runs of several judges on the same
answers give the judge-vs-judge table (``dialeval metrics mmdu --predictions RUN RUN``).
"""

from __future__ import annotations

from dialeval.benchmarks import Benchmark, register_benchmark
from dialeval.protocols.mmdu.view import conversation_view
from dialeval.protocols.mmdu.figures import figures
from dialeval.protocols.mmdu.metrics import DIMENSIONS
from dialeval.protocols.mmdu.common import ROLES, MmduOptions
from dialeval.protocols.mmdu import judge, responder  # noqa: F401  (registers the agents)
from dialeval.protocols.mmdu.aggregation import aggregate, item_scores, score_dimensions
from dialeval.protocols.mmdu.loading import calls_per_item, describe, load, to_input, to_record
from dialeval.protocols.mmdu.report_tables import GLOSSARY, compare_judges, tables


def _graph():
    from dialeval.protocols.mmdu.graph import build_graph

    return build_graph()


register_benchmark(
    Benchmark(
        name="mmdu",
        options_model=MmduOptions,
        title="MMDU: multi-turn, multi-image answers judged on six dimensions and Overall",
        paper="Liu et al., MMDU: a multi-turn multi-image dialog understanding benchmark",
        load=load,
        graph=_graph,
        to_input=to_input,
        to_record=to_record,
        aggregate=aggregate,
        score_dimensions=score_dimensions,
        tables=tables,
        **ROLES.benchmark_fields(),
        metrics_only=compare_judges,
        calls_per_item=calls_per_item,
        item_scores=item_scores,
        conversation_view=conversation_view,
        glossary=GLOSSARY,
        describe=describe,
        figures=figures,
        scales={d: (1.0, 10.0) for d in DIMENSIONS},
        unit_content=lambda item: item.dialogue.model_dump(mode="json"),  # the questions and images, not the answers
    )
)
