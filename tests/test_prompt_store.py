"""The prompt store keeps the hot path to one append, and loses no prompt when its process is killed."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import zlib

from langchain_core.messages import HumanMessage

from dialeval.models import prompt_store
from dialeval.models.prompt_store import FLUSH_EVERY, PROMPTS, load_prompts, store_prompt

# a child process: stores N prompts, says so, then waits to be killed
CHILD = """
import sys, time
from langchain_core.messages import HumanMessage
from dialeval.models.prompt_store import store_prompt
refs = [store_prompt(sys.argv[1], [HumanMessage(f"grade answer {i}")]) for i in range(int(sys.argv[2]))]
print(" ".join(refs), flush=True)
time.sleep(600)
"""


def _in_sqlite(run_dir) -> set[str]:
    if not (run_dir / PROMPTS).exists():
        return set()
    conn = sqlite3.connect(str(run_dir / PROMPTS))
    try:
        return {ref for (ref,) in conn.execute("SELECT ref FROM prompts")}
    finally:
        conn.close()


def test_prompts_of_a_killed_process_are_kept_and_moved_into_the_store_by_the_next(tmp_path):
    run_dir = tmp_path / "run"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(run_dir), "5"], stdout=subprocess.PIPE, text=True)
    try:
        refs = child.stdout.readline().split()
    finally:
        child.send_signal(signal.SIGKILL)  # no atexit, no flush
        child.wait(timeout=30)
    assert len(refs) == 5
    assert _in_sqlite(run_dir) == set()  # still only in the dead process's journal
    assert set(load_prompts(run_dir)) == set(refs)  # the viewer sees them already
    assert load_prompts(run_dir)[refs[3]] == [{"role": "human", "content": "grade answer 3"}]

    nxt = store_prompt(run_dir, [HumanMessage("a prompt of the next run")])  # the next process journals it
    prompt_store.close(run_dir)  # as at the end of its run: its flush opens the store
    assert _in_sqlite(run_dir) == {*refs, nxt}
    assert not (run_dir / f"prompts.{child.pid}.journal").exists()
    assert list(run_dir.glob("prompts.*.journal")) == []


def test_prompts_reach_sqlite_in_batches_and_all_of_them_at_the_latest_on_close(tmp_path):
    refs = [store_prompt(tmp_path, [HumanMessage(f"prompt {i}")]) for i in range(FLUSH_EVERY + 3)]
    assert set(refs[:FLUSH_EVERY]) <= _in_sqlite(tmp_path) and refs[-1] not in _in_sqlite(tmp_path)
    assert set(load_prompts(tmp_path)) == set(refs)  # reading flushes what this process holds
    assert _in_sqlite(tmp_path) == set(refs)
    store_prompt(tmp_path, [HumanMessage("one more")])
    prompt_store._close_all()  # as at exit
    assert len(_in_sqlite(tmp_path)) == FLUSH_EVERY + 4
    assert list(tmp_path.glob("prompts.*.journal")) == []  # an emptied journal does not stay behind
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
    assert sorted(p.name for p in tmp_path.iterdir()) == [PROMPTS]  # no -wal, no -shm, no journal


def test_closing_beside_another_writer_leaves_it_its_wal(tmp_path):
    store_prompt(tmp_path, [HumanMessage("mine")])
    prompt_store.flush(tmp_path)
    other = sqlite3.connect(str(tmp_path / PROMPTS), isolation_level=None)  # a worker of the same run
    other.execute("BEGIN IMMEDIATE")  # in the middle of its own insert
    try:
        prompt_store.close(tmp_path)
    finally:
        other.execute("ROLLBACK")
    assert other.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    other.close()
    assert "mine" in str(load_prompts(tmp_path))
