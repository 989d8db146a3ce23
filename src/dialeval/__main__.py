"""``python -m dialeval`` is the ``dialeval`` command (useful where the venv's scripts are not on PATH)."""

import sys

from dialeval.cli import main

sys.exit(main())
