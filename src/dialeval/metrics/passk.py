"""pass^k and pass@k over repeated trials of each task, with bootstrap intervals over tasks.

Why both: pass@k (at least one of k trials succeeds) says what a system can do, pass^k
(all k succeed) what a user can rely on. Per task with ``n`` trials of which ``c``
succeeded, the unbiased estimates are ``C(c, k) / C(n, k)`` and
``1 - C(n - c, k) / C(n, k)``; a suite's figure is their mean over tasks with at least
``k`` trials, its interval the percentile bootstrap over those tasks.
"""

from __future__ import annotations

from math import comb
from typing import Any, Sequence

from dialeval.metrics.intervals import mean_with_interval


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


def suite_pass_k(tasks: Sequence[tuple[int, int]], k: int) -> dict[str, Any]:
    """pass^k and pass@k of a suite from (trials, successes) per task, with 95% intervals;
    tasks with fewer than k trials are counted apart (``short``)."""
    usable = [(n, c) for n, c in tasks if n >= k]
    hat = [pass_hat_k(n, c, k) for n, c in usable]
    at = [pass_at_k(n, c, k) for n, c in usable]
    hat_mean, hat_ci = mean_with_interval([v for v in hat if v is not None])
    at_mean, at_ci = mean_with_interval([v for v in at if v is not None])
    return {
        "k": k, "tasks": len(usable), "short": len(tasks) - len(usable),
        "pass_hat_k": hat_mean, "pass_hat_k_ci": list(hat_ci) if hat_ci else None,
        "pass_at_k": at_mean, "pass_at_k_ci": list(at_ci) if at_ci else None,
    }
