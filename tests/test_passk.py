"""pass^k / pass@k intervals hold the chance within each scenario: a coin-flip bot's
figures get an interval around the true value, or n/a with the reason, never ``[x, x]``."""

from __future__ import annotations

import numpy as np
import pytest

from dialeval.metrics.passk import suite_pass_k
from dialeval.protocols.simulation.metrics import tables


def holds(ci: list[float] | None, truth: float) -> bool:
    return ci is not None and ci[0] <= truth <= ci[1] and ci[0] < ci[1]


def test_a_coin_flip_bot_gets_intervals_that_hold_the_true_pass_k():
    tasks = [(4, 2), (4, 2), (4, 3)]  # a bot that succeeds half the time, 3 scenarios, k = 4
    four, three = suite_pass_k(tasks, 4), suite_pass_k(tasks, 3)
    assert four["pass_hat_k"] == 0.0 and holds(four["pass_hat_k_ci"], 0.5**4)
    assert three["pass_at_k"] == 1.0 and holds(three["pass_at_k_ci"], 1 - 0.5**3)
    assert four["pass_at_k"] == 1.0 and holds(four["pass_at_k_ci"], 1 - 0.5**4)


def test_data_that_cannot_show_a_spread_gives_n_a_with_the_reason():
    failed = suite_pass_k([(1, 0), (1, 0)], 1)  # two scenarios, both failed
    assert failed["pass_hat_k"] == 0.0 and failed["pass_hat_k_ci"] is None and "same outcome" in failed["pass_hat_k_ci_reason"]
    alone = suite_pass_k([(4, 2)], 2)
    assert alone["pass_at_k_ci"] is None and "needs 2" in alone["pass_at_k_ci_reason"]
    text = tables({"k": 1, "suite": {"1": failed}, "per_scenario": {}})
    assert "n/a (every trial of every scenario had the same outcome" in text and "[0.00, 0.00]" not in text


@pytest.mark.timeout(60)
def test_the_intervals_cover_the_truth_in_simulated_suites():
    """200 suites of 5 scenarios x 4 trials of a p = 0.6 bot: the interval holds the true
    pass^4 and pass@4 (or says n/a) in at least 93% of them (benchmarks/passk_coverage.py
    measures more settings)."""
    rng = np.random.default_rng(7)
    held = {"pass_hat_k": 0, "pass_at_k": 0}
    truth = {"pass_hat_k": 0.6**4, "pass_at_k": 1 - 0.4**4}
    for _ in range(200):
        figures = suite_pass_k([(4, int(c)) for c in rng.binomial(4, 0.6, size=5)], 4)
        for name in held:
            ci = figures[f"{name}_ci"]
            held[name] += ci is None or ci[0] <= truth[name] <= ci[1]
    assert held["pass_hat_k"] >= 186 and held["pass_at_k"] >= 186, held
