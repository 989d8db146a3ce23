"""One model answer read on its own (agents/reading.py): what ask does with each kind of answer."""

from __future__ import annotations

from pydantic import BaseModel

from dialeval.agents.reading import Tally, read_answer
from dialeval.models.generation import Generation


class Verdict(BaseModel):
    verdict: int


def answer(text: str, finish: str = "stop", **extra) -> Generation:
    return Generation(text, finish, input_tokens=10, output_tokens=5, cached=False, cost=0.01, **extra)


def test_a_fitting_answer_is_ok_and_ends_the_call():
    reading = read_answer(answer('{"verdict": 4}'), Verdict, None, retry_truncated=True)
    assert (reading.status, reading.value, reading.again) == ("ok", Verdict(verdict=4), False)
    assert [m.content for m in reading.follow_up] == ['{"verdict": 4}']


def test_an_unreadable_answer_gets_a_correction_and_another_try():
    reading = read_answer(answer("four"), Verdict, None, retry_truncated=True)
    assert reading.status == "unparsed" and reading.again and reading.value is None
    assert "Reply again with only a JSON object" in reading.follow_up[1].content


def test_a_meaning_check_that_fails_is_a_correction_too():
    reading = read_answer(answer('{"verdict": 9}'), Verdict, lambda v: "verdict 1-5" if v.verdict > 5 else None, True)
    assert (reading.status, reading.reason, reading.again) == ("unparsed", "verdict 1-5", True)


def test_a_cut_off_answer_is_asked_again_shorter_unless_the_paper_gave_no_second_chance():
    again = read_answer(answer('{"verd', "length"), Verdict, None, retry_truncated=True)
    final = read_answer(answer('{"verd', "length"), Verdict, None, retry_truncated=False)
    assert (again.status, again.again, len(again.follow_up)) == ("truncated", True, 2)
    assert (final.status, final.again, len(final.follow_up)) == ("truncated", False, 1)


def test_a_refusal_is_final_and_kept_as_the_raw_text():
    reading = read_answer(answer("", refusal="I cannot judge this."), Verdict, None, retry_truncated=True)
    assert (reading.status, reading.reason, reading.raw, reading.again) == ("unparsed", "refused", "I cannot judge this.", False)


def test_a_check_that_crashes_is_kept_as_the_crash():
    reading = read_answer(answer('{"verdict": 3}'), Verdict, lambda v: 1 / 0, retry_truncated=True)
    assert isinstance(reading.crash, ZeroDivisionError) and reading.follow_up == []


def test_the_tally_sums_every_attempt():
    tally = Tally()
    tally.add(answer("a"))
    tally.add(Generation("b", "stop", 3, 2, cached=True, cost=0.0))
    assert (tally.totals["input_tokens"], tally.totals["requests"], tally.totals["cached"], tally.cached_all) == (13, 1, 1, False)
