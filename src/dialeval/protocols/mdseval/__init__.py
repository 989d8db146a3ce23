"""`mdseval`: how far can a judge of multimodal dialogue summaries be trusted?

One item is one dialogue with its candidate summaries and human scores. The selected
evaluators (pointwise, pairwise in both orders, faithfulness, Image-to-Prompt,
Checklist-CoT) judge every summary; the report sets them against the human means as
the paper's Tables 3-5 do, with 95% bootstrap intervals over dialogues, the positional
bias of the pairwise judge, score histograms (PNG), and the cost of the whole file.
Model-free tools: ``dialeval metrics mdseval-agreement | mdseval-meki | mdseval-select``.
"""

from __future__ import annotations

from dialeval.benchmarks import Benchmark, register_benchmark
from dialeval.protocols.mdseval.view import conversation_view
from dialeval.protocols.mdseval.figures import figures
from dialeval.protocols.mdseval.data import SCALES
from dialeval.protocols.mdseval.common import ROLES, MdsevalOptions
from dialeval.protocols.mdseval import checklist, faithfulness, image_prompt, pairwise, pointwise, summarizer  # noqa: F401  (registers the agents)
from dialeval.protocols.mdseval.aggregation import aggregate, item_scores, score_dimensions
from dialeval.protocols.mdseval.histograms import after_run
from dialeval.protocols.mdseval.loading import describe, load, to_input, to_record
from dialeval.protocols.mdseval.report_tables import GLOSSARY, metrics_only, tables


def _graph():
    from dialeval.protocols.mdseval.graph import build_graph

    return build_graph()


register_benchmark(
    Benchmark(
        name="mdseval",
        options_model=MdsevalOptions,
        title="MDSEval: meta-evaluation of judges of multimodal dialogue summaries",
        paper="Liu et al., MDSEval: a meta-evaluation benchmark for multimodal dialogue summarization",
        load=load,
        graph=_graph,
        to_input=to_input,
        to_record=to_record,
        aggregate=aggregate,
        score_dimensions=score_dimensions,
        tables=tables,
        **ROLES.benchmark_fields(),
        system_output="summaries",
        after_run=after_run,
        metrics_only=metrics_only,
        item_scores=item_scores,
        conversation_view=conversation_view,
        glossary=GLOSSARY,
        describe=describe,
        figures=figures,
        scales={a: (float(lo), float(hi)) for a, (lo, hi) in SCALES.items()},
    )
)
