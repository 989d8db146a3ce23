"""The price a model's calls are billed at when they go through its batch API."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.models.pricing import Price, batch_price

if TYPE_CHECKING:
    from dialeval.models.client_view import ClientView


def batch_price_for(client: ClientView) -> Price | None:
    """``client``'s batch price, following the order its live price follows: the model's
    own ``price:`` (at the provider's published discount), then ``price_as``, then the
    table. A dry run is priced as the model it stands for; ``source`` says where the
    rates come from, for the report. ``None`` when the live price is unknown too."""
    s = client.settings
    named = s.price_as or (client.name if client.is_dry_run else str(client.spec))
    if s.price:
        return batch_price(named, standard=Price.of(s.price))
    if client.backend == "openai-compatible" and not s.price_as:
        return None  # a server of one's own: no price, live or batch
    return batch_price(named)
