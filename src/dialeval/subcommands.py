"""What a command module needs of the CLI's sub-parsers: ``add_parser``. argparse's own
class for them is private (``_SubParsersAction``), so commands are typed by this protocol."""

from __future__ import annotations

import argparse
from typing import Any, Protocol


class Subcommands(Protocol):
    """The object ``ArgumentParser.add_subparsers()`` returns, as command modules use it."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser: ...
