"""MEKI (Section 3.2, Eqs. 1-3) and the diverse-setup selection of Section 3.3.

Both are pure vector arithmetic over embeddings the caller computes, so any embedding
function fits: CLIP (image vs dialogue text), or a text model over image statements vs
dialogue statements (the paper's Implementation 3). MEKI follows the paper's formula:
the norm of the projection, i.e. ``|<I_perp, S>| / ||S||``; the authors' released code
keeps the sign of ``<I_perp, S>`` instead (``signed=True``).
"""

from __future__ import annotations

from itertools import combinations
from typing import Mapping, Sequence

import numpy as np

LAMBDA = 0.3
Vector = Sequence[float] | np.ndarray  # an embedding, as a list or an array


def exclusive(a: Vector, b: Vector) -> np.ndarray:
    """Eq. 1: the part of ``a`` orthogonal to ``b``: a - <a,b>/<b,b> b."""
    va, vb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return va - (va @ vb) / (vb @ vb) * vb


def eki(a: Vector, b: Vector, s: Vector, *, signed: bool = False) -> float:
    """Eq. 2: the length of the projection of a's exclusive part onto the pseudo-summary s."""
    vs = np.asarray(s, dtype=float)
    value = float(exclusive(a, b) @ vs / np.linalg.norm(vs))
    return value if signed else abs(value)


def meki(image: Vector, text: Vector, summary: Vector, lam: float = LAMBDA, *, signed: bool = False) -> dict[str, float]:
    """Eq. 3: lam * EKI(I|T;S) + (1 - lam) * EKI(T|I;S), with both terms."""
    eki_image = eki(image, text, summary, signed=signed)
    eki_text = eki(text, image, summary, signed=signed)
    return {"eki_image": eki_image, "eki_text": eki_text, "meki": lam * eki_image + (1 - lam) * eki_text}


def unit(vector: Sequence[float]) -> np.ndarray:
    """Unit-normalised copy (the paper normalises every embedding)."""
    v = np.asarray(vector, dtype=float)
    return v / np.linalg.norm(v)


def total_distance(vectors: Sequence[np.ndarray]) -> float:
    """D(c): the sum of Euclidean distances over all pairs of the combination's vectors."""
    return float(sum(np.linalg.norm(a - b) for a, b in combinations(vectors, 2)))


def select_diverse(embeddings: Mapping[str, Sequence[Sequence[float]]], k: int) -> tuple[tuple[str, ...], float, int]:
    """The k setups whose summaries lie furthest apart, exhaustively over all combinations.

    ``embeddings[setup]`` holds one summary embedding per dialogue (same dialogue order
    for every setup); D(c) is summed over the dialogues. Returns (setups, D, combinations
    tried); ties go to the first combination in sorted setup order.
    """
    names = sorted(embeddings)
    if not 1 < k <= len(names):
        raise ValueError(f"k must be between 2 and the number of setups ({len(names)}), got {k}")
    arrays = {name: np.asarray(embeddings[name], dtype=float) for name in names}
    lengths = {len(a) for a in arrays.values()}
    if len(lengths) != 1:
        raise ValueError("every setup needs one embedding per dialogue, for the same dialogues")
    # pairwise setup distances summed over dialogues, computed once
    pair = {
        (a, b): float(np.linalg.norm(arrays[a] - arrays[b], axis=-1).sum()) for a, b in combinations(names, 2)
    }
    best: tuple[str, ...] = ()
    best_d = -1.0
    tried = 0
    for combo in combinations(names, k):
        tried += 1
        d = sum(pair[p] for p in combinations(combo, 2))
        if d > best_d:
            best, best_d = combo, d
    return best, best_d, tried
