"""Times the offline simulation example: the bundled toy bot, SmolLM2-135M as simulated user, auditor and judge.

Why: docs/simulation.md promises that one short scenario runs offline in under three
minutes on two CPU cores. This runs the documented command as a user would (a fresh run
folder, no response cache) and prints the wall and CPU time, the load around it, the
outcome, the stop reason and the calls per agent.

    python benchmarks/simulation_offline.py
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMAND = [
    "run", "simulation", "--data", "src/dialeval/fixtures/simulation_demo.yaml", "--model", "smollm2",
    "--option", 'bot="dialeval.testing.toy_bot:reply"', "--no-progress", "--no-cache",
]


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        load_before = os.getloadavg()[0]
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "dialeval", *COMMAND, "--output-dir", folder], cwd=ROOT,
                              capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        wall = time.perf_counter() - started
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            print(done.stdout[-2000:], done.stderr[-2000:], sep="\n")
            return done.returncode
        [run_dir] = Path(folder).iterdir()
        record = json.loads((run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])["result"]
        agents = json.loads((run_dir / "usage.json").read_text(encoding="utf-8"))["per_agent"]
        print(f"wall {wall:.0f} s, CPU {usage.ru_utime + usage.ru_stime:.0f} s, load {load_before:.1f} -> {os.getloadavg()[0]:.1f}")
        print(f"outcome {record['outcome']}, stop reason {record['stop_reason']}, user turns {record['user_turns']}")
        print("calls: " + ", ".join(f"{name} {row['calls']}" for name, row in agents.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
