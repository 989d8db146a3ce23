"""The errors users see, below every layer, so any module can raise them without
importing the layer that used to define them; ``dialeval.config.ConfigError`` imports
it from here and keeps working."""

from __future__ import annotations


class ConfigError(ValueError):
    """A config file or value is invalid; the message names file and field."""
