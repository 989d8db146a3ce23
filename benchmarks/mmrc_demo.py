"""Where the offline MMRC example (docs/running.md) spends its time: model load, then every batch.

Runs ``dialeval run mmrc --data src/dialeval/fixtures/mmrc_demo.json --config
src/dialeval/fixtures/mmrc_smollm2.yaml`` in this process (fresh run folder, no response
cache) and prints the load time, one line per generated batch (when it started, how
long it took, its rows, the longest prompt, the new tokens of each row, how many rows
followed a JSON schema) and the wall and CPU totals. Run it as
``.venv/bin/python benchmarks/mmrc_demo.py [--no-weight-cache] [-- extra CLI args]``;
on a shared machine note ``uptime`` beside the figures.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

COMMAND = [
    "run", "mmrc",
    "--data", "src/dialeval/fixtures/mmrc_demo.json",
    "--config", "src/dialeval/fixtures/mmrc_smollm2.yaml",
    "--no-cache", "--fresh", "--no-progress",
]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-weight-cache", action="store_true", help="load SmolLM2 from its GGUF file (cold)")
    parser.add_argument("extra", nargs="*", help="more `dialeval run` arguments (after --)")
    args = parser.parse_args()
    if args.no_weight_cache:
        os.environ["DIALEVAL_WEIGHT_CACHE"] = tempfile.mkdtemp(prefix="dialeval-weights-")

    from dialeval.models import local_loading, local_models
    from dialeval.cli import main as cli

    batches: list[dict] = []
    original = local_models.LocalEngine._generate_batch
    started = time.perf_counter()

    def logged(self, requests, max_new_tokens, temperature):
        begin, cpu = time.perf_counter(), cpu_seconds()
        outputs = original(self, requests, max_new_tokens, temperature)
        batches.append(
            {
                "at": begin - started,
                "seconds": time.perf_counter() - begin,
                "cpu": cpu_seconds() - cpu,
                "rows": len(requests),
                "schema_rows": sum(r.schema is not None for r in requests),
                "prompt": max(o.input_tokens for o in outputs),
                "new": [o.output_tokens for o in outputs],
                "cut": sum(o.finish_reason == "length" for o in outputs),
            }
        )
        return outputs

    local_models.LocalEngine._generate_batch = logged
    with tempfile.TemporaryDirectory() as out:
        code = cli([*COMMAND, "--output-dir", out, *args.extra])
    wall, cpu = time.perf_counter() - started, cpu_seconds()

    load = sum(e.load_seconds for e in local_loading._ENGINES.values())
    print(f"\nexit {code}; wall {wall:.1f} s, CPU {cpu:.1f} s; model load {load:.1f} s; load average {os.getloadavg()}")
    print(f"{'at s':>6} {'secs':>6} {'cpu':>6} rows schema prompt cut  new tokens")
    for b in batches:
        print(f"{b['at']:6.1f} {b['seconds']:6.1f} {b['cpu']:6.1f} {b['rows']:4d} {b['schema_rows']:6d} "
              f"{b['prompt']:6d} {b['cut']:3d}  {b['new']}")
    generating = sum(b["seconds"] for b in batches)
    steps = sum(max(b["new"]) for b in batches)
    print(f"{len(batches)} batches, {sum(b['rows'] for b in batches)} rows, {steps} decode steps "
          f"in {generating:.1f} s ({steps / max(generating, 1e-9):.1f} steps/s); outside generation "
          f"{wall - generating - load:.1f} s")
    sys.exit(code)


if __name__ == "__main__":
    main()
