"""Seconds and peak memory of the judge-vs-human agreement figures (Spearman, Kendall tau-b,
Krippendorff's alpha, each with its bootstrap CI from the one resampler, 2,000 resamples) and of alpha among three
annotators, on synthetic scores: 1,000 and 10,000 units on a 0-100 scale, and real-valued.

    PYTHONPATH=src python benchmarks/agreement_speed.py
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from dialeval.metrics.judge_agreement import alpha_with_ci, paired_agreement


def measure(label: str, work) -> None:
    tracemalloc.start()
    start = time.perf_counter()
    work()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    print(f"| {label} | {seconds:.2f} | {peak:.0f} |")


def main() -> None:
    rng = np.random.default_rng(0)
    print("| case | seconds | peak MiB (numpy) |\n|---|---:|---:|")
    for n in (1_000, 10_000):
        a = rng.integers(0, 101, n).astype(float)
        b = np.clip(a + rng.integers(-10, 11, n), 0, 100)
        measure(f"{n:,} units, 0-100 scale: judge vs human, 3 figures + CIs", lambda: paired_agreement(a, b))
        real = a + rng.random(n)
        measure(f"{n:,} units, real-valued: judge vs human, 3 figures + CIs", lambda: paired_agreement(real, b))
        humans = np.column_stack([a, b, np.clip(a + rng.integers(-20, 21, n), 0, 100)])
        measure(f"{n:,} units, 3 annotators: alpha + CI", lambda: alpha_with_ci(humans))


if __name__ == "__main__":
    main()
