"""A verdict's probability from the answer's token log-probabilities (where the backend gives them).

The answer is JSON (``{"rationale": ..., "verdict": 4}``); the verdict's probability is the
product of the probabilities of the tokens that spell its value, the way a cascade's
first stage is trusted or not (Trust or Escalate's predictive probability).
"""

from __future__ import annotations

import math
import re

SCORE_FIELDS = ("verdict", "score", "rating")  # where a verdict is read as one number (ensembles, cascades)

_VALUE = re.compile(r'"(?:' + "|".join(SCORE_FIELDS) + r')"\s*:\s*("(?:[^"\\]|\\.)*"|[-+0-9.eE]+|true|false)')


def verdict_probability(tokens: list[tuple[str, float]] | None) -> float | None:
    """The probability of the last verdict value in the answer ``tokens`` spell, ``None``
    without tokens or without a verdict field among them."""
    if not tokens:
        return None
    text = "".join(t for t, _ in tokens)
    found = list(_VALUE.finditer(text))
    if not found:
        return None
    start, end = found[-1].span(1)
    total, at = 0.0, 0
    for token, logprob in tokens:
        if at < end and at + len(token) > start and token.strip(' "'):
            total += logprob
        at += len(token)
    return math.exp(total)
