"""Provider batch APIs: the same requests at the batch price, answered within a day.

``lines`` holds the provider-neutral records, ``providers`` the :class:`BatchProvider`
shape and :func:`batch_provider`, ``openai_batches``/``anthropic_batches`` the two APIs,
and ``bodies`` the live call's exact request body and the message made of its answer.
"""

from dialeval.models.batch.lines import BatchLine, BatchStatus, LineResult
from dialeval.models.batch.providers import BatchProvider, BatchUnsupported, batch_provider, split_lines

__all__ = ["BatchLine", "BatchProvider", "BatchStatus", "BatchUnsupported", "LineResult", "batch_provider", "split_lines"]
