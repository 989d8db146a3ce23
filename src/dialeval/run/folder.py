"""The run folder ``runs/<run-id>/``: its results file, lock and paths, read and written here only.

``results.jsonl`` holds one JSON line per finished item, appended with a single write,
so a killed process leaves at most one torn last line: the reader ignores it and the
writer cuts it off before appending. Report, compare, viewer and protocols read results
through :func:`read_results`; only the runner writes them.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from dialeval.errors import DataError, RunError, RunLocked
from dialeval.jsonsafe import dumps, lone_surrogates

RESULTS = "results.jsonl"
JOURNAL = "bot_journal.jsonl"  # the bot under test's turns as they happened (dialeval.bots.journal)
LOCK = ".lock"
CONFIG = "config.json"
# what the end of a run writes from its results (and ``plots/``)
REPORT_FILES = ("metrics.json", "usage.json", "report.md")
PLOTS = "plots"
# what a run folder holds as files; a folder (or anything else) in their place stops a run
FILES = (RESULTS, JOURNAL, LOCK, CONFIG, "prompts.sqlite", *REPORT_FILES)


def set_aside_earlier_results(run_dir: Path, stamp: str) -> None:
    """``--fresh``: the earlier results, bot journal and report, renamed with ``stamp``
    (``results.<stamp>.jsonl``, ``metrics.<stamp>.json``, ``plots.<stamp>/`` ...). Why: a
    fresh session stopped before its end would otherwise leave the old report beside new
    results, saying "80 evaluated" of a file that holds 24."""
    names = [name for name in (RESULTS, JOURNAL, *REPORT_FILES, PLOTS) if (run_dir / name).exists()]

    def aside(name: str, stamp: str) -> Path:
        stem, dot, suffix = name.partition(".")
        return run_dir / f"{stem}.{stamp}{dot}{suffix}"

    taken, n = stamp, 1
    while any(aside(name, taken).exists() for name in names):  # two --fresh in one second: keep both
        n += 1
        taken = f"{stamp}-{n}"
    for name in names:
        (run_dir / name).rename(aside(name, taken))


def drop_outdated_report(run_dir: Path) -> None:
    """A session about to evaluate items: the report of the earlier session no longer
    describes the results (written again when this one ends; an interrupted one leaves none)."""
    for name in REPORT_FILES:
        (run_dir / name).unlink(missing_ok=True)


def results_by_id(run_dir: str | Path) -> dict[str, dict[str, Any]]:
    """The latest line per item id; a torn last line (crash mid-write) is ignored.

    Any other line that is not a result row stops with a message naming the file and
    line: guessing around it could count an item twice or lose one.
    """
    path = Path(run_dir) / RESULTS
    latest: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return latest
    if not path.is_file():
        raise RunError(f"{path}: is not a file (a results file belongs here); move it aside")
    lines = path.read_bytes().split(b"\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        torn = number == len(lines)  # no newline after it: a write that never finished
        try:
            row = json.loads(line.decode("utf-8"))
            if not isinstance(row, dict) or not isinstance(row.get("id"), str) or "status" not in row:
                raise ValueError("not a result row (needs 'id' and 'status')")
        except (ValueError, UnicodeDecodeError) as err:
            if torn:
                continue
            raise DataError(path, f"{err}; fix or delete that line, or start over with --fresh", line=number) from None
        latest[row["id"]] = row
    return latest


def read_results(run_dir: str | Path) -> list[dict[str, Any]]:
    """The rows of a run, one per item (its latest line), in the order items first finished."""
    return list(results_by_id(run_dir).values())


def repair_tail(path: Path) -> None:
    """Drop an unterminated last line so new lines never glue onto a torn one."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as fh:
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) == b"\n":
            return
        data = path.read_bytes()
        fh.truncate(data.rfind(b"\n") + 1)


class ResultsWriter:
    """Appends one JSON line per item with a single ``os.write``.

    One write call per line means a killed process leaves at most one torn last line,
    which :func:`read_results` ignores and :func:`repair_tail` removes. Text UTF-8 cannot
    encode (a lone surrogate in a reply) is written as a JSON escape and counted in the
    row's ``escaped_characters``, so the line is stored and reads back unchanged.
    """

    def __init__(self, path: Path):
        repair_tail(path)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, row: dict[str, Any]) -> None:
        from dialeval.secrets import scrub

        text = scrub(json.dumps(row, ensure_ascii=False, default=str))
        escaped = lone_surrogates(text)
        if escaped:
            text = scrub(dumps({**row, "escaped_characters": escaped}, default=str))
        os.write(self._fd, (text + "\n").encode("utf-8"))

    def close(self) -> None:
        os.close(self._fd)


class RunLock:
    """An exclusive ``flock`` on ``<run>/.lock`` while a process writes the run folder:
    two processes on one folder would pay for every call twice and mix their lines."""

    def __init__(self, run_dir: Path):
        self.path = Path(run_dir) / LOCK
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        import fcntl

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise RunLocked(
                f"run folder {self.path.parent} is in use by another dialeval process (pid {holder}); "
                "wait for it to finish, or use another --run-id"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        import fcntl

        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


RUN_ID = re.compile(r"[\w.+=@,-]+")  # letters, digits and a few marks: safe in a link, a shell and a file name


def check_run_id(run_id: str) -> None:
    """A run id names one folder inside the output folder: no separators, no ``..``, and
    nothing a link or a shell would need to quote (a space, ``#``, ``%``, ``?``), since the
    viewer links to it and the resume line repeats it."""
    if not run_id or run_id in (".", "..") or any(c in run_id for c in "/\\\0"):
        raise RunError(f"--run-id {run_id!r}: a run id is one folder name (no '/', '\\', or '..'); choose another")
    if not RUN_ID.fullmatch(run_id):
        bad = ", ".join(repr(c) for c in sorted({c for c in run_id if not RUN_ID.fullmatch(c)}))
        fixed = re.sub(r"[^\w.+=@,-]+", "-", run_id).strip("-") or "my-run"
        raise RunError(f"--run-id {run_id!r}: use letters, digits and - _ . + = @ , only (not {bad}); e.g. --run-id {fixed}")


def check_folder(run_dir: Path) -> None:
    """Stop, before anything is written, when the run folder or one of its files is
    something else: a file where the folder goes, a folder where ``results.jsonl`` goes."""
    for parent in (run_dir, *run_dir.parents):
        if parent.exists() or parent.is_symlink():
            if not parent.is_dir():
                what = "the run folder" if parent == run_dir else "a folder of the run's path"
                raise RunError(f"{parent}: is not a folder ({what} belongs here); move it aside or use another --output-dir")
            break
    for name in FILES:
        path = run_dir / name
        if (path.exists() or path.is_symlink()) and not path.is_file():
            raise RunError(f"{path}: is not a file (the run's {name} belongs here); move it aside")


def failure_summary(rows: list[dict[str, Any]], total: int) -> str:
    """``3 of 10 items failed: 3 x APIConnectionError at URL (model)``: one line."""
    failed = [r for r in rows if r.get("status") != "ok"]
    if not failed:
        return ""
    counts: Counter[str] = Counter()
    for row in failed:
        seen = set()
        for cause in row.get("causes") or [{"error": (row.get("error") or "error").split(":", 1)[0]}]:
            where = f" at {cause['endpoint']}" if cause.get("endpoint") else ""
            model = f" ({cause['model']})" if cause.get("model") else ""
            seen.add(f"{cause.get('error')}{where}{model}")
        counts.update(seen)
    causes = ", ".join(f"{n} x {what}" for what, n in counts.most_common(3))
    more = f", and {len(counts) - 3} other causes" if len(counts) > 3 else ""
    return f"{len(failed)} of {total} items failed: {causes}{more}"
