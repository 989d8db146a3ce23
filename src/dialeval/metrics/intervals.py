"""The one resampler: every bootstrap interval and seeded draw in dialeval comes from here (pure).

Why one: a figure's interval must not depend on which report drew it. One seed rule
(:data:`SEED`, numpy's default generator: :func:`generator`), one count
(:data:`RESAMPLES`), one interval method (the 95% percentile interval of the resamples
where the figure is defined: :func:`percentile_interval`), and one stream of resamples
(:func:`unit_draws`: rows of unit indices drawn with replacement, the same rows whatever
the batch size, and the same rows as ``scipy.stats.bootstrap`` draws with this seed).
Units are resampled whole (a KGDS sample, an MMDU dialogue, an MMRC question, a labelled
unit of the trust card): :func:`mean_with_interval` for a mean of per-unit values,
:func:`statistic_with_interval` for a figure computed from the units in another way,
:func:`resampled` for a statistic computed on a whole batch of resamples at once;
:func:`unit_weights` gives the same resamples as counts per unit (agreement statistics);
:func:`trial_draws` resamples units and then each unit's repeated trials (pass^k), and
:func:`unit_order` is the seeded order of units a run judges in when it may stop early.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

if TYPE_CHECKING:
    import numpy as np

SEED = 0  # the same runs give the same report: every draw starts from this seed
RESAMPLES = 2000  # bootstrap resamples of every interval (pass^k's two-level bootstrap too)
LEVEL = 0.95
BATCH_CELLS = 2_000_000  # resample x unit cells held at once (float64: 16 MB), so memory stays flat


def generator(seed: int = SEED) -> np.random.Generator:
    """The one source of random draws (bootstraps, permutations, seeded orders of units)."""
    import numpy as np

    return np.random.default_rng(seed)


def step_for(cells_per_resample: int) -> int:
    """Resamples per batch so that a batch holds at most :data:`BATCH_CELLS` cells."""
    return max(1, BATCH_CELLS // max(1, cells_per_resample))


def unit_draws(n: int, resamples: int = RESAMPLES, seed: int = SEED, step: int | None = None) -> Iterator[np.ndarray]:
    """``resamples`` rows of ``n`` unit indices drawn with replacement, ``step`` rows at a
    time (default: a batch of at most :data:`BATCH_CELLS` indices); numpy's generator draws
    them in one order, so the rows do not depend on ``step``."""
    rng = generator(seed)
    step = step or step_for(n)
    for start in range(0, resamples, step):
        yield rng.integers(0, n, size=(min(step, resamples - start), n))


def unit_weights(n: int, resamples: int = RESAMPLES, seed: int = SEED, step: int | None = None) -> Iterator[np.ndarray]:
    """The resamples of :func:`unit_draws` as count vectors (rows: resamples, columns: how
    often each unit was drawn), for statistics computed from weights rather than picks."""
    import numpy as np

    for picks in unit_draws(n, resamples, seed, step):
        rows = len(picks)
        flat = (picks + n * np.arange(rows)[:, None]).ravel()
        yield np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(float)


def trial_draws(trials: np.ndarray, successes: np.ndarray, resamples: int = RESAMPLES,
                seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """Two-level resamples of units that each hold repeated trials: rows of unit indices
    drawn with replacement, then for every drawn unit its trials drawn again (a binomial
    draw of its successes at its observed rate). ``(picks, successes per pick)``; both
    levels come from one generator, so the second never replays the first's stream."""
    rng = generator(seed)
    picks = rng.integers(0, len(trials), size=(resamples, len(trials)))
    return picks, rng.binomial(trials[picks], successes[picks] / trials[picks])


def unit_order(n: int, seed: int = SEED) -> np.ndarray:
    """The seeded random order of ``n`` units in which a run judges them when it may stop
    once decided, and in which the gate replays a finished pair: one order for both."""
    return generator(seed).permutation(n)


def resampled(n: int, statistic: Callable[[np.ndarray], Any], *, cells_per_unit: int = 1,
              resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """``statistic(picks)`` for every resample, vectorised: ``picks`` is a batch of rows of
    unit indices and ``statistic`` returns one value per row (NaN where undefined);
    ``cells_per_unit`` sizes the batches to what the statistic holds per drawn unit."""
    import numpy as np

    batches = unit_draws(n, resamples, seed, step_for(n * cells_per_unit))
    return np.concatenate([np.asarray(statistic(picks), dtype=float).reshape(-1) for picks in batches])


def percentile_interval(draws: np.ndarray, level: float = LEVEL) -> tuple[float, float] | None:
    """The percentile interval of the resamples where the figure is defined (finite ones:
    a resample where, say, one side is constant has no value and is left out); ``None`` when
    no resample has one."""
    import numpy as np

    kept = np.asarray(draws, dtype=float)
    kept = np.sort(kept[np.isfinite(kept)])
    if not len(kept):
        return None
    tail = (1 - level) / 2
    low, high = _linear_quantiles(kept, np.array([tail, 1 - tail]))
    return float(low), float(high)


def _linear_quantiles(ordered: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Quantiles ``p`` of sorted values by linear interpolation (Hyndman and Fan's method 7),
    in the arithmetic of ``scipy.stats.quantile`` (which ``scipy.stats.bootstrap`` uses), so an
    interval here is the one scipy gives to the last bit, on any scipy version."""
    import numpy as np

    n = len(ordered)
    position = p * n + (1 - p)
    upper = position // 1
    weight = np.where(upper - 1 < 0, 0.0, position % 1)
    below = np.clip(upper - 1, 0, n - 1).astype(np.int64)
    above = np.clip(upper, 0, n - 1).astype(np.int64)
    return (1 - weight) * ordered[below] + weight * ordered[above]


def mean_with_interval(values: Sequence[float]) -> tuple[float | None, tuple[float, float] | None]:
    """``(mean, (low, high))`` by the percentile bootstrap; no interval under two values or
    when every value is the same (resampling identical units shows no spread, and a
    zero-width interval would claim a certainty the units cannot give)."""
    if not values:
        return None, None
    import numpy as np

    data = np.asarray(values, dtype=float)
    mean = float(data.mean())
    if len(data) < 2 or np.all(data == data[0]):
        return mean, None
    return mean, percentile_interval(resampled(len(data), lambda picks: data[picks].mean(axis=1)))


def interval(values: Sequence[float]) -> list[float] | None:
    """The 95% interval of the mean of ``values`` as ``[low, high]`` (JSON), ``None`` under two values."""
    ci = mean_with_interval(values)[1]
    return None if ci is None else [ci[0], ci[1]]


def statistic_with_interval(units: int, statistic: Callable[[Any], float | None], *,
                            per_batch: Callable[[np.ndarray], np.ndarray] | None = None,
                            cells_per_unit: int = 1) -> tuple[float | None, list[float] | None]:
    """``statistic(indices)`` over units ``0..units-1`` (a numpy array of unit indices), and its
    percentile-bootstrap 95% interval drawn by resampling the units (the same draws as
    :func:`mean_with_interval`); no interval under two units or when no resample has a value.
    ``per_batch(picks)``, where given, computes the statistic of every row of a batch at once
    (NaN where undefined): the same figure, without a Python call per resample; ``cells_per_unit``
    sizes its batches (:func:`resampled`)."""
    import numpy as np

    if units < 1:
        return None, None
    value = statistic(np.arange(units))
    if value is None or units < 2:
        return value, None

    def each(picks: np.ndarray) -> list[float]:
        drawn = (statistic(row) for row in picks)
        return [float("nan") if d is None else float(d) for d in drawn]

    ci = percentile_interval(resampled(units, per_batch or each, cells_per_unit=cells_per_unit))
    if ci is None:
        return value, None
    low, high = ci
    if low == high:  # every resample gave one value: no spread to show, and never a zero-width interval
        return value, None if low == value else [min(low, value), max(high, value)]
    return value, [low, high]
