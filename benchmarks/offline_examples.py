"""Times every offline example of docs/running.md on the bundled SmolLM2-135M, and checks its tables.

Why: docs/running.md promises each offline example finishes within a few minutes on two CPU
cores and fills its tables; this script measures that promise as a user would meet it
(a fresh run, no response cache). On a shared machine the wall time depends on the load,
so each example also reports the CPU time it used and the load average around it.

    python benchmarks/offline_examples.py                # every example
    python benchmarks/offline_examples.py mdseval mmdu   # some of them

Per example: wall seconds, CPU seconds (user + system of the run's process), the 1-minute
load before and after, peak memory, model calls, unparsed/truncated answers and the
scores the report's tables rest on. It exits 1 when an example failed, filled no table or
rests on unreadable answers (half or more unparsed or cut off): ``make examples`` runs
the examples ``make demo`` does not, and CI runs it after ``make test`` and ``make demo``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = "src/dialeval/fixtures"

# name -> the documented command line after `dialeval run`
EXAMPLES: dict[str, list[str]] = {
    "kgds-demo-1": ["kgds", "--data", f"{FIXTURES}/kgds_demo.json", "--config", "configs/kgds-demo.yaml"],
    "kgds-demo-2": [
        "kgds", "--data", f"{FIXTURES}/kgds_demo.json", "--config", "configs/kgds-demo.yaml",
        "--option", f'predictions="{FIXTURES}/kgds_demo_predictions.jsonl"',
    ],
    "answers": ["answers", "--data", f"{FIXTURES}/answers_demo.jsonl", "--model", "smollm2"],
    "mdseval": ["mdseval", "--config", "configs/mdseval-offline.yaml"],
    "mmrc": ["mmrc", "--data", f"{FIXTURES}/mmrc_demo.json", "--config", f"{FIXTURES}/mmrc_smollm2.yaml"],
    "mmdu": ["mmdu", "--config", "configs/mmdu-offline.yaml"],
    "dialogue": [
        "dialogue", "--data", f"{FIXTURES}/dialogue_demo.jsonl", "--model", "smollm2",
        "--option", 'criteria=["consistency","goal_completion"]', "--option", 'facts="off"',
        "--option", "context_budget=1500",
    ],
}


@dataclass
class Timing:
    """One example's run: time, load, and whether its tables hold numbers."""

    name: str
    exit_code: int
    wall_s: float
    cpu_s: float
    load_before: float
    load_after: float
    peak_mb: float
    calls: int
    unparsed: int
    truncated: int
    scored: int

    @property
    def filled(self) -> bool:
        """Exit 0 (no failed item), some score in its tables, and fewer than half of its
        answers unreadable or cut off: what the suite's SmolLM2 tests ask of a run."""
        return self.exit_code == 0 and self.scored > 0 and self.unparsed + self.truncated < self.calls / 2


def run_example(name: str, args: list[str], out: Path) -> Timing:
    """Run one example in a child process, without the response cache, and read its run folder."""
    command = [
        sys.executable, "-c", "import sys; from dialeval.cli import main; sys.argv[0] = 'dialeval'; sys.exit(main())",
        "run", *args, "--output-dir", str(out), "--run-id", name, "--no-cache", "--no-progress",
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        print(done.stderr[-2000:], file=sys.stderr)
    metrics_path = out / name / "metrics.json"
    run = json.loads(metrics_path.read_text())["run"] if metrics_path.exists() else {}
    usage = run.get("usage", {})
    per_agent = json.loads((out / name / "usage.json").read_text())["per_agent"] if (out / name / "usage.json").exists() else {}
    return Timing(
        name=name,
        exit_code=done.returncode,
        wall_s=wall,
        cpu_s=(after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        load_before=load_before,
        load_after=os.getloadavg()[0],
        peak_mb=after.ru_maxrss / 1024,
        calls=int(usage.get("calls", 0)),
        unparsed=sum(int(a.get("unparsed", 0)) for a in per_agent.values()),
        truncated=sum(int(a.get("truncated", 0)) for a in per_agent.values()),
        scored=sum(int(s.get("n", 0)) for s in (run.get("scores") or {}).values()),
    )


def main(names: list[str]) -> int:
    chosen = names or list(EXAMPLES)
    unknown = [n for n in chosen if n not in EXAMPLES]
    if unknown:
        print(f"unknown examples {unknown}; choose from {list(EXAMPLES)}", file=sys.stderr)
        return 2
    print(f"{'example':<12} {'exit':>4} {'wall s':>7} {'cpu s':>7} {'load':>11} {'MB':>6} {'calls':>5} "
          f"{'unparsed':>8} {'cut off':>7} {'scores':>6}")
    ok = True
    with tempfile.TemporaryDirectory(prefix="dialeval-offline-") as tmp:
        for name in chosen:
            t = run_example(name, EXAMPLES[name], Path(tmp))
            ok = ok and t.filled
            print(f"{t.name:<12} {t.exit_code:>4} {t.wall_s:>7.0f} {t.cpu_s:>7.0f} "
                  f"{t.load_before:>5.1f}-{t.load_after:<5.1f} {t.peak_mb:>6.0f} {t.calls:>5} {t.unparsed:>8} "
                  f"{t.truncated:>7} {t.scored:>6}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
