"""A bot spec read from a config or from Python: its kind found among the registered ones,
checked whole before any call, its URLs and key variable registered as secrets.

Why apart from :mod:`dialeval.bots.specs`: the kinds (:mod:`dialeval.bots.kinds`) register
on the specs' registry, and reading a spec needs every built-in kind registered, so this
module stands above both.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

import dialeval.bots.kinds  # noqa: F401  (registers the built-in kinds)
from dialeval.bots.specs import KINDS, BotSpec, BotSpecBase, kind_of
from dialeval.endpoint import EndpointError, redacted, split_base_url
from dialeval.errors import ConfigError
from dialeval.field_errors import describe_error
from dialeval.plugins import load_entry_points
from dialeval.secrets import register_key_env, register_url

BUILT_IN_KEYS = ("model", "url", "callable", "graph")


def parse(value: Any, where: str = "simulation option 'bot'") -> BotSpec:
    """A spec: ``"module:function"`` (a callable), ``"file.py:attr"`` / ``"langgraph.json:entry"``
    (a graph), or an object whose one kind key names its kind. Checked whole before any call."""
    if isinstance(value, str):
        value = {"graph": value} if value.endswith(".json") or ".json:" in value or ".py:" in value else {"callable": value}
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: a \"module:function\" string or an object (see docs/simulation.md)")
    keys = [k for k in KINDS if k in value]
    if not keys:  # a kind an installed package registers (the dialeval.plugins entry point) loads when named
        load_entry_points()
        keys = [k for k in KINDS if k in value]
    if len(keys) != 1:
        others = "".join(f", '{k}'" for k in KINDS if k not in BUILT_IN_KEYS)
        raise ConfigError(
            f"{where}: give exactly one of 'model' (+ base_url: an OpenAI-compatible endpoint), "
            f"'url' (an HTTP JSON endpoint), 'callable', 'graph'{others}; got keys {sorted(value)}"
        )
    model = KINDS[keys[0]].spec
    try:
        spec = model.model_validate(value)
    except ValidationError as err:
        raise ConfigError(f"{where} ({model.__name__}): {describe_error(err, model)}") from None
    register_secrets(spec, where)
    return spec  # type: ignore[return-value]


def register_secrets(spec: BotSpecBase, where: str) -> None:
    """The spec's URLs and key variable are scrubbed from everything written from now on; a URL
    with ``user:password@`` and an ``api_key_env`` are refused: both would be the Authorization
    header, and one would silently replace the other."""
    register_key_env(spec.key_env())
    for url in spec.urls():
        register_url(url)
        try:
            parts = split_base_url(url)
        except EndpointError as err:
            raise ConfigError(f"{where}: {err}") from None
        if parts.has_userinfo and spec.key_env():
            raise ConfigError(
                f"{where}: {redacted(url)} carries user:password (sent as HTTP basic auth in the Authorization header) "
                f"and api_key_env {spec.key_env()!r} would be the Authorization header too; give one of them"
            )


def describe(spec: BotSpec) -> str:
    """One line naming the bot (for the report): URLs redacted, never a key."""
    return kind_of(spec).describe(spec)
