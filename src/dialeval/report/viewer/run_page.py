"""The page of one run: header, per-agent cost and latency, score histograms, plots, the report,
and the item table (sorting, search, filters and pages run in the browser).

The table's rows are written as small script files (``rows/<n>.js``, 500 rows each) that
the page loads, so the page stays the same size however many items the run has, works
opened as a file, and shows 200 rows at a time.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from dialeval.report.results import ItemResult, RunData
from dialeval.report.viewer.item_page import counts
from dialeval.report.viewer.render import render

ROWS_PER_FILE = 500
ROWS_PER_PAGE = 200
SEARCH_TEXT = 300  # characters of an item's texts kept for the search box
BINS = 10


def item_text(detail: Any, budget: int = SEARCH_TEXT) -> str:
    """The first texts of a record (question, answer, summary...), for the search box."""
    out: list[str] = []

    def walk(value: Any) -> None:
        if sum(map(len, out)) >= budget:
            return
        if isinstance(value, str) and len(value) > 12 and " " in value:
            out.append(value)
        elif isinstance(value, dict):
            for key, inner in value.items():
                if key not in ("calls", "usage", "call"):
                    walk(inner)
        elif isinstance(value, list):
            for inner in value[:20]:
                walk(inner)

    walk(detail)
    return " · ".join(out)[:budget]


def table_row(number: int, item: ItemResult) -> dict[str, Any]:
    """One row of the item table: scores are the item's mean per dimension (over its turns or summaries)."""
    return {
        "n": number, "id": item.id, "href": f"items/{number:05d}.html", "status": item.status,
        "system": item.system or "", "agents": sorted({str(c.get("agent")) for c in item.calls if c.get("agent")}),
        "calls": len(item.calls), "problems": {k: v for k, v in counts(item.calls).items() if k != "ok" and v},
        "scores": {dim: round(sum(units.values()) / len(units), 4) for dim, units in item.scores.items() if units},
        "seconds": item.seconds, "cost": item.cost_usd, "text": item_text(item.detail),
    }


def write_rows(out: Path, rows: list[dict[str, Any]]) -> list[str]:
    """The row files the page loads, in order; stale ones from a bigger earlier version are removed."""
    from dialeval.jsonsafe import dumps
    from dialeval.secrets import scrub

    folder = out / "rows"
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for k in range(0, max(len(rows), 1), ROWS_PER_FILE):
        name = f"rows/{k // ROWS_PER_FILE + 1:04d}.js"
        payload = scrub(dumps(rows[k:k + ROWS_PER_FILE], separators=(",", ":")))  # a lone surrogate escaped; secrets scrubbed
        (out / name).write_text(f"(window.DIALEVAL_ROWS = window.DIALEVAL_ROWS || []).push(...{payload});\n", encoding="utf-8")
        names.append(name)
    for stale in folder.glob("*.js"):
        if f"rows/{stale.name}" not in names:
            stale.unlink()
    return names


def histogram(values: list[float], dimension: str = "") -> dict[str, Any]:
    """Bars of one dimension: one per integer score when the scores are a small integer scale
    (the whole scale when the dimension's name gives it, as in ``score (1-5)``, so an unused
    value shows as an empty bar), else ten equal bins."""
    low, high = min(values), max(values)
    scale = re.search(r"\((\d+)\s*-\s*(\d+)\)", dimension)
    if scale and all(float(v).is_integer() for v in values):
        low, high = min(low, float(scale.group(1))), max(high, float(scale.group(2)))
    if all(float(v).is_integer() for v in values) and high - low <= 20:
        labels = [str(int(v)) for v in range(int(low), int(high) + 1)]
        tally = [sum(1 for v in values if int(v) == int(low) + i) for i in range(len(labels))]
    elif high == low:  # one value: one bar, not ten bins of an invented width (EP 0.5 drew 0.50 ... 9.50)
        labels, tally = [f"{low:.2f}"], [len(values)]
    else:
        if low >= 0.0 and high <= 1.0:  # a precision or a share: its whole 0-1 range
            low, high = 0.0, 1.0
        width = (high - low) / BINS
        tally = [0] * BINS
        for v in values:
            tally[min(int((v - low) / width), BINS - 1)] += 1
        labels = [f"{low + i * width:.2f}" for i in range(BINS)]
    peak = max(tally) or 1
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else 0.0
    return {"n": len(values), "mean": mean, "sd": sd, "low": low, "high": high,
            "bars": [{"label": lab, "count": c, "height": round(100 * c / peak, 1)} for lab, c in zip(labels, tally)]}


def agent_table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per agent, from the call records of ``results.jsonl`` (so a running run has it too): calls,
    cache hits, tokens, cost (None when a model has no known price), outcomes, and latency
    and retries where the records carry ``latency_s`` / ``retries`` (None otherwise)."""
    table: dict[str, dict[str, Any]] = {}
    latencies: dict[str, list[float]] = {}
    for row in rows:
        for call in row.get("usage") or []:
            if not isinstance(call, dict):
                continue
            agent = str(call.get("agent"))
            line = table.setdefault(agent, {"agent": agent, "models": set(), "calls": 0, "cached": 0, "input_tokens": 0,
                                            "output_tokens": 0, "cost": 0.0, "ok": 0, "unparsed": 0, "truncated": 0,
                                            "error": 0, "retries": None})
            line["models"].add(str(call.get("model")))
            line["calls"] += 1
            line["cached"] += int(bool(call.get("cached")))
            line["input_tokens"] += int(call.get("input_tokens") or 0)
            line["output_tokens"] += int(call.get("output_tokens") or 0)
            if line["cost"] is not None:
                line["cost"] = None if call.get("priced") is False else line["cost"] + float(call.get("cost") or 0.0)
            status = str(call.get("status"))
            line[status if status in ("ok", "unparsed", "truncated", "error") else "error"] += 1
            if isinstance(call.get("latency_s"), (int, float)) and not call.get("cached"):
                latencies.setdefault(agent, []).append(float(call["latency_s"]))
            line["sent"] = line.get("sent", 0) + int(bool(call.get("requests")) and not call.get("estimated"))
            if isinstance(call.get("retries"), int):
                line["retries"] = (line["retries"] or 0) + call["retries"]
    out = []
    for agent, line in sorted(table.items()):
        seen = sorted(latencies.get(agent, []))
        out.append({**line, "models": ", ".join(sorted(line["models"])),
                    "latency_mean": sum(seen) / len(seen) if seen else None,
                    "latency_p95": seen[min(len(seen) - 1, int(0.95 * len(seen)))] if seen else None,
                    "latency_missing": _latency_missing(line, seen)})
    return out


def _latency_missing(line: dict[str, Any], seen: list[float]) -> str | None:
    """Why an agent has no latency: ``sent none`` when no request reached a model (cache hits,
    a dry run: nothing to time), ``not recorded`` when requests went out but their records hold
    no timing (runs from before dialeval recorded it); ``None`` when it has one."""
    if seen:
        return None
    return "not recorded" if line.get("sent") else "sent none"


def plot_files(run_dir: Path) -> list[str]:
    """The PNG figures of a run (``*.png`` and ``plots/*.png``), relative to the run folder."""
    return sorted(p.name for p in run_dir.glob("*.png")) + sorted(f"plots/{p.name}" for p in (run_dir / "plots").glob("*.png"))


def write_run_page(run: RunData, overview: dict[str, Any], raw_rows: list[dict[str, Any]]) -> Path:
    out = run.path / "view"
    rows = [table_row(n, item) for n, item in enumerate(run.items, start=1)]
    dimensions = list(dict.fromkeys(dim for r in rows for dim in r["scores"]))
    histograms = {dim: histogram(list(units.values()), dim) for dim, units in run.scores().items() if units}
    report = run.path / "report.md"
    return render(
        "run.html", out / "index.html",
        run=overview, row_files=write_rows(out, rows), dimensions=dimensions, histograms=histograms,
        agents=agent_table(raw_rows), plots=plot_files(run.path), per_page=ROWS_PER_PAGE,
        all_agents=sorted({a for r in rows for a in r["agents"]}),
        report=report.read_text(encoding="utf-8").replace("](plots/", "](../plots/") if report.exists() else "_No report.md yet._",
    )
