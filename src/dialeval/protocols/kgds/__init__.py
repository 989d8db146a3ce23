"""`kgds`: knowledge-grounded discussion summarization, evaluated hierarchically.

Options (``RunConfig.options``, validated by :class:`KgdsOptions`): ``patterns``
(``[ebs, abs]``), ``reflection_rounds`` (1), ``one_fact_per_call`` (false),
``feedback_judge`` (true), ``predictions`` (a file of the system's own summaries, see
:mod:`dialeval.protocols.kgds.data`; the summarizer is then skipped), ``decompose_missing_facts``,
``summary_retries`` (0). The summarizer, reflection and feedback roles generate with the
paper's max_tokens 4096 and temperature 0 unless their model sets them.
Templates can be replaced per key: ``summarizer_ebs``, ``summarizer_abs``,
``reflection_ebs``, ``reflection_abs``, ``feedback_judge``, ``fact_verifier``,
``opinion_verifier``, ``error_classifier``, ``fact_decomposer``.

This module only registers the benchmark; its parts live in ``loading``, ``aggregate``,
``report_tables`` and ``report_text``.
"""

from __future__ import annotations

from dialeval.protocols.kgds.common import ROLES
from dialeval.benchmarks import Benchmark, register_benchmark
from dialeval.protocols.kgds.figures import figures
from dialeval.protocols.kgds import error_classifier, fact_decomposer, fact_verifier, feedback_judge, opinion_verifier, reflection, summarizer  # noqa: F401  (registers the agents)
from dialeval.protocols.kgds.aggregation import aggregate, item_scores, score_dimensions
from dialeval.protocols.kgds.loading import load, to_input, to_record
from dialeval.protocols.kgds.report_tables import metrics_only, tables
from dialeval.protocols.kgds.report_text import GLOSSARY, describe, notices


def _graph():
    from dialeval.protocols.kgds.graph import build_graph

    return build_graph()


register_benchmark(
    Benchmark(
        name="kgds",
        title="KGDS: knowledge-grounded discussion summarization, hierarchical evaluation",
        paper="Zhou et al., What are they talking about? Benchmarking LLMs for Knowledge-Grounded Discussion Summarization",
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
        system_output="summaries",
        glossary=GLOSSARY,
        describe=describe,
        figures=figures,
        notices=notices,
    )
)
