"""The prompt store writes prompts in batches and leaves one plain file behind."""

from __future__ import annotations

import sqlite3
import zlib

from langchain_core.messages import HumanMessage

from dialeval.models import prompt_store
from dialeval.models.prompt_store import FLUSH_EVERY, PROMPTS, load_prompts, store_prompt

def _in_sqlite(run_dir) -> set[str]:
    if not (run_dir / PROMPTS).exists():
        return set()
    conn = sqlite3.connect(str(run_dir / PROMPTS))
    try:
        return {ref for (ref,) in conn.execute("SELECT ref FROM prompts")}
    finally:
        conn.close()


def test_prompts_reach_sqlite_in_batches_and_all_of_them_at_the_latest_on_close(tmp_path):
    refs = [store_prompt(tmp_path, [HumanMessage(f"prompt {i}")]) for i in range(FLUSH_EVERY + 3)]
    assert set(refs[:FLUSH_EVERY]) <= _in_sqlite(tmp_path) and refs[-1] not in _in_sqlite(tmp_path)
    assert set(load_prompts(tmp_path)) == set(refs)  # reading flushes what this process holds
    assert _in_sqlite(tmp_path) == set(refs)
    store_prompt(tmp_path, [HumanMessage("one more")])
    prompt_store._close_all()  # as at exit
    assert len(_in_sqlite(tmp_path)) == FLUSH_EVERY + 4
    conn = sqlite3.connect(str(tmp_path / PROMPTS))
    (blob,) = conn.execute("SELECT messages FROM prompts WHERE ref = ?", (refs[0],)).fetchone()
    conn.close()
    assert b"prompt 0" in zlib.decompress(blob)


def test_a_closed_store_is_one_file_that_a_read_only_look_leaves_alone(tmp_path):
    store_prompt(tmp_path, [HumanMessage("a prompt")])
    prompt_store.close(tmp_path)
    look = sqlite3.connect(f"file:{tmp_path / PROMPTS}?mode=ro", uri=True)  # as a re-run's store check does
    assert look.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    look.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [PROMPTS]  # no -wal, no -shm


def test_closing_beside_another_writer_leaves_it_its_wal(tmp_path):
    store_prompt(tmp_path, [HumanMessage("mine")])
    prompt_store.flush(tmp_path)
    other = sqlite3.connect(str(tmp_path / PROMPTS), isolation_level=None)  # another run reading it
    other.execute("BEGIN IMMEDIATE")  # in the middle of its own insert
    try:
        prompt_store.close(tmp_path)
    finally:
        other.execute("ROLLBACK")
    assert other.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    other.close()
    assert "mine" in str(load_prompts(tmp_path))
