"""DeepEval's ConversationSimulator and openevals' run_multiturn_simulation in the setting of
simulation_costs.py: 5 scenarios, one bot, 6 user turns, every model the same scripted server
at 500 ms a call (simulation_costs.py --serve, in its own process).

Why: issue 47 compares dialeval's calls, tokens, wall and CPU per simulated conversation with
what teams use. This script needs both libraries, which dialeval does not depend on: run it
in a virtualenv of its own, with the project's Python serving the stub:

    python -m venv /tmp/cmp && /tmp/cmp/bin/pip install deepeval openevals langchain-openai
    /tmp/cmp/bin/python benchmarks/simulation_compare.py --stub-python .venv/bin/python

DeepEval runs its simulated user and its stopping check (no metric); openevals runs its
simulated user and one LLM-as-judge over the trajectory. Calls and prompt tokens are
counted by the server (characters / 4, as it reports usage for dialeval); CPU is this
process's (the framework and the bot).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = 5
TURNS = 6
REPLY = "I see. Could you tell me more?"


def start_stub(python: str, latency: float) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    server = subprocess.Popen([python, str(ROOT / "benchmarks" / "simulation_costs.py"), "--serve", "--latency", str(latency)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    return server, server.stdout.readline().strip()  # type: ignore[union-attr]


def stop_stub(server: subprocess.Popen[str]) -> dict[str, Any]:
    server.stdin.close()  # type: ignore[union-attr]
    counts = json.loads(server.stdout.readline())  # type: ignore[union-attr]
    server.wait(timeout=30)
    return counts


async def deepeval_run(base_url: str) -> None:
    import openai
    from deepeval.dataset import ConversationalGolden
    from deepeval.models import DeepEvalBaseLLM
    from deepeval.simulator import ConversationSimulator
    from deepeval.test_case import Turn

    class Stub(DeepEvalBaseLLM):
        def __init__(self) -> None:
            self.sync_client = openai.OpenAI(base_url=base_url, api_key="stub", max_retries=0)
            self.async_client = openai.AsyncOpenAI(base_url=base_url, api_key="stub", max_retries=0)
            super().__init__("stub")

        def load_model(self, *args: Any, **kwargs: Any) -> Any:
            return self.sync_client

        def generate(self, prompt: str, schema: Any = None) -> Any:
            text = self.sync_client.chat.completions.create(model="stub", messages=[{"role": "user", "content": prompt}]).choices[0].message.content
            return schema.model_validate_json(text) if schema else text

        async def a_generate(self, prompt: str, schema: Any = None) -> Any:
            answer = await self.async_client.chat.completions.create(model="stub", messages=[{"role": "user", "content": prompt}])
            text = answer.choices[0].message.content
            return schema.model_validate_json(text) if schema else text

        def get_model_name(self) -> str:
            return "stub"

    async def bot(input: str, turns: list[Any], thread_id: str) -> Any:
        return Turn(role="assistant", content=REPLY)

    goldens = [ConversationalGolden(scenario=f"Customer {i} needs help with problem number {i}.", expected_outcome="The problem is solved.",
                                    user_description=f"Customer {i}, polite and patient") for i in range(1, SCENARIOS + 1)]
    simulator = ConversationSimulator(model_callback=bot, simulator_model=Stub(), max_concurrent=SCENARIOS)
    await asyncio.to_thread(simulator.simulate, conversational_goldens=goldens, max_user_simulations=TURNS)


async def openevals_run(base_url: str) -> None:
    from langchain_openai import ChatOpenAI
    from openevals.llm import create_async_llm_as_judge
    from openevals.simulators import create_async_llm_simulated_user, run_multiturn_simulation_async

    model = ChatOpenAI(model="stub", base_url=base_url, api_key="stub", max_retries=0)  # type: ignore[arg-type]

    async def bot(message: Any, **kwargs: Any) -> dict[str, str]:
        return {"role": "assistant", "content": REPLY}

    judge = create_async_llm_as_judge(prompt="Did the bot help the user? {outputs}", judge=model, feedback_key="helped")

    async def one(i: int) -> Any:
        user = create_async_llm_simulated_user(system=f"You are Customer {i}, polite and patient, with problem number {i}. (openevals user)",
                                               client=model)
        return await run_multiturn_simulation_async(app=bot, user=user, max_turns=TURNS, trajectory_evaluators=[judge])

    await asyncio.gather(*(one(i) for i in range(1, SCENARIOS + 1)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stub-python", default=sys.executable, help="a Python with dialeval importable (serves the stub)")
    parser.add_argument("--latency", type=float, default=0.5)
    args = parser.parse_args()
    os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
    import deepeval.simulator  # noqa: F401  (imports outside the measured time, as for dialeval)
    import langchain_openai  # noqa: F401
    import openevals.simulators  # noqa: F401
    for name, runner in (("DeepEval ConversationSimulator", deepeval_run), ("openevals run_multiturn_simulation", openevals_run)):
        server, base_url = start_stub(args.stub_python, args.latency)
        try:
            cpu, wall = time.process_time(), time.perf_counter()
            asyncio.run(runner(base_url))
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        finally:
            counts = stop_stub(server)
        print(f"{name:36} {counts['calls'] / SCENARIOS:g} calls and {counts['prompt_tokens'] / SCENARIOS:,.0f} prompt tokens per conversation; "
              f"wall {wall:.1f} s; CPU {cpu / SCENARIOS:.2f} s per conversation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
