"""`simulation`: a live bot driven through scenarios by a simulated user that keeps notes.

An auditor checks every simulated turn, so a simulator failure is never counted as the
bot's; finished conversations are judged by the dialogue benchmark's graph (reached
through the registry) and written as a dialogue-format file; pass^k and pass@k over
``k`` seeded runs per scenario. See docs/simulation.md.
"""

from __future__ import annotations

from dialeval.benchmarks import Benchmark, register_benchmark
from dialeval.protocols.simulation import nodes  # noqa: F401  (registers the agents)
from dialeval.protocols.simulation.common import ROLES, SimulationOptions
from dialeval.protocols.simulation.suite import (
    after_run, aggregate, describe, dialogue_roles, item_scores, load, score_dimensions, tables, to_input, to_record,
)
from dialeval.protocols.simulation.view import conversation_view, item_labels


def _write_suite(source, out, n, config):  # type: ignore[no-untyped-def]
    from dialeval.protocols.simulation.writer import write_suite

    return write_suite(source, out, n, config)


def _graph():
    from dialeval.protocols.simulation.graph import build_graph

    return build_graph()


register_benchmark(
    Benchmark(
        name="simulation",
        options_model=SimulationOptions,
        title="A live bot through scenarios with a simulated user, audited; pass^k and the dialogue judge",
        paper="composes MMRC's NOTE-TAKING (the simulated user's notes) and the dialogue judge; pass^k as in tau-bench",
        load=load,
        graph=_graph,
        to_input=to_input,
        to_record=to_record,
        aggregate=aggregate,
        score_dimensions=score_dimensions,
        tables=tables,
        **dialogue_roles(ROLES.benchmark_fields()),
        item_scores=item_scores,
        item_labels=item_labels,
        suite_writer=_write_suite,
        conversation_view=conversation_view,
        after_run=after_run,
        describe=describe,
        system_output="bot turns",
        sample_key=lambda item: item.scenario.id,  # --limit N keeps every run of the first N scenarios
    )
)
