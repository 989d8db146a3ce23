"""Calls, prompt tokens, wall and CPU of simulated conversations, per audit mode.

Why: a simulation should cost no more calls than it needs (the target: at most user
turns + 2 per conversation in the default mode) and little CPU beside the model (at most
1 s per 6-turn conversation). The setting of issue 47: 5 scenarios, one bot, 6 user turns
each, every model the same scripted server at 500 ms a call. The server runs in its own
process, so the CPU printed is dialeval's (and the trivial bot's) alone.

    python benchmarks/simulation_costs.py [--latency 0.5] [--modes conversation,turn,off]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

SCENARIOS = [
    {"id": f"task{i}", "persona": f"Customer {i}, polite and patient", "goal": f"get help with problem number {i}",
     "hidden_facts": {"account": f"AC-{i}00{i}"}, "max_turns": 6,
     "success": {"criteria": [{"name": "helped", "description": "The bot helped the user."}], "checks": [{"said": "never said"}]}}
    for i in range(1, 6)
]


def bot(messages: list[dict[str, Any]], session_id: str) -> str:
    """The bot under test: answers every user turn the same way."""
    return f"I see. Could you tell me more? (reply {sum(m['role'] == 'user' for m in messages)})"


def respond(body: dict[str, Any]) -> str:
    from dialeval.testing.openai_server import prompt_of

    text = prompt_of(body)
    if "You play a person" in text:
        number = int(re.search(r"your message number (\d+)", text).group(1))  # type: ignore[union-attr]
        return json.dumps({"message": f"Here is more about my problem, part {number}.", "stop": None, "notes": {}})
    if "<turns_to_check>" in text or "You check a simulated user" in text:
        return json.dumps({"rationale": "keeps the rules", "findings": []})
    if "is_complete" in text:  # DeepEval's stopping check (simulation_compare.py): never done, all 6 turns
        return json.dumps({"is_complete": False, "reason": "the user still needs help"})
    if "simulated_input" in text:  # DeepEval's simulated user
        return json.dumps({"simulated_input": "Here is more about my problem."})
    if "Did the bot help the user?" in text:  # openevals' LLM-as-judge, with simulation_compare.py's prompt
        return json.dumps({"reasoning": "it helped", "score": True})
    if "(openevals user)" in text:  # openevals' simulated user: plain text
        return "Here is more about my problem."
    return json.dumps({"rationale": "it helped", "verdict": "yes"})


def serve(latency: float) -> None:
    from dialeval.testing.openai_server import OpenAIStub

    from dialeval.testing.openai_server import prompt_of

    with OpenAIStub(respond=respond, latency=latency) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()  # until the parent closes it
        bodies = server.completions
    # what the server saw, counted as its usage counts prompt tokens (characters / 4)
    print(json.dumps({"calls": len(bodies), "prompt_tokens": sum(max(1, len(prompt_of(b)) // 4) for b in bodies)}), flush=True)


def measure(base_url: str, mode: str, folder: Path) -> dict[str, Any]:
    from dialeval.config import ModelSettings, RunConfig
    from dialeval.evaluation import run

    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "suite.yaml"
    data.write_text(yaml.safe_dump(SCENARIOS), encoding="utf-8")
    config = RunConfig(model=ModelSettings(spec="openai-compatible:scripted", base_url=base_url, max_retries=0),
                       output_dir=str(folder / mode), cache_path=str(folder / f"{mode}.sqlite"),
                       options={"bot": "benchmarks.simulation_costs:bot", "audit": mode})
    cpu, wall = time.process_time(), time.perf_counter()
    result = run("simulation", str(data), config, progress=False)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    usage = json.loads((result.run_dir / "usage.json").read_text(encoding="utf-8"))
    n = len(result.records)
    return {"mode": mode, "conversations": n, "user_turns": sum(r["user_turns"] for r in result.records) / n,
            "calls": usage["total"]["calls"] / n, "sent": usage["total"]["requests"] / n, "prompt_tokens": usage["total"]["input_tokens"] / n,
            "per_agent": {k: v["calls"] / n for k, v in usage["per_agent"].items()}, "wall": wall, "cpu_per_conversation": cpu / n}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--modes", default="conversation,turn,off")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.latency)
        return 0
    server = subprocess.Popen([sys.executable, __file__, "--serve", "--latency", str(args.latency)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env={**os.environ})
    try:
        base_url = server.stdout.readline().strip()  # type: ignore[union-attr]
        import dialeval.evaluation  # noqa: F401  (imports outside the measured time, as a warm process has them)

        with tempfile.TemporaryDirectory() as folder:
            measure(base_url, "off", Path(folder) / "warm-up")  # first-run costs (graph build, tokenizer) apart from the figures
            for mode in args.modes.split(","):
                row = measure(base_url, mode, Path(folder))
                agents = ", ".join(f"{k} {v:g}" for k, v in row["per_agent"].items())
                print(f"audit={mode:12} {row['conversations']} conversations of {row['user_turns']:g} user turns: "
                      f"{row['calls']:g} calls ({row['sent']:g} sent: identical prompts go once) and "
                      f"{row['prompt_tokens']:,.0f} prompt tokens per conversation ({agents}); "
                      f"wall {row['wall']:.1f} s; CPU {row['cpu_per_conversation']:.2f} s per conversation")
    finally:
        server.stdin.close()  # type: ignore[union-attr]
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
