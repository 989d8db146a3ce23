"""Per protocol: requests, input tokens, the share an API's prompt cache would serve, and
the cost with and without prompt caching, from dry runs (no model is called).

The dry-run backend replays every prompt through dialeval's prefix-cache emulator
(OpenAI's rule: prefixes of 1,024 tokens and more, in steps of 128), so this measures
how prefix-stable each protocol's prompts are. With ``--shared`` it also runs the real
KGDS and VDAct files from ../shared/data (whole benchmark; a minute or two).

The protocols with a growing conversation are also measured at realistic length
(``conversation_cases``): synthetic MMRC conversations and MMDU dialogues of the papers'
typical lengths, made at run time (dialeval.testing.conversations), and, with
``--shared``, VDEval with a one-shot example of the paper's shape (a whole five-turn
dialogue with its summary) built at run time from the shared prediction files.
``--roles`` adds, per agent and for every case, where the uncached tokens go and the
ceiling no prompt layout can pass (only requests of 1,024 tokens or more are ever cached;
benchmarks/cache_by_role.py).

Usage: python benchmarks/prompt_caching.py [--model gpt-4o-mini] [--shared] [--roles]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from cache_by_role import measure, print_agents

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "src" / "dialeval" / "fixtures"
SHARED = ROOT.parent / "shared" / "data"


def cases(shared: bool) -> list[tuple[str, str, Path]]:
    out = [
        ("kgds", "fixture", FIXTURES / "kgds_demo.json"),
        ("vdact", "fixture", FIXTURES / "vdact_demo" / "predictions" / "demo-bot.json"),
        ("mmrc", "fixture", FIXTURES / "mmrc_demo.json"),
        ("mmdu", "fixture", FIXTURES / "mmdu_demo.json"),
        ("answers", "fixture", FIXTURES / "answers_demo.jsonl"),
    ]
    if (FIXTURES / "mdseval_demo.json").exists():
        out.append(("mdseval", "fixture", FIXTURES / "mdseval_demo.json"))
    if shared and SHARED.is_dir():
        out.append(("kgds", "KGDS.json (100 samples)", SHARED / "kgds" / "KGDS.json"))
        out.append(("vdact", "test-videollama2-8f (450 dialogues)", SHARED / "vdact" / "predictions" / "test-videollama2-8f.json"))
    return out


# ---------------------------------------------------------------- growing conversations at realistic length

MMRC_CONVERSATIONS = 40  # enough for a stable share; the share, not the bill, is what these rows are for
MMDU_DIALOGUES = 110  # the whole MMDU benchmark's count
EXAMPLE_SOURCE = "test-videollava-7b-8f.json"  # another system's answers than the file measured
EXAMPLE_TURNS = 5  # the paper's one-shot example: a whole dialogue of five turns with its summary


def vdact_example(folder: Path) -> Path | None:
    """An example file of the paper's shape, for token counts only: the first five turns of a
    dialogue of the shared data, verdicts of typical length. The shared data holds no
    training-split dialogue, so a test dialogue of another system stands in; written to
    ``folder`` at run time, never committed."""

    from dialeval.protocols.vdact.common import DRY_RUN_RATIONALE

    source = SHARED / "vdact" / "predictions" / EXAMPLE_SOURCE
    if not source.exists():
        return None
    records = json.loads(source.read_text(encoding="utf-8"))
    dial_id = min(r["dial_id"] for r in records)
    by_number = {r["turn_num"]: r for r in reversed(records) if r["dial_id"] == dial_id}  # the file repeats some turns
    turns = [by_number[n] for n in sorted(by_number)][:EXAMPLE_TURNS]
    path = folder / "vdact_example.json"
    path.write_text(json.dumps([{**r, "rationale": DRY_RUN_RATIONALE, "rating": 2} for r in turns]), encoding="utf-8")
    return path


def conversation_cases(shared: bool, folder: Path) -> list[tuple[str, str, Path, dict]]:
    """(benchmark, label, data, options) of the protocols with a growing conversation, at realistic length."""

    from dialeval.testing.conversations import mmdu_dialogues, mmrc_conversations

    mmrc, mmdu = folder / "mmrc_synthetic.json", folder / "mmdu_synthetic.json"
    mmrc.write_text(json.dumps(mmrc_conversations(MMRC_CONVERSATIONS)), encoding="utf-8")
    mmdu.write_text(json.dumps(mmdu_dialogues(MMDU_DIALOGUES)), encoding="utf-8")
    out = [
        ("mmrc", f"synthetic, {MMRC_CONVERSATIONS} conversations (15 turns, 6 questions)", mmrc, {}),
        ("mmdu", f"synthetic, {MMDU_DIALOGUES} dialogues (15 turns, 3.8 images)", mmdu, {}),
    ]
    predictions = SHARED / "vdact" / "predictions" / "test-videollama2-8f.json"
    example = vdact_example(folder) if shared and predictions.exists() else None
    if example is not None:
        out.append(("vdact", "test-videollama2-8f, built-in example", predictions, {}))
        out.append(("vdact", f"test-videollama2-8f, {EXAMPLE_TURNS}-turn example", predictions, {"example_path": str(example)}))
    return out


HEADER = (
    "| protocol | data | requests | input tokens | cacheable | cost with caching | cost without | saved |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|"
)


def usage_row(bench: str, label: str, u: dict[str, Any]) -> str:
    """One table row from a run's usage totals."""
    share = u["cached_input_tokens"] / u["input_tokens"] if u["input_tokens"] else 0.0
    with_, without = u["cost_usd"], u["cost_without_prompt_cache_usd"]
    saved = 1 - with_ / without if without else 0.0
    return (f"| {bench} | {label} | {u['calls']} | {u['input_tokens']:,} | {100 * share:.1f}% "
            f"| ${with_:.4f} | ${without:.4f} | {100 * saved:.1f}% |")


def conversations_table(shared: bool, roles: bool, model: str, out: Path) -> None:
    """The growing-conversation protocols at realistic length, items one at a time."""
    print("\nGrowing conversations at realistic length (dry runs, one item at a time)\n")
    print(HEADER)
    logs = []
    for bench, label, data, options in conversation_cases(shared, out):
        u, log = measure(bench, data, out, model, options)
        logs.append((f"{bench}, {label}", log))
        print(usage_row(bench, label, u))
    for label, log in logs if roles else []:
        print_agents(label, log)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt-4o-mini", help="price the dry run as this model")
    ap.add_argument("--shared", action="store_true", help="also the real KGDS and VDAct files")
    ap.add_argument("--roles", action="store_true", help="per agent: where the uncached tokens go")
    args = ap.parse_args()
    out = Path(tempfile.mkdtemp(prefix="dialeval-cache-bench-"))
    print(f"dry runs priced as {args.model}; cacheable = prompt tokens an API prefix cache would serve\n")
    print(HEADER)
    for bench, label, data in cases(args.shared):
        if not data.exists():
            continue
        config = RunConfig(
            model=ModelSettings(spec=f"dry-run:{args.model}"), output_dir=str(out), cache_path=None, preflight=False
        )
        result = run(bench, data, config, progress=False)
        print(usage_row(bench, label, result.metrics["run"]["usage"]))
    for bench, label, data in cases(args.shared) if args.roles else []:
        if data.exists():
            print_agents(f"{bench}, {label}", measure(bench, data, out, args.model)[1])
    conversations_table(args.shared, args.roles, args.model, out)


if __name__ == "__main__":
    main()
