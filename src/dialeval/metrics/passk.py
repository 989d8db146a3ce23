"""pass^k and pass@k over repeated trials of each task, with two-level bootstrap intervals.

Why both: pass@k (at least one of k trials succeeds) says what a system can do, pass^k
(all k succeed) what a user can rely on. Per task with ``n`` trials of which ``c``
succeeded, the unbiased estimates are ``C(c, k) / C(n, k)`` and
``1 - C(n - c, k) / C(n, k)``; a suite's figure is their mean over tasks with at least
``k`` trials. Its interval resamples the tasks and then each chosen task's ``n`` trials,
less the resamples' bias, so the chance within a task enters it (a bootstrap over tasks alone gave ``[0, 0]`` for a
coin-flip bot's pass^4); where the data cannot give an interval of any width it is
``None`` with the reason.
"""

from __future__ import annotations

from math import comb
from typing import Any, Callable, Sequence

from dialeval.metrics.intervals import percentile_interval, trial_draws


def pass_hat_k(n: int, c: int, k: int) -> float | None:
    """The chance that k trials drawn without replacement from n all succeed (None when n < k)."""
    if not 0 <= c <= n or k < 1:
        raise ValueError(f"need 0 <= c <= n and k >= 1, got n={n}, c={c}, k={k}")
    return comb(c, k) / comb(n, k) if n >= k else None


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """The chance that at least one of k trials drawn from n succeeds (None when n < k)."""
    if not 0 <= c <= n or k < 1:
        raise ValueError(f"need 0 <= c <= n and k >= 1, got n={n}, c={c}, k={k}")
    return 1 - comb(n - c, k) / comb(n, k) if n >= k else None


def trial_bootstrap(tasks: Sequence[tuple[int, int]], k: int,
                    estimate: Callable[[int, int, int], float | None]) -> tuple[list[float] | None, str | None]:
    """The 95% percentile interval of the suite mean of ``estimate`` over (trials, successes)
    per task (every task with ``n >= k``): each resample draws the tasks with replacement,
    then each drawn task's ``n`` trials with replacement (a binomial draw of its successes),
    shifted by the resamples' bias and widened to hold the figure. ``(None, reason)`` where no interval of any width follows from the data."""
    import numpy as np

    if len(tasks) < 2:
        return None, f"{len(tasks)} scenario(s) with at least {k} valid trials: an interval needs 2"
    if all(c in (0, n) for n, c in tasks) and len({estimate(n, c, k) for n, c in tasks}) == 1:
        return None, "every trial of every scenario had the same outcome: the trials cannot show their spread"
    n = np.array([t[0] for t in tasks])
    c = np.array([t[1] for t in tasks])
    table = np.zeros((len(tasks), int(n.max()) + 1))  # table[task, successes] = the task's estimate
    for i, trials in enumerate(n):
        table[i, : trials + 1] = [estimate(int(trials), s, k) for s in range(int(trials) + 1)]
    drawn, successes = trial_draws(n, c)  # the one resampler's seed, count and two-level draws
    means = table[drawn, successes].mean(axis=1)
    point = float(table[np.arange(len(tasks)), c].mean())
    shift = float(means.mean()) - point  # the plug-in resamples' bias (p^k from c/n is not C(c,k)/C(n,k)), taken off
    low, high = (float(np.clip(v - shift, 0.0, 1.0)) for v in percentile_interval(means) or (point, point))
    low, high = min(low, point), max(high, point)
    if low == high:
        return None, f"every resample gave {low:.3f}: the data cannot bound it"
    return [low, high], None


def suite_pass_k(tasks: Sequence[tuple[int, int]], k: int) -> dict[str, Any]:
    """pass^k and pass@k of a suite from (trials, successes) per task, with 95% intervals
    (``None`` with ``*_ci_reason`` where the data cannot give one); tasks with fewer than k
    trials are counted apart (``short``)."""
    usable = [(n, c) for n, c in tasks if n >= k]
    out: dict[str, Any] = {"k": k, "tasks": len(usable), "short": len(tasks) - len(usable)}
    for name, estimate in (("pass_hat_k", pass_hat_k), ("pass_at_k", pass_at_k)):
        values = [v for v in (estimate(n, c, k) for n, c in usable) if v is not None]
        ci, reason = trial_bootstrap(usable, k, estimate) if usable else (None, f"no scenario with at least {k} valid trials")
        out |= {name: sum(values) / len(values) if values else None, f"{name}_ci": ci, f"{name}_ci_reason": reason}
    return out
