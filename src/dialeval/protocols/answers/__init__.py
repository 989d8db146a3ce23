"""`answers`: grade system answers against references with one judge (the smallest protocol)."""

from __future__ import annotations

from dialeval.benchmarks import Benchmark, register_benchmark
from dialeval.protocols.answers.common import ROLES
from dialeval.protocols.answers import judge  # noqa: F401  (registers the agents)
from dialeval.protocols.answers.aggregation import aggregate, item_scores, score_dimensions
from dialeval.protocols.answers.loading import AnswersOptions, load, to_input, to_record
from dialeval.protocols.answers.report_tables import describe, tables


def _graph():
    from dialeval.protocols.answers.graph import build_graph

    return build_graph()


register_benchmark(
    Benchmark(
        name="answers",
        options_model=AnswersOptions,
        title="Answer grading with one judge (1-5 against a reference)",
        paper="a generic protocol, no paper",
        load=load,
        graph=_graph,
        to_input=to_input,
        to_record=to_record,
        aggregate=aggregate,
        score_dimensions=score_dimensions,
        tables=tables,
        **ROLES.benchmark_fields(),
        item_scores=item_scores,
        describe=describe,
        calls_per_item=lambda item, options: 1,  # one judge call per answer (retries are part of it)
        unit_content=lambda item: [item.context, item.question, item.reference],  # what was asked, not the answer
    )
)
