"""Stopping when decided: false-decision rate and share of units used, by simulation.

Simulates thousands of paired comparisons with known effects (numpy, vectorised: every
comparison's whole sequence at once) and walks each confidence sequence of
:mod:`dialeval.metrics.sequential` unit by unit, deciding as ``stop_when_decided`` and the
gate do (no decision before ``MIN_UNITS``). Prints, per sequence and full-set size N:

[1] no effect: share of comparisons that decided "A and B differ" (false; nominal 5%)
[2] a drop exactly at the margin (gate): share deciding "regression" or "no regression"
    (both false; nominal 5%)
[3] standardized effect 0.5 (mean difference / SD of differences): share decided, and
    the mean share of the N units judged before stopping (target: at most 40%)

Differences come from three shapes: "normal" (differences N(effect, 1), clipped to the
1-5 scale's range), "judge" (two systems' 1-5 scores, integer, rounded from a unit's
latent quality plus each system's noise, so ties and a discrete scale are in) and
"skewed" (rare drops of 3 against small gains: a regression few units show). "no prior"
is the asymptotic sequence without the bound's variance prior, shown for the skewed rows.
The peeking fixed-sample t interval (an ordinary 95% CI re-checked after every unit) is
shown beside, as what the sequences are there to fix.

Usage: python benchmarks/sequential_stopping.py [--sims 4000] [--seed 0] [--sizes 100 200 500 1000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dialeval.metrics.sequential import MIN_UNITS, confidence_sequence, tuned_for

BOUND = 4.0  # a 1-5 scale: a paired difference lies in [-4, 4]


def normal_diffs(rng: np.random.Generator, sims: int, n: int, mean: float) -> np.ndarray:
    """Differences N(mean, 1) clipped to the scale's range (mean is then the standardized effect)."""
    return np.clip(rng.normal(mean, 1.0, (sims, n)), -BOUND, BOUND)


def judge_diffs(rng: np.random.Generator, sims: int, n: int, shift: float) -> tuple[np.ndarray, float, float]:
    """B - A of integer 1-5 scores; ``shift`` moves B's latent score. Returns the differences,
    their true mean and SD (estimated on a large draw with the same seed stream)."""
    def draw(size: tuple[int, int]) -> np.ndarray:
        quality = rng.normal(3.2, 0.9, size)
        a = np.clip(np.rint(quality + rng.normal(0, 0.6, size)), 1, 5)
        b = np.clip(np.rint(quality + shift + rng.normal(0, 0.6, size)), 1, 5)
        return b - a

    big = draw((1, 400_000))
    return draw((sims, n)), float(big.mean()), float(big.std())


def judge_shift_for(rng: np.random.Generator, target: float) -> float:
    """The latent shift whose integer differences have mean/SD = ``target`` (bisection)."""
    low, high = 0.0, 3.0
    for _ in range(30):
        mid = (low + high) / 2
        _, mean, sd = judge_diffs(rng, 1, 1, mid)
        low, high = (mid, high) if mean / sd < target else (low, mid)
    return (low + high) / 2


def skewed_diffs(rng: np.random.Generator, sims: int, n: int, shift: float) -> np.ndarray:
    """Rare large drops (-3, one unit in ten) against small gains, mean ``shift`` SDs: a
    regression that shows in few units, where a variance estimated from the first units is too small."""
    small = 3 * 0.1 / 0.9
    raw = np.where(rng.random((sims, n)) < 0.1, -3.0, small)
    return raw + shift * 1.0  # the SD of raw is 1.0 (0.1 * 9 + 0.9 * small**2 = 1.0)


def bounds(d: np.ndarray, method: str) -> tuple[np.ndarray, np.ndarray]:
    if method == "peeking t":
        from scipy import stats

        t = np.arange(1, d.shape[1] + 1)
        mean = np.cumsum(d, axis=1) / t
        var = np.maximum(np.cumsum(d * d, axis=1) / t - mean**2, 0) * t / np.maximum(t - 1, 1)
        half = stats.t.ppf(0.975, np.maximum(t - 1, 1)) * np.sqrt(var / t)
        return mean - half, mean + half
    if method == "no prior":
        return confidence_sequence(d, method="asymptotic", tuned_for=tuned_for(d.shape[1]))
    return confidence_sequence(d, method=method, bound=BOUND, tuned_for=tuned_for(d.shape[1]))  # type: ignore[arg-type]


def first_true(mask: np.ndarray) -> np.ndarray:
    """Per row, the 1-based index of the first True at or after MIN_UNITS; 0 when none."""
    mask = mask.copy()
    mask[:, : MIN_UNITS - 1] = False
    hit = mask.any(axis=1)
    return np.where(hit, mask.argmax(axis=1) + 1, 0)


def differ_rate(d: np.ndarray, method: str) -> float:
    low, high = bounds(d, method)
    return float((first_true((low > 0) | (high < 0)) > 0).mean())


def margin_rate(d: np.ndarray, method: str, margin: float) -> float:
    low, high = bounds(d, method)
    return float((first_true((high < -margin) | (low > -margin)) > 0).mean())


def effect_use(d: np.ndarray, method: str) -> tuple[float, float, float]:
    """Share decided (correctly: B higher), mean share of units used, and wrong-sign decisions."""
    low, high = bounds(d, method)
    stop = first_true((low > 0) | (high < 0))
    n = d.shape[1]
    rows = np.arange(len(d))
    right = (stop > 0) & (low[rows, np.maximum(stop - 1, 0)] > 0)
    used = np.where(stop > 0, stop, n) / n
    return float(right.mean()), float(used.mean()), float(((stop > 0) & ~right).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 500, 1000])
    parser.add_argument("--margin", type=float, default=0.2, help="the gate's margin, in SDs of the differences")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    methods = ["asymptotic", "no prior", "eb", "peeking t"]
    shift = judge_shift_for(np.random.default_rng(args.seed + 1), 0.5)
    print(f"{args.sims} simulated comparisons per cell; seed {args.seed}; decisions from unit {MIN_UNITS} on; "
          f"margin {args.margin} SD; judge scores: latent shift {shift:.3f} gives effect 0.5\n")
    print(f"{'shape':7} {'N':>5} {'sequence':11} {'[1] no effect':>14} {'[2] at margin':>14} "
          f"{'[3] decided':>12} {'units used':>11} {'wrong sign':>11}")
    for shape in ("normal", "judge", "skewed"):
        for n in args.sizes:
            if shape == "normal":
                null, at_margin, effect = (normal_diffs(rng, args.sims, n, m) for m in (0.0, -args.margin, 0.5))
                margin = args.margin
            elif shape == "skewed":
                null, at_margin, effect = (skewed_diffs(rng, args.sims, n, m) for m in (0.0, -args.margin, 0.5))
                margin = args.margin
            else:
                null, _, _ = judge_diffs(rng, args.sims, n, 0.0)
                effect, _, _ = judge_diffs(rng, args.sims, n, shift)
                _, _, sd0 = judge_diffs(rng, 1, 1, 0.0)
                margin = args.margin * sd0
                at_margin = null - margin  # the null's differences moved down by exactly the margin
            for method in methods:
                decided, used, wrong = effect_use(effect, method)
                print(f"{shape:7} {n:>5} {method:11} {differ_rate(null, method):>14.3f} "
                      f"{margin_rate(at_margin, method, margin):>14.3f} {decided:>12.3f} {used:>11.3f} {wrong:>11.4f}")
    print(f"\n{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
