"""NoteStore against a real Chroma server (`chroma run` on 127.0.0.1) through HttpClient."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dialeval.memory import MemorySettings, open_note_store, store_location
from dialeval.memory.client import forget_stores
from tests.test_memory_notes import HashEmbedding


def _chroma_cli() -> str | None:
    local = Path(sys.executable).with_name("chroma")
    return str(local) if local.exists() else shutil.which("chroma")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def chroma_server(tmp_path):
    cli = _chroma_cli()
    if cli is None:
        pytest.skip("the chroma CLI is not installed")
    port = _free_port()
    log = (tmp_path / "chroma.log").open("w")
    proc = subprocess.Popen(
        [cli, "run", "--path", str(tmp_path / "server"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 180  # generous: a loaded machine starts servers slowly
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"chroma run did not start: {(tmp_path / 'chroma.log').read_text()[-500:]}")
                time.sleep(0.2)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.mark.slow
def test_notes_through_a_chroma_server(chroma_server):
    settings = MemorySettings(host="127.0.0.1", port=chroma_server, collection="http-notes")
    store = open_note_store(settings, embedding_function=HashEmbedding())
    try:
        store.update("conv-1", {"facts": {"race_goal": "under 60 minutes"}}, turn=4)
        store.update("conv-1", {"facts": {"race_goal": "finish without walking"}}, turn=7)
        store.update("conv-2", {"facts": {"race_goal": "a marathon"}}, turn=1)

        [entry] = store.entries("conv-1")
        assert (entry.value, entry.turn) == ("finish without walking", 7)
        assert store.note("conv-2") == {"facts": {"race_goal": "a marathon"}}
        assert store_location(settings, None) == f"http://127.0.0.1:{chroma_server}"
    finally:
        forget_stores()
