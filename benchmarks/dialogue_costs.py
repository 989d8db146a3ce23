"""Dry-run cost of judging one long conversation under each context mode (no model is called).

    python benchmarks/dialogue_costs.py [--turns 50 200] [--budget 4000] [--price-as gpt-4o-mini]

Generates a conversation of N turns (user and assistant alternating, replies of about
60 tokens), runs the `dialogue` benchmark with the `dry-run:<price-as>` backend on one
turn-level criterion (consistency) and one conversation-level criterion (goal
completion), and prints per mode: the prompts sent (judge and note-taker), the
prompts recorded over budget (not sent), the input tokens, the largest prompt and the
estimated cost. The note-taker's dry-run note grows by one entry per reply.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from dialeval.config import ModelSettings, RunConfig
from dialeval.evaluation import run

MODES = ("full", "window", "session", "notes")
TOPICS = ("the venue", "the catering", "the guest list", "the music", "the budget", "the schedule", "the weather plan")


def conversation(turns: int) -> dict:
    """``turns`` messages: a planning chat where each reply is a few sentences long."""
    messages = []
    for k in range(turns // 2):
        topic = TOPICS[k % len(TOPICS)]
        messages.append({"role": "user", "content": f"Question {k + 1}: what should I decide next about {topic}?"})
        messages.append({"role": "assistant", "content": (
            f"For {topic}, settle the main choice first, then the details. Compare two or three options, write down "
            f"what each costs and what it needs from you, and pick the one that fits your dates. Tell me what you "
            f"choose and I will help with the next step for {topic}."
        )})
    return {"id": f"chat-{turns}", "messages": messages}


def measure(turns: int, mode: str, budget: int, price_as: str, folder: Path) -> dict:
    data = folder / f"chat-{turns}.jsonl"
    data.write_text(json.dumps(conversation(turns)) + "\n", encoding="utf-8")
    config = RunConfig(
        model=ModelSettings(spec=f"dry-run:{price_as}"),
        output_dir=str(folder / f"{mode}-{turns}"),
        cache_path=None,
        options={"context": mode, "context_budget": budget, "criteria": ["consistency", "goal_completion"]},
    )
    result = run("dialogue", data, config, progress=False)
    usage = json.loads((result.run_dir / "usage.json").read_text(encoding="utf-8"))["total"]
    prompts = result.metrics["prompts"]
    return {
        "turns": turns, "mode": mode, "calls": usage["calls"], "over_budget": prompts["over_budget"],
        "input_tokens": usage["input_tokens"], "largest": max(prompts["judge_max"], prompts["notetaker_max"]),
        "usd": usage["cost_usd"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--budget", type=int, default=4000)
    parser.add_argument("--price-as", default="gpt-4o-mini")
    args = parser.parse_args()
    print(f"budget {args.budget} tokens per prompt, window 6 turns, priced as {args.price_as}\n")
    print("| turns | mode | prompts sent | over budget (not sent) | input tokens | largest prompt | cost (USD) |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for turns in args.turns:
            for mode in MODES:
                row = measure(turns, mode, args.budget, args.price_as, Path(tmp))
                print(f"| {row['turns']} | {row['mode']} | {row['calls']} | {row['over_budget']} | {row['input_tokens']:,} "
                      f"| {row['largest']:,} | {row['usd']:.4f} |", flush=True)


if __name__ == "__main__":
    main()
