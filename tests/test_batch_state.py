"""The run folder's batch records survive a process killed in the middle of a write."""

from __future__ import annotations

from dialeval.run.batch_state import BATCH_DIR, EVENTS, Answer, BatchState


def test_a_torn_last_line_is_ignored_and_the_next_write_starts_a_line_of_its_own(tmp_path):
    state = BatchState.load(tmp_path)
    chunk = state.submitting("c1", "openai:gpt-4o-mini", 1, {"key-1": "key-1", "key-2": "key-2"})
    state.submitted(chunk, "batch_1")
    with (tmp_path / BATCH_DIR / EVENTS).open("ab") as events:
        events.write(b'{"chunk": "c1", "event": "collec')  # kill -9 in the middle of a write

    resumed = BatchState.load(tmp_path)
    open_chunk = resumed.open_chunk_of("openai:gpt-4o-mini", "key-2")
    assert open_chunk is not None and open_chunk.batch_id == "batch_1"  # polled again, never resubmitted
    answers = [Answer("key-1", "openai:gpt-4o-mini", "ok", {"id": "r1"}, None),
               Answer("key-2", "openai:gpt-4o-mini", "expired", None, "batch expired")]
    resumed.collected(open_chunk, "expired", answers)

    after = BatchState.load(tmp_path)
    assert after.open_chunk_of("openai:gpt-4o-mini", "key-2") is None  # collected: an expired line may go again
    assert after.answers["key-1"].response == {"id": "r1"} and "key-2" not in after.answers


def test_a_chunk_written_before_submission_without_an_id_is_unconfirmed(tmp_path):
    state = BatchState.load(tmp_path)
    state.submitting("c1", "anthropic:claude-haiku-4-5", 1, {"key-1": "key-1"})
    [chunk] = BatchState.load(tmp_path).unconfirmed("anthropic:claude-haiku-4-5")
    assert chunk.batch_id is None and not chunk.open
