"""No local file leaves the machine, no key lands in a file, and the viewer serves only its pages.

Each test runs what a user runs (``run()`` against the local OpenAI-compatible stub, the
viewer's server over HTTP) and checks what reached the endpoint, the disk or the browser.
"""

from __future__ import annotations

import http.client
import json
import shutil
import sqlite3
import threading
import zlib
from pathlib import Path
from typing import Any, Callable

import pytest

from dialeval.config import ModelSettings, RunConfig
from dialeval.data.io import DataError
from dialeval.memory import MemorySettings, open_note_store
from dialeval.protocols.mmrc.data import load_conversations
from dialeval.report.viewer import make_server, write_site
from dialeval.evaluation import run
from dialeval.testing.openai_server import OpenAIStub

FIXTURES = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "fixtures"
OUTSIDE_PNG = FIXTURES / "mmrc_images" / "balcony.png"  # a real image, but not in the data's folder
SECRET = "sk-test-never-written-7731"


# --------------------------------------------------------------------------- local images


def _mmrc(folder: Path, source: str) -> tuple[Path, dict[str, Any], str]:
    shutil.copytree(FIXTURES / "mmrc_images", folder / "mmrc_images")
    records = json.loads((FIXTURES / "mmrc_demo.json").read_text())[:1]
    records[0]["turns"][0]["images"][0]["source"] = source
    return _write(folder / "mmrc.json", records), {}, "field 'turns.0.images.0'"


def _mmdu(folder: Path, source: str) -> tuple[Path, dict[str, Any], str]:
    shutil.copytree(FIXTURES / "mmdu_images", folder / "mmdu_images")
    records = json.loads((FIXTURES / "mmdu_demo.json").read_text())[:1]
    records[0]["image"][0]["source"] = source
    return _write(folder / "mmdu.json", records), {}, "field 'image.0'"


def _mdseval(folder: Path, source: str) -> tuple[Path, dict[str, Any], str]:
    shutil.copytree(FIXTURES / "mdseval_images", folder / "images", dirs_exist_ok=True)
    records = json.loads((FIXTURES / "mdseval_demo.json").read_text())[:1]
    records[0]["images"][0]["image_path"] = source
    return _write(folder / "mdseval.json", records), {"image_dir": str(folder / "images")}, "field 'images.0.image_path'"


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(records))
    return path


def _escape_by_dots(folder: Path) -> str:
    return "../" * 40 + "etc/passwd"  # enough '..' to reach / from any folder


def _absolute_elsewhere(folder: Path) -> str:
    return str(OUTSIDE_PNG)


def _symlink_out(folder: Path) -> str:
    (folder / "pretty.png").symlink_to(OUTSIDE_PNG)
    return "pretty.png"


def _not_an_image(folder: Path) -> str:
    (folder / "notes.png").write_text("OPENAI_API_KEY=sk-this-is-not-a-picture\n")
    return "notes.png"


BENCHMARKS: dict[str, Callable[[Path, str], tuple[Path, dict[str, Any], str]]] = {"mmrc": _mmrc, "mmdu": _mmdu, "mdseval": _mdseval}
ATTACKS = {
    "dot-dot to /etc/passwd": (_escape_by_dots, "outside"),
    "absolute path elsewhere": (_absolute_elsewhere, "outside"),
    "symlink out of the folder": (_symlink_out, "outside"),
    "a text file named .png": (_not_an_image, "not an image Pillow can read"),
}


def test_an_mdseval_record_cannot_name_the_file_to_send_itself(tmp_path):
    records = json.loads((FIXTURES / "mdseval_demo.json").read_text())[:1]
    for image in records[0]["images"]:
        image["local_path"] = "/etc/passwd"  # the loader's own field, which picture blocks read
    data = _write(tmp_path / "mdseval.json", records)
    with OpenAIStub() as server:
        settings = ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=0)
        config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, options={"images": "blocks"})
        with pytest.raises(DataError, match=r"record 1, field 'images.0.local_path': 'local_path' is set by dialeval"):
            run("mdseval", data, config, progress=False)
    assert server.requests == []


@pytest.mark.parametrize("attack", list(ATTACKS))
@pytest.mark.parametrize("benchmark", list(BENCHMARKS))
def test_an_image_path_leaving_the_data_folder_stops_the_run_before_any_request(tmp_path, benchmark, attack):
    make_source, reason = ATTACKS[attack]
    folder = tmp_path / "data"
    folder.mkdir()
    # MDSEval paths are relative to its image folder; the others to the data file's folder
    where = folder / "images" if benchmark == "mdseval" else folder
    where.mkdir(exist_ok=True)
    data, options, field = BENCHMARKS[benchmark](folder, make_source(where))
    with OpenAIStub() as server:
        settings = ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=0)
        config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, options=options)
        with pytest.raises(DataError) as caught:
            run(benchmark, data, config, progress=False)
    message = str(caught.value)
    assert message.startswith(f"{data}, record 1") and field in message and reason in message
    assert server.requests == [] and server.gets == []  # nothing was sent, not even the preflight
    assert not (tmp_path / "runs").exists()


def test_dots_and_links_that_stay_inside_the_data_folder_are_fine(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    data, _, _ = _mmrc(folder, "mmrc_images/../alias.png")
    (folder / "alias.png").symlink_to(folder / "mmrc_images" / "balcony.png")
    [conv] = load_conversations(data)
    assert conv.images[0].source == str((folder / "mmrc_images" / "balcony.png").resolve())


# --------------------------------------------------------------------------- keys in written files


def _texts_of(path: Path) -> str:
    """Everything a file holds, as text: SQLite rows (zlib blobs inflated) or the raw bytes."""
    raw = path.read_bytes()
    if not raw.startswith(b"SQLite format 3"):
        return raw.decode("utf-8", "replace")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        out = []
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall():
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                for value in row:
                    if isinstance(value, bytes):
                        try:
                            value = zlib.decompress(value)
                        except zlib.error:
                            pass
                        value = value.decode("utf-8", "replace")
                    out.append(str(value))
        return raw.decode("utf-8", "replace") + "\n".join(out)
    finally:
        conn.close()


def test_a_key_in_the_data_and_in_the_answers_is_in_no_file_the_run_writes(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    row = {"id": "leaky-1", "question": f"My key is {SECRET}; is it safe?", "reference": "No.", "answer": f"Yes, {SECRET} is fine.", "system": "bot"}
    data = tmp_path / "answers.jsonl"
    data.write_text(json.dumps(row) + "\n")
    verdict = json.dumps({"rationale": f"The answer repeats the key {SECRET}.", "score": 1})
    cache = tmp_path / "cache" / "responses.sqlite"
    with OpenAIStub(respond=lambda body: verdict) as server:
        settings = ModelSettings(spec="openai-compatible:stub", base_url=server.base_url, max_retries=0)
        config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=str(cache), run_id="leaky")
        result = run("answers", data, config, progress=False)
    assert result.failed == 0 and len(result.records) == 1
    assert any(SECRET in json.dumps(body) for body in server.completions)  # the model saw the data as it is
    write_site(tmp_path / "runs")

    written = sorted(p for p in [*(tmp_path / "runs").rglob("*"), *cache.parent.rglob("*")] if p.is_file())
    names = {p.name for p in written}
    assert {"results.jsonl", "prompts.sqlite", "usage.json", "responses.sqlite", "00001.html"} <= names
    leaks = [str(p) for p in written if SECRET in _texts_of(p)]
    assert leaks == []
    for name in ("results.jsonl", "prompts.sqlite", "responses.sqlite", "00001.html"):
        [path] = [p for p in written if p.name == name]
        assert "[$OPENAI_API_KEY]" in _texts_of(path), name  # the text is there, the key is not


def test_a_key_pasted_into_the_config_never_reaches_config_json(tmp_path, monkeypatch):
    """A key typed into a base URL (instead of the environment) never reaches the run's config.json."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with OpenAIStub(respond=lambda body: json.dumps({"rationale": "ok", "score": 4})) as server:
        settings = ModelSettings(spec="openai-compatible:stub", base_url=f"{server.base_url}?token={SECRET}", max_retries=0)
        config = RunConfig(model=settings, output_dir=str(tmp_path / "runs"), cache_path=None, run_id="pasted", preflight=False)
        run("answers", FIXTURES / "answers_demo.jsonl", config, progress=False)
    written = (tmp_path / "runs" / "pasted" / "config.json").read_text()
    assert SECRET not in written and "?token=***" in written  # the query's values are masked (issue 33)


def test_a_key_in_a_note_is_scrubbed_before_it_is_stored(tmp_path, monkeypatch):
    from tests.test_memory_notes import HashEmbedding

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    store = open_note_store(MemorySettings(), str(tmp_path / "run"), embedding_function=HashEmbedding())
    store.update("c1", {"credentials": {"api key": SECRET}, SECRET: "named after the key"}, turn=1)
    assert store.note("c1") == {"credentials": {"api key": "[$OPENAI_API_KEY]"}, "[$OPENAI_API_KEY]": "named after the key"}


# --------------------------------------------------------------------------- the viewer's server


@pytest.fixture
def served(tmp_path):
    """A runs folder with one run, its pages, a shared cache and links planted in it, served."""
    runs = tmp_path / "runs"
    run_dir = runs / "r1"
    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text(json.dumps({"benchmark": "answers", "data": "/home/me/private.jsonl"}))
    (run_dir / "results.jsonl").write_text(json.dumps({"id": "q1", "status": "ok", "result": {"calls": []}}) + "\n")
    shutil.copy(OUTSIDE_PNG, run_dir / "scores.png")  # a plot the run page shows
    (runs / ".cache").mkdir()
    (runs / ".cache" / "responses.sqlite").write_text("cached answers")
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the runs folder")
    write_site(runs)
    (run_dir / "view" / "leak.html").symlink_to(secret)  # a link out, under the pages
    (run_dir / "view" / "config.html").symlink_to(run_dir / "config.json")  # a link to a run file
    (runs / "out.png").symlink_to(OUTSIDE_PNG)
    server = make_server(runs, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _get(port: int, path: str, host: str | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest("GET", path, skip_host=True)
        if host is not None:
            conn.putheader("Host", host)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_the_viewer_serves_its_pages_and_the_plots_they_show(served):
    host = f"127.0.0.1:{served}"
    assert _get(served, "/index.html", host)[0] == 200
    assert _get(served, "/", f"localhost:{served}")[0] == 200
    assert _get(served, "/r1/view/index.html", host)[0] == 200
    assert _get(served, "/r1/view/items/00001.html", host)[0] == 200
    assert _get(served, "/r1/scores.png", host) == (200, OUTSIDE_PNG.read_bytes())


@pytest.mark.parametrize(
    "path",
    [
        "/r1/config.json",
        "/r1/results.jsonl",
        "/.cache/responses.sqlite",
        "/r1/view/../config.json",
        "/r1/view/leak.html",
        "/r1/view/config.html",
        "/out.png",
        "/r1/",
        "/r1/view/items/",
    ],
)
def test_the_viewer_refuses_run_files_links_out_and_folder_listings(served, path):
    status, body = _get(served, path, f"127.0.0.1:{served}")
    assert status == 404
    assert b"outside the runs folder" not in body and b"private.jsonl" not in body


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1.evil.example:{port}", None])
def test_the_viewer_answers_only_requests_addressed_to_its_own_address(served, host):
    status, body = _get(served, "/index.html", host.format(port=served) if host else None)
    assert status in (400, 421) and b"<table" not in body
