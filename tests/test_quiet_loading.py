"""Loading a local model prints no transformers progress bars (they drew inside the run's
own bar), and the bars come back afterwards; nothing of transformers is replaced."""

from __future__ import annotations

import pytest

from dialeval.models.local_loading import _quiet_loading

pytest.importorskip("transformers")


def test_loading_bars_are_silent_during_a_load_and_back_after(capsys):
    from transformers.utils import logging as hf_logging

    assert hf_logging.is_progress_bar_enabled()
    with _quiet_loading():
        assert not hf_logging.is_progress_bar_enabled()
        for _ in hf_logging.tqdm(range(3), desc="Loading weights"):
            pass
    assert capsys.readouterr().err == ""
    assert hf_logging.is_progress_bar_enabled()
    for _ in hf_logging.tqdm(range(3), desc="Loading weights"):
        pass
    assert "Loading weights" in capsys.readouterr().err

