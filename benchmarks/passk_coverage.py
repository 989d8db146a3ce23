"""Coverage of the 95% pass^k / pass@k intervals (``metrics/passk.py``) by simulation: a bot
whose trials on scenario s succeed with chance p_s, k trials per scenario, many suites;
how often the interval holds the true suite value (the mean over scenarios of p_s^k,
resp. 1 - (1 - p_s)^k), and how often the data gave no interval (``n/a``).

    PYTHONPATH=src python benchmarks/passk_coverage.py [suites per setting, default 400]
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from dialeval.metrics.passk import suite_pass_k

# (scenarios, k = trials per scenario, p: one chance for every scenario, or "beta(a,b)" drawn per scenario)
SETTINGS: list[tuple[int, int, Any]] = [(3, 4, 0.5), (5, 4, 0.5), (10, 4, 0.7), (10, 3, 0.9), (20, 8, 0.3), (10, 4, (2.0, 2.0)),
                                        (30, 4, (5.0, 1.0))]


def coverage(scenarios: int, k: int, p: Any, suites: int, rng: np.random.Generator) -> dict[str, dict[str, float]]:
    """Per figure: share of suites whose interval holds the truth, share n/a, and holds-or-n/a."""
    counts = {name: {"held": 0, "na": 0} for name in ("pass_hat_k", "pass_at_k")}
    for _ in range(suites):
        chances = rng.beta(*p, size=scenarios) if isinstance(p, tuple) else np.full(scenarios, float(p))
        truth = {"pass_hat_k": float(np.mean(chances**k)), "pass_at_k": float(np.mean(1 - (1 - chances) ** k))}
        figures = suite_pass_k([(k, int(c)) for c in rng.binomial(k, chances)], k)
        for name, tally in counts.items():
            ci = figures[f"{name}_ci"]
            if ci is None:
                tally["na"] += 1
            elif ci[0] - 1e-12 <= truth[name] <= ci[1] + 1e-12:
                tally["held"] += 1
    return {name: {"covered": t["held"] / max(suites - t["na"], 1), "na": t["na"] / suites, "covered_or_na": (t["held"] + t["na"]) / suites}
            for name, t in counts.items()}


def main() -> None:
    suites = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    rng = np.random.default_rng(1)
    print(f"{suites} simulated suites per setting\n")
    print("| scenarios | k | p | pass^k covered | n/a | pass@k covered | n/a |\n|---:|---:|---|---:|---:|---:|---:|")
    for scenarios, k, p in SETTINGS:
        out = coverage(scenarios, k, p, suites, rng)
        label = f"beta{p}" if isinstance(p, tuple) else str(p)
        print(f"| {scenarios} | {k} | {label} | {out['pass_hat_k']['covered']:.1%} | {out['pass_hat_k']['na']:.1%} "
              f"| {out['pass_at_k']['covered']:.1%} | {out['pass_at_k']['na']:.1%} |")


if __name__ == "__main__":
    main()
