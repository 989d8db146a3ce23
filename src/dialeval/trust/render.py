"""card.md, card.json and the plots of a trust card; the first lines say which judge to use and why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dialeval.trust.cascades import card_lines
from dialeval.figures import Bars, Figure
from dialeval.metrics.alpha import ALPHA_LEVEL
from dialeval.report.tables import cell, markdown_table, num
from dialeval.trust.probe_catalog import get_probe
from dialeval.trust.recommend import fixed

NAMES = {"spearman": "Spearman", "kendall_tau_b": "Kendall tau-b", "krippendorff_alpha": f"alpha ({ALPHA_LEVEL})",
         "exact_agreement": "exact", "adjacent_agreement": "adjacent"}
RANKED = ("spearman", "kendall_tau_b", "krippendorff_alpha")  # the figures read against the others' mean


def _ci(figure: dict[str, Any] | None, digits: int = 2) -> str:
    if not figure or figure.get("value") is None:
        return num(None)
    if figure.get("ci_low") is None:
        return num(figure["value"], digits)
    return f"{num(figure['value'], digits)} [{num(figure['ci_low'], digits)}, {num(figure['ci_high'], digits)}]"


def _money(value: float | None) -> str:
    return "unknown (no price)" if value is None else f"${value:.4g}"


def _seconds(value: float | None) -> str:
    return num(None) if value is None else f"{value:.3g} s"


def _verdict(probe: dict[str, Any]) -> str:
    mark = {True: "FAILS", False: "passes", None: "not measured"}[probe["fails"]]
    return f"{_ci(probe)} {mark}" if probe["value"] is not None else mark


def _warning_count(card: dict[str, Any]) -> int:
    return int(card.get("label_warning_count") or len(card["label_warnings"]))


def _label_warnings(card: dict[str, Any], shown: int = 10) -> list[str]:
    """The skipped labels, each with its file and record: the first ``shown``, then how many more."""
    warnings = card.get("label_warnings") or []
    if not warnings:
        return []
    more = _warning_count(card) - shown
    return [*(f"- {cell(w)}" for w in warnings[:shown]), *([f"- ... and {more} more"] if more > 0 else []), ""]


def render(card: dict[str, Any]) -> str:
    """The card as Markdown (its layout is kept by a golden file)."""
    rec = card["recommended"]
    units = card["units"]
    lines = [f"# Judge trust card {cell(card['id'])}", "", rec["sentence"], ""]
    lines += [
        f"Judged: {units['labelled']} labelled units in {units['conversations']} conversations, {units['labels']} labels "
        f"from {units['annotators']} annotators; rubric {cell(card['rubric'])}; tolerance {card['tolerance']:g} in mean "
        f"Krippendorff's alpha ({ALPHA_LEVEL}). Dry-run estimate of the card: {_money(card['estimate']['cost_usd'])}."
        + (f" {units['no_label']} answers without a label ("
           + ", ".join(f"{n} {cell(kind)}" for kind, n in (units.get("no_label_by_kind") or {}).items())
           + f") were left out; {units.get('units_without_label', 0)} units had no label left."
           if units.get("no_label") else "")
        + ("" if card["complete"] else " **Incomplete: some items failed; run the same command again to retry them.**")
        + (f" The labels file gave {_warning_count(card)} warnings: those labels were skipped and left out of "
           "every figure." if card.get("label_warnings") else ""),
        "",
        *_label_warnings(card),
        "## Candidates",
        "",
    ]
    rows = [[cell(c["label"]), fixed(c["alpha"]) if c["alpha"] is not None else num(None), cell(", ".join(c["failed_probes"]) or "none"), _money(c["cost_per_1000_units"]),
             _seconds(c["seconds_per_1000_units"]), c["unreadable"], c["failed_items"]] for c in card["candidates"]]
    lines += markdown_table(["candidate", f"mean alpha ({ALPHA_LEVEL})", "failed probes", "cost / 1,000 units", "model time / 1,000 units",
                             "unreadable", "failed items"], rows, "lrlrrrr")
    lines += ["", "## Agreement with the humans (95% bootstrap CI)", ""]
    lines += _agreement_table(card)
    ceilings = any(a["ceiling"]["units"] for c in card["candidates"] for a in c["agreement"].values())
    lines += [] if not ceilings else ["", "The ceiling reads each annotator against the mean of the others; \"as the humans\" reads the judge against "
              "the same means, each annotator left out in turn (the fair comparison with the ceiling); \"vs the mean\" "
              "reads it against the mean of all annotators, a less noisy reference the humans never get. Exact and "
              "adjacent count matches with single labels, alike for humans and judge."]
    lines += ["", "## Probes (95% CI; a probe fails when its whole interval is past its limit)", ""]
    probe_names = list(card["probes_run"])
    rows = [[cell(c["label"]), *(_verdict(c["probes"][p]) for p in probe_names)] for c in card["candidates"]]
    lines += markdown_table(["candidate", *(get_probe(p).title for p in probe_names)], rows, "l" + "l" * len(probe_names))
    lines += ["", "Limits: " + ", ".join(f"{p} {card['limits'][p]:g}" for p in probe_names) + "."]
    lines += ["", "What each probe measures:", "", *(f"- {p}: {get_probe(p).description}" for p in probe_names)]
    missing = [f"- {cell(c['label'])}, {p}: {cell(c['probes'][p]['why_not'])}" for c in card["candidates"] for p in probe_names
               if c["probes"][p]["fails"] is None]
    lines += ["", "Not measured:", "", *missing] if missing else []
    lines += card_lines(card)  # issue 49: cascades and juries (none: nothing)
    if card.get("prediction_powered"):
        lines += ["", *_corpus_section(card["prediction_powered"])]
    lines += ["", "## Runs", ""]
    lines += [f"- {cell(c['label'])}: " + ", ".join(f"{name} `{Path(path).name}`" for name, path in c["runs"].items())
              for c in card["candidates"]]
    lines += ["", "Each figure is explained with a worked example in docs/trust.md.", ""]
    return "\n".join(lines)


def _corpus_section(ppi: dict[str, Any]) -> list[str]:
    """The whole data file judged by the pick: its mean per criterion three ways."""
    def shown(e: dict[str, Any]) -> str:
        return _ci({"value": e["mean"], "ci_low": e["ci_low"], "ci_high": e["ci_high"]})

    rows = [[cell(c), shown(m["judge_only"]), shown(m["human_only"]), shown(m["prediction_powered"]),
             f"{m['prediction_powered']['n_labelled']} of {m['judge_only']['n_judged']}"] for c, m in ppi["criteria"].items()]
    return [f"## The whole data file, judged by {cell(ppi['candidate'])} (95% CI)", "",
            *markdown_table(["criterion", "judge only", "humans only", "prediction-powered", "labelled of judged"], rows, "lllll"),
            "", "Prediction-powered: the judge's mean on every unit plus the mean of (human - judge) on the labelled ones; "
            "valid when the labelled units are a random sample of the file's."]


def _agreement_table(card: dict[str, Any]) -> list[str]:
    headers = ["criterion", "judge", "n", *NAMES.values()]
    rows = []
    keys = list(dict.fromkeys(k for c in card["candidates"] for k in c["agreement"]))
    for key in keys:
        first = next(c["agreement"][key] for c in card["candidates"] if key in c["agreement"])
        ceiling = first["ceiling"]
        among = ceiling.get("alpha_among_annotators")
        who = f"humans (ceiling, {ceiling['annotators']} annotators" + (f"; alpha among all {num(among)}" if among is not None else "") + ")"
        rows.append([cell(key), who, ceiling["units"],
                     *(_ci(ceiling[name]) for name in NAMES)])
        for c in card["candidates"]:
            row = c["agreement"].get(key)
            if row is None:
                continue
            held = row.get("leave_one_out") or {}
            if ceiling["units"] and held:
                rows.append([cell(key), f"{cell(c['label'])}, as the humans", held["units"],
                             *(_ci(held[name]) if name in RANKED else "" for name in NAMES)])
            rows.append([cell(key), f"{cell(c['label'])}, vs the mean" if ceiling["units"] else cell(c["label"]), row["n"],
                         *(_ci(row[name]) for name in NAMES)])
    return markdown_table(headers, rows, "llr" + "l" * len(NAMES))


def _comparable(row: dict[str, Any]) -> dict[str, Any]:
    """The judge's alpha read as the ceiling is (in each annotator's place) where there is a
    ceiling, else against the labels."""
    held = row.get("leave_one_out") or {}
    return held["krippendorff_alpha"] if row["ceiling"]["units"] and held else row["krippendorff_alpha"]


def figures(card: dict[str, Any]) -> list[Figure]:
    """Alpha per criterion with the ceiling beside; each probe's figure per candidate."""
    keys = list(dict.fromkeys(k for c in card["candidates"] for k in c["agreement"]))
    series: dict[str, list[float | None]] = {}
    intervals: dict[str, list[tuple[float, float] | None]] = {}

    def add(label: str, rows: list[dict[str, Any] | None]) -> None:
        series[label] = [r["value"] if r else None for r in rows]
        intervals[label] = [(r["ci_low"], r["ci_high"]) if r and r["ci_low"] is not None else None for r in rows]

    first = {k: next(c["agreement"][k] for c in card["candidates"] if k in c["agreement"]) for k in keys}
    add("humans (ceiling)", [first[k]["ceiling"]["krippendorff_alpha"] for k in keys])
    for c in card["candidates"]:
        add(c["label"], [_comparable(c["agreement"][k]) if k in c["agreement"] else None for k in keys])
    out: list[Figure] = [Bars("trust-alpha", f"Krippendorff's alpha ({ALPHA_LEVEL}) with the humans (ceiling: each annotator "
                              "against the others' mean; a judge in each annotator's place)", "alpha", keys, series, intervals)]
    names = list(card["probes_run"])
    probe_series = {c["label"]: [c["probes"][p]["value"] for p in names] for c in card["candidates"]}
    probe_ci = {c["label"]: [(c["probes"][p]["ci_low"], c["probes"][p]["ci_high"]) if c["probes"][p]["ci_low"] is not None else None
                             for p in names] for c in card["candidates"]}
    out.append(Bars("trust-probes", "Probe figures per candidate (limits in card.md)", "figure",
                    [get_probe(p).title for p in names], probe_series, probe_ci))
    return out


def write_card(card: dict[str, Any], folder: Path) -> None:
    """card.json, card.md and plots/ in ``folder``."""
    from dialeval.jsonsafe import dumps
    from dialeval.endpoint import redact_urls
    from dialeval.report.plots import draw
    from dialeval.secrets import scrub

    folder.mkdir(parents=True, exist_ok=True)
    card["plots"] = draw(figures(card), folder)
    shown = redact_urls(card)  # a candidate's base_url without its user info or query values (issue 45)
    (folder / "card.json").write_text(scrub(dumps(shown, indent=1, default=str)) + "\n", encoding="utf-8")
    text = scrub(render(shown))
    (folder / "card.md").write_text(text, encoding="utf-8")
    write_page(shown, text, folder)


def write_page(card: dict[str, Any], text: str, folder: Path) -> Path:
    """``view/index.html``: the card as a viewer page, its plots, and links to its runs' pages."""
    from dialeval.report.viewer.render import render as page

    runs = [{"label": c["label"], "runs": {probe: Path(path).name for probe, path in c["runs"].items()}} for c in card["candidates"]]
    return page("trust.html", folder / "view" / "index.html", name=card["id"], card_md=text, plots=card.get("plots", {}),
                candidates=runs, runs_dir=str(folder / "runs"))
