"""Cascades and a jury against the strong judge, on scripted judges whose errors are known.

    python benchmarks/cascades.py [--conversations 40] [--hard-every 10 4 3]

The judges (:mod:`dialeval.testing.cascade_judges`, served over HTTP on 127.0.0.1):
``cheap`` is right on easy units and gives the same verdict at every reading there, and is
wrong on hard units with a verdict that changes between readings; ``strong`` is right
everywhere at twenty times ``cheap``'s price. For each share of hard units the script builds
a trust card with ``--cascades`` (agreement only: no probes) and prints per candidate its
mean alpha, its gap to the strong judge's, its cost per 1,000 units and as a share of the
strong judge's, and the share of units escalated. Target (issue 49): a cascade within
0.05 alpha of the strong judge at no more than 40% of its cost.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import dialeval
from dialeval.testing import cascade_judges as cj
from dialeval.testing.openai_server import OpenAIStub


def card(folder: Path, conversations: int, every: int) -> dict:
    data = folder / "chats.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in cj.conversations(conversations, every)), encoding="utf-8")
    labels = folder / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in cj.labels(conversations)), encoding="utf-8")
    rubric = folder / "rubric.yaml"
    rubric.write_text(cj.RUBRIC, encoding="utf-8")
    with OpenAIStub(respond=cj.respond) as server:
        judges = [{"model": {"spec": f"openai-compatible:{name}", "base_url": server.base_url, "price": cj.PRICES[name],
                             "max_retries": 0}, "name": name} for name in ("cheap", "strong")]
        return dialeval.trust_card(data, labels, str(rubric), judges, cascades=True, probes=(), repeats=1,
                                   output_dir=folder / "trust", cache_path=str(folder / "cache.sqlite"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=40, help="conversations of three replies (default 40: 120 units)")
    parser.add_argument("--hard-every", type=int, nargs="+", default=[10, 4, 3], help="every n-th unit is hard (default 10 4 3)")
    args = parser.parse_args()
    print("| hard units | candidate | mean alpha | gap to strong | $ / 1,000 units | share of strong's cost | escalated | target |")
    print("|---:|---|---:|---:|---:|---:|---:|---|")
    for every in args.hard_every:
        with tempfile.TemporaryDirectory() as tmp:
            built = card(Path(tmp), args.conversations, every)
        rows = {c["label"]: c for c in built["candidates"]}
        strong = rows["strong"]
        for label, row in rows.items():
            gap = strong["alpha"] - row["alpha"]
            share = row["cost_per_1000_units"] / strong["cost_per_1000_units"]
            escalated = (row.get("composite") or {}).get("escalated_share")
            meets = ("meets" if gap <= 0.05 and share <= 0.40 else f"misses ({'cost' if share > 0.4 else 'alpha'})"
                     ) if label.startswith("cascade") else ""
            print(f"| {1 / every:.0%} | {label} | {row['alpha']:.3f} | {gap:+.3f} | {row['cost_per_1000_units']:.4f} | "
                  f"{share:.0%} | {'' if escalated is None or label.startswith('jury') else f'{escalated:.0%}'} | {meets} |")
        for found in built.get("calibration", []):
            print(f"\n<!-- {1 / every:.0%} hard: calibrated threshold {found['threshold']}: {found['guarantee']} -->\n")


if __name__ == "__main__":
    main()
