"""False-fail rate and interval coverage of the paired test, and the sequential test's false
decisions, by simulation (numpy, vectorised over the simulated comparisons).

For every score shape and number of units n it draws ``--sims`` paired comparisons and
runs the code the gate and ``dialeval compare`` run (:func:`dialeval.metrics.paired.interval`,
the same bound) and the one ``stop_when_decided`` runs
(:func:`dialeval.metrics.sequential.confidence_sequence`, decisions from unit 10). Columns:

- ``false fail``: no effect (true mean change 0), share of comparisons a regression rule with
  margin 0 fails (the 95% interval lies below 0);
- ``miss (0)``: no effect, share of intervals that leave out the true change 0;
- ``miss (+0.5 SD)``: a true change of half an SD of the differences, share of intervals
  that leave it out;
- ``seq. false``: no effect, share of sequences (looked at after every unit) that ever
  decided the systems differ;
- ``shows +0.5 SD``: what the validity costs, the share of +0.5 SD changes whose interval
  excludes 0 (not an error rate; no limit).

Every column's nominal rate is at most 5%; ``limit`` is 5% + 2 standard errors of a 5% rate
at ``--sims`` comparisons, and the last column says whether every figure of the row is within it.

Shapes (differences B - A; the bound is the largest possible |difference|):

- ``likert``: two exchangeable 1-5 scores of a unit (its latent quality plus each system's
  noise, rounded): symmetric differences, bound 4;
- ``skewed``: +1 (80%) / -4 (20%): mean 0, a rare large drop against small gains, bound 4;
- ``ties``: 90% equal, 5% each +1 / -1, bound 4;
- ``win/tie/loss``: a pairwise verdict, +1 / 0 / -1 with 30% / 40% / 30%, bound 1;
- ``0-100``: two exchangeable continuous 0-100 scores (100 x Beta(2, 5) each), bound 100.

Usage: python benchmarks/paired_test_validity.py [--sims 4000] [--seed 0] [--sizes 3 4 5 8 12 20 50 200 300 1000]
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Callable

import numpy as np

from dialeval.metrics.paired import interval
from dialeval.metrics.sequential import MIN_UNITS, confidence_sequence, tuned_for

SIZES = [3, 4, 5, 8, 12, 20, 50, 200, 300, 1000]  # 300: where the issue measured the sequential test
CHUNK_VALUES = 4_000_000  # subset means (or differences) held at once: memory stays flat


def likert(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    quality = rng.normal(3.0, 1.0, shape)
    a = np.clip(np.rint(quality + rng.normal(0, 0.7, shape)), 1, 5)
    b = np.clip(np.rint(quality + rng.normal(0, 0.7, shape)), 1, 5)
    return b - a


def skewed(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    return np.where(rng.random(shape) < 0.2, -4.0, 1.0)


def ties(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    u = rng.random(shape)
    return np.where(u < 0.05, -1.0, np.where(u < 0.10, 1.0, 0.0))


def win_tie_loss(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    u = rng.random(shape)
    return np.where(u < 0.3, -1.0, np.where(u < 0.6, 1.0, 0.0))


def continuous(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    return 100 * (rng.beta(2, 5, shape) - rng.beta(2, 5, shape))


# name -> (draw, bound)
SHAPES: dict[str, tuple[Callable[[np.random.Generator, tuple[int, int]], np.ndarray], float]] = {
    "likert": (likert, 4.0), "skewed": (skewed, 4.0), "ties": (ties, 4.0), "win/tie/loss": (win_tie_loss, 1.0),
    "0-100": (continuous, 100.0),
}


def intervals(d: np.ndarray, bound: float) -> tuple[np.ndarray, np.ndarray]:
    """The paired test's interval for each row, in chunks (the exact test's subset means are many)."""
    n = d.shape[1]
    per_row = (2**n if n <= 16 else 1) * n
    step = max(1, CHUNK_VALUES // per_row)
    lows, highs = zip(*(interval(d[i:i + step], bound) for i in range(0, len(d), step)))
    return np.concatenate(lows), np.concatenate(highs)


def sequential_false(d: np.ndarray, bound: float) -> float:
    """Share of no-effect sequences that ever decided (from unit :data:`MIN_UNITS` on)."""
    n = d.shape[1]
    if n < MIN_UNITS:
        return 0.0
    low, high = confidence_sequence(d, method="asymptotic", bound=bound, tuned_for=tuned_for(n))
    decided = (low[:, MIN_UNITS - 1:] > 0) | (high[:, MIN_UNITS - 1:] < 0)
    return float(decided.any(axis=1).mean())


def row(rng: np.random.Generator, shape: str, n: int, sims: int) -> tuple[tuple[float, float, float, float], float]:
    draw, bound = SHAPES[shape]
    sd = float(draw(np.random.default_rng(12345), (1, 200_000)).std())
    null = draw(rng, (sims, n))
    low, high = intervals(null, bound)
    false_fail = float((high < 0).mean())
    miss_null = float(((low > 0) | (high < 0)).mean())
    shift = 0.5 * sd
    low, high = intervals(draw(rng, (sims, n)) + shift, bound)
    miss_effect = float(((low > shift) | (high < shift)).mean())
    return (false_fail, miss_null, miss_effect, sequential_false(null, bound)), float((low > 0).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sims", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    limit = 0.05 + 2 * math.sqrt(0.05 * 0.95 / args.sims)
    started = time.perf_counter()
    print(f"{args.sims} simulated comparisons per row; seed {args.seed}; limit {limit:.4f} (5% + 2 SE)\n")
    print("| shape | n | false fail | miss (0) | miss (+0.5 SD) | seq. false | within limit | shows +0.5 SD |")
    print("|---|---:|---:|---:|---:|---:|---|---:|")
    worst = 0.0
    for shape in SHAPES:
        for n in args.sizes:
            figures, power = row(rng, shape, n, args.sims)
            worst = max(worst, *figures)
            ok = "yes" if max(figures) <= limit else "**no**"
            print(f"| {shape} | {n} | " + " | ".join(f"{f:.4f}" for f in figures) + f" | {ok} | {power:.3f} |")
    print(f"\nlargest figure {worst:.4f} (limit {limit:.4f}); {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
