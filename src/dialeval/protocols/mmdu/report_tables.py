"""The MMDU report's tables, its glossary and `dialeval metrics mmdu` (the paper's judge-vs-judge table)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dialeval.report.tables import markdown_table, num
from dialeval.protocols.mmdu import metrics
from dialeval.protocols.mmdu.metrics import DIMENSIONS, SHORT
from dialeval.protocols.mmdu.loading import read_options


def tables(m: dict[str, Any]) -> str:
    s = m["scores"]
    how = "mean over each dialogue's turns, then over dialogues" if s["aggregation"] == "dialogue" else "mean over all turns"
    lines = [
        f"Scores 1-10 x10 ({how}); Overall is the paper's Avg. column. 95% CI: bootstrap interval over "
        + ("dialogues" if s["aggregation"] == "dialogue" else "turns") + " (n/a under two).",
        "",
        *metrics.scores_table({m["system"]: s}, label="system", intervals=True),
        "",
        f"{s['dialogues']} dialogues, {s['turns']} turns: {s['answered']} answered, {s['judged']} judged, "
        f"{s['judge_failed']} judge answers unusable (left out). Pictures sent to the judge: {m['judge_pictures']}"
        " (dry runs count their caption lines, not image tokens).",
        "",
        *markdown_table(
            [None, *(SHORT[d] for d in DIMENSIONS)],
            [[label, *(s["dimensions"][d][key] for d in DIMENSIONS)] for label, key in (("turns scored", "turns"), ("unparsed (left out)", "unparsed"))],
            "l" + "r" * len(DIMENSIONS),
        ),
    ]
    ctx = m["context"]
    if ctx["window"] is not None:
        dropped = ctx["dialogues_with_dropped_turns"]
        lines += ["", f"Context window {ctx['window']} tokens, policy `{ctx['policy']}`: "
                  + (", ".join(f"`{k}` dropped {v} turn(s) of history" for k, v in dropped.items()) if dropped else "no turn dropped.")]
    human = m.get("human")
    if human:
        lines += [
            "",
            f"Judge vs expert Overall scores ({human['rated_turns']} rated turns, {human['judge_missing']} without a judge score):",
            "",
            *markdown_table(
                ["level", "n", "Pearson", "Spearman", "Kendall tau-b"],
                [[level, human[level]["n"], *(num(human[level][k], 3) for k in ("pearson", "spearman", "kendall_tau_b"))]
                 for level in ("turns", "dialogues")],
                "lrrrr",
            ),
        ]
    return "\n".join(lines)


def _judge_label(run_dir: Path) -> str:
    config = json.loads((run_dir / "config.json").read_text())
    ctx = config.get("context", {})
    model = ctx.get("models", {}).get("judge") or ctx.get("default_model") or {}
    return f"{model.get('spec', '?')} ({run_dir.name})"


def compare_judges(paths: list[Path], options: dict[str, Any]) -> str:
    """Judge-vs-judge table of run folders that judged the same answers (``dialeval metrics mmdu``)."""
    from dialeval.run.folder import read_results

    runs = {}
    for path in paths:
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"{path} is not a run folder (no config.json)")
        runs[_judge_label(path)] = [row["result"] for row in read_results(path) if row["status"] == "ok"]
    return metrics.agreement_table(metrics.judge_agreement(runs, read_options(options).aggregation))


GLOSSARY = {code: name for name, code in SHORT.items() if code != name.split()[0]}
