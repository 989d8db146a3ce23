"""The old home of :mod:`dialeval.endpoint` (a ``base_url`` taken apart and redacted):
the module is pure and sits below the config that checks URLs, so it moved down a layer;
this name keeps working for code that imports it from here."""

from dialeval.endpoint import (
    MASK,
    URL_FIELDS,
    Endpoint,
    EndpointError,
    checked_url,
    redact_urls,
    redacted,
    secrets_of,
    split_base_url,
)

__all__ = ["MASK", "URL_FIELDS", "Endpoint", "EndpointError", "checked_url", "redact_urls", "redacted", "secrets_of", "split_base_url"]
