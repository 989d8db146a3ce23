"""Loading a local model prints no transformers progress bars (SmolLM2's GGUF loader drew
about 30 lines per run inside the run's own bar), and the bars come back afterwards."""

from __future__ import annotations

import pytest

from dialeval.models.local_loading import _quiet_loading

pytest.importorskip("transformers")


def test_loading_bars_are_silent_during_a_load_and_back_after(capsys):
    from transformers import modeling_gguf_pytorch_utils as gguf_loader
    from transformers.utils import logging as hf_logging

    assert hf_logging.is_progress_bar_enabled()
    with _quiet_loading():
        for _ in gguf_loader.tqdm(range(3), desc="Converting and de-quantizing GGUF tensors..."):
            pass
        for _ in hf_logging.tqdm(range(3), desc="Loading weights"):
            pass
    assert capsys.readouterr().err == ""
    assert hf_logging.is_progress_bar_enabled()
    for _ in gguf_loader.tqdm(range(3), desc="Converting and de-quantizing GGUF tensors..."):
        pass
    assert "Converting" in capsys.readouterr().err
