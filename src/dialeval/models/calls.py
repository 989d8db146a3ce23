"""One model call in the public steps a caller outside the client uses, live or batched:
:func:`estimate`, :func:`submit`, :func:`collect` (and :func:`key_of`, the call's identity).

Why: the runner's batch rounds (:mod:`dialeval.run.batch_rounds`) send the calls that
:meth:`~dialeval.models.client.ModelClient.generate` would have sent, at another time and
price. A batch line must ask exactly what the live call asks (:func:`submit` is the body the
live call POSTs, ``benchmarks/request_bodies.py`` digests it) and its answer must become the
``Generation`` the live call would have built (:func:`collect`), so that the response cache
and the run's records read the same either way; a dry run answers at once with a real
call's tokens and cost (:func:`estimate`). Nothing here reaches into a backend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dialeval.models.batch.lines import BatchLine
    from dialeval.models.batch_queue import QueuedCall
    from dialeval.models.client import ModelClient
    from dialeval.models.generation import Generation


def key_of(client: ModelClient, call: QueuedCall) -> str:
    """The call's identity: its response-cache key (computed when the cache is off), the
    same for the live call and its batch line."""
    if call.cache_key:
        return call.cache_key
    from dialeval.models.cache import cache_key

    return cache_key(client.cache_parts(call.messages, call.schema, call.json_schema))


def estimate(client: ModelClient, call: QueuedCall, *, batched: bool = False) -> Generation:
    """A dry-run model's answer: the placeholder, with a real call's tokens and cost
    (``batched``: at the batch rate)."""
    return client.estimate(call.messages, call.placeholder, batched=batched)


def submit(client: ModelClient, call: QueuedCall, key: str | None = None) -> BatchLine:
    """The call as one batch line: its key (:func:`key_of` unless given) and the JSON body the
    live call would POST (:class:`~dialeval.models.batch.BatchUnsupported` for a backend
    without a batch API)."""
    from dialeval.models.batch.bodies import request_body
    from dialeval.models.batch.lines import BatchLine

    return BatchLine(key or key_of(client, call), request_body(client, call.messages, call.schema, call.json_schema))


def collect(client: ModelClient, call: QueuedCall, response: dict[str, Any], *, batched: bool = True) -> Generation:
    """The ``Generation`` of a provider's answer body to the call, built as the live call builds
    its own (``batched``: priced at the batch rate)."""
    from dialeval.models.batch.bodies import response_message

    message = response_message(client, response, call.schema)
    price = client.batch_price if batched else None
    return client.answer_of(message, call.messages, call.cache_key, call.cache_path, price=price)
