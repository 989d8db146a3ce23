"""`dialeval compare RUN RUN [RUN...]`: how alike are runs of one benchmark over the same items?

Each benchmark's ``item_scores(records)`` gives ``{dimension: {unit id: score}}``; here
the units two runs share are aligned and the agreement statistics of
:mod:`dialeval.metrics.agreement` are computed per dimension and pair of runs, beside
each run's cost and judge reliability. Writes ``compare.md``, ``compare.json`` and one
plot per dimension and pair into the output folder.

Unit ids never name a data file, so runs over two systems' files align (a run whose
systems share unit ids keys its units ``<system>/<unit>``). Runs that judged different units
are compared on the shared ones with a warning giving the counts; a dry run is refused,
since its placeholder scores would read as perfect agreement.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from dialeval.errors import CompareError
from dialeval.metrics.alpha import ALPHA_LEVEL
from dialeval.report.cautions import FEW_UNITS
from dialeval.report.compare_human import ceiling_of, ceiling_table, human_scores as read_human
from dialeval.report.compare_notes import HUMAN, Footnotes, not_computed
from dialeval.report.compare_plots import agreement_plots
from dialeval.report.results import RunData, read_run
from dialeval.report.tables import cell, code, markdown_table, num, pct

TOP_DISAGREEMENTS = 10


@dataclass
class Run:
    """What compare needs from one run folder: its typed data under a label."""

    label: str
    data: RunData

    @property
    def path(self) -> Path:
        return self.data.path

    @property
    def benchmark(self) -> str:
        return self.data.benchmark


def load_run(path: str | Path) -> Run:
    """A run folder read for comparison; corrupt files stop with a message naming them."""
    path = Path(path)
    if not (path / "config.json").exists():
        raise CompareError(f"{path} is not a run folder (no config.json)")
    data = read_run(path)
    return Run(label=data.label, data=data)


def is_dry_run(run: Run) -> bool:
    """A run whose scores are placeholders: a ``dry-run`` model, or calls only estimated."""
    return bool(run.data.metrics.get("run", {}).get("dry_run")) or any(
        spec.split(":", 1)[0] == "dry-run" for spec in run_models(run.data.config).values()
    )


def run_models(config: dict[str, Any]) -> dict[str, str]:
    """Role -> model spec in a run's ``config.json`` (``default`` for roles without their own)."""
    ctx = config.get("context", {})
    out = {"default": (ctx.get("default_model") or {}).get("spec", "?")}
    out.update({role: m.get("spec", "?") for role, m in (ctx.get("models") or {}).items()})
    return out


def called_models(run: Run) -> dict[str, str]:
    """Agent -> the models its calls went to (``usage.json``): a predictions run's summarizer,
    configured but never asked, is not among them."""
    per_agent = run.data.usage.get("per_agent") or {}
    return {agent: ", ".join(a["models"]) for agent, a in per_agent.items() if isinstance(a, dict) and a.get("models")}


def run_summary(run: Run) -> dict[str, Any]:
    """Cost and judge reliability of one run, side by side with the others in the report."""
    total = run.data.usage.get("total", {})
    per_agent = run.data.usage.get("per_agent", {})
    calls = sum(a.get("calls", 0) for a in per_agent.values())
    bad = {k: sum(a.get(k, 0) for a in per_agent.values()) for k in ("unparsed", "truncated", "error")}
    return {
        "label": run.label,
        "description": run.data.description,
        "path": str(run.path.resolve()),
        "benchmark": run.benchmark,
        "models": run_models(run.data.config),
        "called": called_models(run),
        "agents": run.data.config.get("agents") or {},
        "items": len(run.data.items),
        "finished": len(run.data.items) - run.data.failed,
        "failed": run.data.failed,
        "calls": calls,
        "cost_usd": None if total.get("unpriced_calls") else total.get("cost_usd", 0.0),  # unknown, not 0
        "input_tokens": total.get("input_tokens", 0),
        "output_tokens": total.get("output_tokens", 0),
        "dry_run": bool(run.data.metrics.get("run", {}).get("dry_run")),
        **bad,
        **{f"{k}_share": (v / calls if calls else None) for k, v in bad.items()},
    }


def compare_runs(
    paths: list[str | Path], out_dir: str | Path | None = None, *, plots: bool = True, human: str | Path | None = None
) -> dict[str, Any]:
    """Compare runs and write the report folder; returns what ``compare.json`` holds.

    ``human``: a file of human labels in the benchmark's format, compared with every run
    as one more column labelled ``human`` (one run is then enough)."""
    from dialeval.benchmarks import get_benchmark
    from dialeval.metrics.agreement import agreement
    from dialeval.metrics.sequential import score_bound

    if len(paths) < (1 if human else 2):
        raise CompareError("compare needs at least two run folders (or one and --human FILE)")
    runs = [load_run(p) for p in paths]
    _unique_labels(runs)
    benchmarks = {r.benchmark for r in runs}
    if len(benchmarks) != 1:
        listed = ", ".join(f"{r.label}: {r.benchmark}" for r in runs)
        raise CompareError(f"runs of different benchmarks cannot be compared ({listed})")
    bench = get_benchmark(benchmarks.pop())
    if bench.item_scores is None:
        raise CompareError(f"benchmark {bench.name!r} does not expose per-item scores (Benchmark.item_scores)")
    dry = [r.label for r in runs if is_dry_run(r)]
    if dry:
        raise CompareError(f"{', '.join(dry)}: a dry run's scores are placeholders, not a judge's; compare runs that called a model")
    scores = [r.data.scores() for r in runs]
    labels = [r.label for r in runs]
    human_rule = None
    if human is not None:
        human_scores, ratings = read_human(bench, runs[0].data, runs[0].label, human)
        human_rule = str((runs[0].data.config.get("options") or {}).get("human_rule", "mean"))
        ceiling = ceiling_of(ratings, dict(zip(labels, scores)))
        scores.append(human_scores)
        labels.append(HUMAN)
    dimensions = list(dict.fromkeys(d for s in scores for d in s))
    words = [bench.item_labels(r.data.records) if bench.item_labels else {} for r in runs] + [{}] * (human is not None)

    comparisons = []
    for dim in dimensions:
        for i, j in itertools.combinations(range(len(scores)), 2):
            if human is not None and j == len(runs) and dim not in scores[j]:
                continue  # a dimension nobody labelled: no row against the humans
            a, b = scores[i].get(dim, {}), scores[j].get(dim, {})
            units = sorted(set(a) & set(b))
            entry: dict[str, Any] = {
                "dimension": dim, "a": labels[i], "b": labels[j],
                "only_a": len(set(a) - set(b)), "only_b": len(set(b) - set(a)),
            }
            if units:
                x, y = [a[u] for u in units], [b[u] for u in units]
                entry.update(agreement(x, y, bound=score_bound(dim, dict(bench.scales or {}), [*a.values(), *b.values()])))
                worst = sorted(zip(units, x, y), key=lambda t: (-abs(t[2] - t[1]), t[0]))[:TOP_DISAGREEMENTS]
                entry["disagreements"] = [
                    {"unit": u, "a": va, "b": vb, **_words(words[i], words[j], dim, u)} for u, va, vb in worst if va != vb
                ]
                entry["pairs"] = [[u, va, vb] for u, va, vb in zip(units, x, y)]
                entry["not_computed"] = not_computed(entry, human_rule if labels[j] == HUMAN else None)
            else:
                entry["n"] = 0
            comparisons.append(entry)
    if not any(c["n"] for c in comparisons):
        raise CompareError(
            "the runs share no scored unit: " + ", ".join(f"{r.label} scored {sum(len(v) for v in s.values())}" for r, s in zip(runs, scores))
        )

    out = Path(out_dir) if out_dir else runs[0].path.parent / _default_name(runs)
    out.mkdir(parents=True, exist_ok=True)
    result = {
        "benchmark": bench.name,
        "title": bench.title,
        "warnings": coverage_warnings(runs, scores),
        "runs": [run_summary(r) for r in runs],
        **({"human": str(Path(human).resolve()), "human_ceiling": ceiling} if human is not None else {}),
        "dimensions": dimensions,
        "comparisons": comparisons,
        "plots": agreement_plots(out, comparisons, bench.scales) if plots else {},
    }
    (out / "compare.json").write_text(json.dumps(result, indent=2))
    (out / "compare.md").write_text(render_markdown(result))
    result["out_dir"] = str(out)
    return result


def coverage_warnings(runs: list[Run], scores: list[dict[str, dict[str, float]]]) -> list[str]:
    """One line per pair of runs that scored different units, with the counts: their
    statistics rest on the shared units only, and the means of the runs' own reports
    cover different items."""
    units = [{u for dim in s.values() for u in dim} for s in scores]
    out = []
    for i, j in itertools.combinations(range(len(runs)), 2):
        if units[i] != units[j]:
            shared = len(units[i] & units[j])
            out.append(f"{runs[i].label} and {runs[j].label} judged different items: {len(units[i])} and {len(units[j])} "
                       f"scored units, {shared} in common; only those {shared} are compared")
    return out


def _unique_labels(runs: list[Run]) -> None:
    """Runs whose options differ get those options added (``context=notes``: the date
    alone does not say what changed); runs that still read alike (same benchmark, system,
    judge and minute) get their folder name; the same folder name twice (``a/run`` and
    ``b/run``), their whole path."""
    for r, differs in zip(runs, option_differences([r.data.config.get("options") or {} for r in runs])):
        if differs:
            r.label = f"{r.label} ({differs})"
    if len({r.label for r in runs}) < len(runs):
        for r in runs:
            if r.label != r.path.name:
                r.label = f"{r.label} ({r.path.name})"
    if len({r.label for r in runs}) < len(runs):
        for r in runs:
            r.label = str(r.path)


def option_differences(options: list[dict[str, Any]]) -> list[str]:
    """Per run, the options in which it differs from the others (``context=notes,
    rubric=strict.yaml``; a file option by its name), so runs alike in all else read apart."""
    keys = sorted({k for o in options for k in o})
    differing = [k for k in keys if len({json.dumps(o.get(k), sort_keys=True, default=str) for o in options}) > 1]
    return [option_text({k: o[k] for k in differing if k in o}, [k for k in differing if k not in o]) for o in options]


def option_text(options: dict[str, Any], absent: Sequence[str] = ()) -> str:
    """``context=notes, rubric=strict.yaml`` (a path by its file name; ``no <key>`` for ``absent``)."""
    def shown(value: Any) -> str:
        text = str(value)
        return Path(text).name if isinstance(value, str) and ("/" in text or text.endswith((".yaml", ".yml", ".json", ".jsonl"))) else text

    return ", ".join([*(f"{k}={shown(v)}" for k, v in sorted(options.items())), *(f"no {k}" for k in absent)])


def _default_name(runs: list[Run]) -> str:
    digest = hashlib.sha256("\n".join(str(r.path.resolve()) for r in runs).encode()).hexdigest()[:8]
    return f"compare-{runs[0].benchmark}-{digest}"


def render_markdown(result: dict[str, Any]) -> str:
    lines = [f"# Comparison: {result['title']}", "", f"benchmark: `{result['benchmark']}`", ""]
    lines += [f"**Warning: {cell(w)}.**" for w in result.get("warnings", [])] + ([""] if result.get("warnings") else [])
    if result.get("human"):
        lines += [f"Human labels ({HUMAN}): {code(result['human'])}", ""]
        lines += ceiling_table(result.get("human_ceiling") or {})
    lines += ["## Runs", ""]
    lines += markdown_table(
        ["run", "models", "items", "finished", "failed", "calls", "unparsed", "truncated", "errors", "cost (USD)"],
        [
            [cell(r["label"]), "; ".join(f"{cell(who)}: {code(spec, table=True)}" for who, spec in (r.get("called") or r["models"]).items()),
             r["items"], r["finished"], r["failed"], r["calls"],
             *(f"{r[k]} ({pct(r[k + '_share'])})" for k in ("unparsed", "truncated", "error")),
             ("unknown" if r["cost_usd"] is None else f"{r['cost_usd']:.4f}") + (" (estimate)" if r["dry_run"] else "")]
            for r in result["runs"]
        ],
        "llrrrrrrrr",
    )
    lines += ["", "## Agreement", "",
              "Mean difference is B - A, with the 95% CI and two-sided p of dialeval's paired test, the gate's "
              "(exact sign-flip up to 16 units, a t interval held to the scale's variance at every n; docs/gate.md). "
              f"Alpha is Krippendorff's alpha ({ALPHA_LEVEL}, as in every report and trust card). "
              "Units scored by only one run are counted, not compared.",
              ""]
    notes = Footnotes()
    lines += markdown_table(
        ["dimension", "A", "B", "n", "Pearson", "Spearman", "Kendall tau-b", "exact", "adjacent", f"alpha ({ALPHA_LEVEL})", "mean A",
         "mean B", "B - A [95% CI]", "p"],
        [_agreement_row(c, notes) for c in result["comparisons"]],
        "lllrrrrrrrrrlr",
    )
    lines += notes.lines()
    for c in result["comparisons"]:
        if c.get("disagreements"):
            lines += ["", f"### Largest disagreements: {cell(c['dimension'])} ({cell(c['a'])} vs {cell(c['b'])})", ""]
            lines += markdown_table(
                ["unit", "A", "B"], [[code(d["unit"], table=True), _shown(d, "a"), _shown(d, "b")] for d in c["disagreements"]], "lrr"
            )
    if result.get("plots"):
        lines += ["", "## Plots", ""]
        lines += [f"- {cell(key)}: [{name}]({name})" for key, name in result["plots"].items()]
    return "\n".join(lines) + "\n"


def _words(a: dict[str, dict[str, str]], b: dict[str, dict[str, str]], dim: str, unit: str) -> dict[str, str]:
    """The two verdicts in words where their scale has labels (``a_label``, ``b_label``)."""
    out = {}
    for key, labels in (("a_label", a), ("b_label", b)):
        word = labels.get(dim, {}).get(unit)
        if word is not None:
            out[key] = word
    return out


def _shown(d: dict[str, Any], side: str) -> str:
    """A score as a table shows it: ``3 (yes)`` where it stands for a label."""
    word = d.get(f"{side}_label")
    return f"{d[side]:g}" + (f" ({cell(word)})" if word else "")


def _agreement_row(c: dict[str, Any], notes: Footnotes | None = None) -> list[Any]:
    """One line of the agreement table; a pair without shared units has blanks; a figure
    the data cannot give is marked, its reason in a footnote."""
    head = [cell(c["dimension"]), cell(c["a"]), cell(c["b"])]
    if not c["n"]:
        return [*head, 0, *[None] * 10]
    why = c.get("not_computed") or {}

    def shown(key: str, text: str) -> str:
        return notes.mark(why[key]) if notes is not None and key in why and c.get(key) is None else text

    ci = f"{num(c['mean_diff'], 3)} [{num(c['ci_low'], 3)}, {num(c['ci_high'], 3)}]"
    n = f"{c['n']} (too few to read)" if c["n"] < FEW_UNITS else c["n"]  # see report/cautions.py
    return [*head, n, *(shown(k, num(c[k], 3)) for k in ("pearson", "spearman", "kendall_tau_b")),
            shown("exact_agreement", pct(c["exact_agreement"])), shown("adjacent_agreement", pct(c["adjacent_agreement"])),
            shown("krippendorff_alpha", num(c["krippendorff_alpha"], 3)), *(num(c[k], 3) for k in ("mean_a", "mean_b")),
            ci, num(c["p_value"], 4)]
