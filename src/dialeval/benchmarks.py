"""The benchmark registry: each protocol registers its loader, graph and aggregator once.

The runner, the CLI (`dialeval list`) and the Python API read this registry; a
benchmark module is imported only when it is asked for, so `dialeval --help` stays fast.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    from pydantic import BaseModel

    from dialeval.figures import Figure


@dataclass(frozen=True)
class RunFacts:
    """What a benchmark's ``describe`` may say about a run: the data, the options and the
    model each role called (``model(role)``; the default model for roles without their own)."""

    data: str | None
    options: dict[str, Any]
    model: Callable[[str], str | None]

    @property
    def predictions(self) -> str | None:
        return self.options.get("predictions")


class Item(Protocol):
    """One unit of evaluation (a sample, a dialogue); ``id`` is unique within a dataset."""

    id: str


@dataclass(frozen=True)
class Benchmark:
    """How the runner evaluates one protocol.

    - ``load(path, options)`` reads the data file(s) into items, failing with file/record/field.
    - ``graph()`` returns the compiled LangGraph over ONE item.
    - ``to_input(item, options)`` builds the graph input; ``to_record(item, state)`` turns
      the final state into the JSON line kept in ``results.jsonl``.
    - ``aggregate(records, options)`` computes corpus metrics (pure, no model calls).
    - ``score_dimensions(records)`` lists the scores per judged dimension, for the
      judge-reliability section of the report.
    - ``tables(metrics)`` renders the paper-style Markdown tables.
    - ``after_run(run_dir, records, metrics)`` may write extra artifacts (plots).
    - ``roles`` maps agent roles (keys under ``agents:``) to default agents;
      ``model_roles`` / ``template_keys`` list the keys valid under ``models:`` /
      ``templates:`` when they differ from the roles (the runner rejects others).
    - ``system_roles`` name the roles played by the system under test (a summarizer, a
      responder): their cut-off or unreadable outputs are the system's failures.
    - ``item_scores(records)`` gives, per judged dimension, the score of every scored unit
      (an item id, or ``"<item id>/<turn>"`` for turn-level scores), readable answers only;
      ``dialeval compare`` and the viewer align runs with it. A unit id never names the
      data file, so runs over different systems' files of one benchmark align.
    - ``sample_key(item)`` names the same item in every data file of the benchmark (VDAct:
      the dialogue id, shared by every system's prediction file); ``--limit N`` keeps the
      items of the first N keys in natural sort order (default: the item id).
    - ``glossary`` maps the codes its tables use to what they stand for, and
      ``describe(facts)`` says in one line whose outputs a run evaluated and who judged
      them; both open the report.
    - ``conversation_view(record, item)`` gives the rows the viewer shows turn by turn (``item``:
      the record's data item, or None when the data file is gone).
    - ``figures(records, metrics, options)`` declares the report's figures beyond the score
      histograms (:mod:`dialeval.figures`); ``scales`` gives the score range per dimension.
    """

    name: str
    title: str
    paper: str
    load: Callable[[Path, dict[str, Any]], list[Any]]
    graph: Callable[[], Any]
    to_input: Callable[[Any, dict[str, Any]], dict[str, Any]]
    to_record: Callable[[Any, dict[str, Any]], dict[str, Any]]
    aggregate: Callable[[list[dict[str, Any]], dict[str, Any]], dict[str, Any]]
    score_dimensions: Callable[[list[dict[str, Any]]], dict[str, list[float]]]
    tables: Callable[[dict[str, Any]], str]
    roles: dict[str, str] = field(default_factory=dict)  # role -> default agent name
    # keys a config may use under `models:` and `templates:` (default: the keys of
    # `roles`); declare them when agents pick models or templates by other names, so
    # a mistyped key stops the run at start instead of being silently ignored
    model_roles: tuple[str, ...] = ()
    template_keys: tuple[str, ...] = ()
    after_run: Callable[[Path, list[dict[str, Any]], dict[str, Any]], None] | None = None
    # `dialeval metrics <name> --predictions FILE...`: model-free metrics, returns Markdown
    metrics_only: Callable[[list[Path], dict[str, Any]], str] | None = None
    # dimension -> {unit id -> score}; see the class docstring
    item_scores: Callable[[list[dict[str, Any]]], dict[str, dict[str, float]]] | None = None
    # roles played by the system under test (not judges), and what one of its outputs is
    # called; the report says so loudly when most of those outputs were cut off or unreadable
    system_roles: tuple[str, ...] = ()
    # the key --limit samples on (see the class docstring); None: the item id
    sample_key: Callable[[Any], str] | None = None
    system_output: str = "answers"
    glossary: dict[str, str] = field(default_factory=dict)
    describe: Callable[[RunFacts], str] | None = None
    # (record, data item or None) -> the conversation turn by turn with each verdict beside
    # its turn, for the viewer's item page (conversation benchmarks: the data item holds the
    # questions and images a record leaves out); None: the page shows no such section
    conversation_view: Callable[[dict[str, Any], Any], Any] | None = None
    # metrics -> warnings the report shows first (one paragraph each), e.g. KGDS summaries
    # that echo the prompt's placeholder
    notices: Callable[[dict[str, Any]], list[str]] | None = None
    # records -> the verdicts in words where a scale has labels (item_scores' shape, "yes"
    # beside its rank): to_pandas' label column, compare's disagreements
    item_labels: Callable[[list[dict[str, Any]]], dict[str, dict[str, str]]] | None = None
    # (human-labels file, run options) -> scores shaped like item_scores, for `compare --human`
    human_scores: Callable[[Path, dict[str, Any]], dict[str, dict[str, float]]] | None = None
    # (human-labels file, run options) -> dimension -> unit -> annotator -> score: several
    # annotators per unit, for their own agreement beside the judge's in `compare --human`
    human_ratings: Callable[[Path, dict[str, Any]], dict[str, dict[str, dict[str, float]]]] | None = None
    # (records, metrics, run options) -> the benchmark's own report figures (dialeval.figures records);
    # every run also gets a score histogram per dimension and system (report/plots.py)
    figures: Callable[[list[dict[str, Any]], dict[str, Any], dict[str, Any]], list[Figure]] | None = None
    # (unit, dimension) -> columns of their own for to_pandas (MMRC: ability, condition,
    # metric), where item_scores packs them into the unit id and the dimension's name
    frame_columns: Callable[[str, str], dict[str, Any]] | None = None
    # dimension (or its last word, e.g. an aspect) -> (lowest, highest) score, for axes
    # that span the scale; dimensions named like ``score (1-5)`` need no entry
    scales: dict[str, tuple[float, float]] = field(default_factory=dict)
    # (item, run options) -> the model calls evaluating it takes, for protocols whose depth
    # is fixed (the progress bar's total); None or an item's None: not known in advance
    calls_per_item: Callable[[Any, dict[str, Any]], int | None] | None = None
    # the pydantic model of ``options:``, validated once when the run is prepared and carried
    # typed in the run context (nodes read ``context.options_as(model, name)``); None: options read from the items
    options_model: type[BaseModel] | None = None
    # item -> what the item asks of the system under test, JSON-able, without the system's own
    # output (a question and its reference, not the answer): each row records its hash, and the
    # gate refuses a baseline that judged other content under the same unit ids. None: the
    # whole item but its ``id`` and ``system``
    unit_content: Callable[[Any], Any] | None = None
    # (document, output file, how many, run config) -> summary: `dialeval scenarios` writes a
    # data file of this benchmark from a document, to review (simulation: a scenario suite)
    suite_writer: Callable[[Path, Path, int, Any], dict[str, Any]] | None = None


# name -> module that registers it (imported lazily)
KNOWN: dict[str, str] = {
    "kgds": "dialeval.protocols.kgds",
    "vdact": "dialeval.protocols.vdact",
    "mmrc": "dialeval.protocols.mmrc",
    "answers": "dialeval.protocols.answers",
    "mdseval": "dialeval.protocols.mdseval",
    "mmdu": "dialeval.protocols.mmdu",
    "dialogue": "dialeval.protocols.dialogue",
    "simulation": "dialeval.protocols.simulation",
}

_REGISTRY: dict[str, Benchmark] = {}


def register_benchmark(benchmark: Benchmark) -> Benchmark:
    _REGISTRY[benchmark.name] = benchmark
    return benchmark


def get_benchmark(name: str) -> Benchmark:
    if name not in _REGISTRY and name not in KNOWN:
        from dialeval.plugins import load_entry_points

        load_entry_points()
    if name not in _REGISTRY:
        module = KNOWN.get(name)
        if module is None:
            import difflib

            names = available()
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"; did you mean {close[0]!r}? Available" if close else "; available"
            raise KeyError(f"unknown benchmark {name!r}{hint}: {', '.join(names)}")
        importlib.import_module(module)
    return _REGISTRY[name]


def available() -> list[str]:
    from dialeval.plugins import load_entry_points

    load_entry_points()
    names = set(KNOWN) | set(_REGISTRY)
    out = []
    for name in sorted(names):
        module = KNOWN.get(name)
        if module is None or importlib.util.find_spec(module) is not None:
            out.append(name)
    return out
