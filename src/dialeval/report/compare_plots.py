"""The figures of ``dialeval compare``: one agreement plot per dimension and pair of runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def agreement_plots(out: Path, comparisons: list[dict[str, Any]], scales: dict[str, tuple[float, float]]) -> dict[str, str]:
    """One figure per dimension and pair, ``agreement-<dimension>.png`` (``-<a>-vs-<b>`` when
    more than two runs): a count heat map on integer scales, else a scatter; both axes span
    the dimension's scale (:func:`dialeval.figures.scale_of`), not only the values seen."""
    import numpy as np

    from dialeval.figures import scale_of, slug
    from dialeval.report.plots import PNG_METADATA, fit_margins, new_figure

    pairs = {(c["a"], c["b"]) for c in comparisons}
    written: dict[str, str] = {}
    for c in comparisons:
        if not c["n"]:
            continue
        x = np.array([p[1] for p in c["pairs"]], dtype=float)
        y = np.array([p[2] for p in c["pairs"]], dtype=float)
        seen = sorted(set(x) | set(y))
        low, high = scale_of(c["dimension"], scales, seen) or (seen[0], seen[-1])
        low, high = min(low, seen[0]), max(high, seen[-1])
        fig, ax = new_figure(4.2, 3.8)
        if c["scale"] == "integer" and high - low <= 11 and low == int(low) and high == int(high):
            values = [float(v) for v in range(int(low), int(high) + 1)]  # the whole scale, gaps included
            grid = np.zeros((len(values), len(values)), dtype=int)
            pos = {v: k for k, v in enumerate(values)}
            for u, v in zip(x, y):
                grid[pos[v], pos[u]] += 1
            # counts from 0: one value seen everywhere is a dark cell, not a blank figure
            ax.imshow(grid, cmap="Blues", origin="lower", vmin=0, vmax=max(int(grid.max()), 1))
            labels = [f"{v:g}" for v in values]
            ax.set_xticks(range(len(values)), labels)
            ax.set_yticks(range(len(values)), labels)
            for r in range(len(values)):
                for k in range(len(values)):
                    if grid[r, k]:
                        ax.text(k, r, str(grid[r, k]), ha="center", va="center",
                                color="white" if grid[r, k] > grid.max() / 2 else "black", fontsize=8)
        else:
            pad = (high - low) * 0.05 or 0.5
            ax.scatter(x, y, s=14, alpha=0.6)
            ax.plot([low, high], [low, high], color="grey", linewidth=0.8, linestyle="--")
            ax.set_xlim(low - pad, high + pad)
            ax.set_ylim(low - pad, high + pad)
        ax.set_xlabel(_short(c["a"]))
        ax.set_ylabel(_short(c["b"]))
        ax.set_title(f"{c['dimension']} (n={c['n']})", fontsize=10)
        fit_margins(fig)
        stem = f"agreement-{slug(c['dimension'])}" + (f"-{slug(c['a'])}-vs-{slug(c['b'])}" if len(pairs) > 1 else "")
        name = f"{stem}.png"
        for k in range(2, len(comparisons) + 2):  # two dimensions may share a slug
            if name not in written.values():
                break
            name = f"{stem}-{k}.png"
        fig.savefig(out / name, metadata=PNG_METADATA)
        written[f"{c['dimension']}: {c['a']} vs {c['b']}"] = name
    return written


def _short(label: str, width: int = 40) -> str:
    return label if len(label) <= width else "..." + label[-(width - 3):]
