"""dialeval's release, in one place: the package, the CLI, run provenance and packaging read it here."""

__version__ = "0.1.0"
