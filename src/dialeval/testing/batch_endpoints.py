"""Batch endpoints of the test server: OpenAI files + batches, Anthropic message batches.

Each line of a batch is answered by the stub's own ``answer`` (the same text, usage and
prompt-cache emulation as a live call) but is kept apart from the live requests, so a
test can say "no live chat request was made". Tests steer batches through attributes:

- ``polls``: a batch finishes after this many status requests, answering its lines in
  equal parts at each one (0: every line is answered when the batch is created);
- ``fail(body)``: lines it holds true for get an error instead of an answer;
- ``expire(body)``: lines it holds true for are never answered, and the batch expires
  once the rest are done;
- cancelling leaves the lines not yet answered unanswered;
- ``enabled = False``: the routes answer 404, as a server without a batch API does;
- ``reject = "why"``: a new batch fails validation (OpenAI: status ``failed`` with that
  error; Anthropic refuses the request with 400); ``files`` holds what is still uploaded
  (``DELETE /files/{id}`` removes one and lists it in ``deleted``).

``batches`` lists every batch submitted, so a test can count submissions.
"""

from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any, Callable, Literal, Protocol
from urllib.parse import urlsplit

LinePredicate = Callable[[dict[str, Any]], bool]


class Answering(Protocol):
    """What the batch routes need of the server that holds them (an ``OpenAIStub``): the
    answer to one request and the server's address; the server imports these routes, not back."""

    @property
    def root_url(self) -> str: ...

    def answer(self, body: dict[str, Any], messages_api: bool, number: int) -> dict[str, Any]: ...
EXPIRED_MESSAGE = "This request could not be executed before the completion window expired."


@dataclass
class StubBatch:
    """One submitted batch as the stub keeps it."""

    id: str
    api: Literal["openai", "anthropic"]
    lines: list[tuple[str, dict[str, Any]]]  # (custom_id, body), in submission order
    metadata: dict[str, str] = field(default_factory=dict)
    input_file_id: str | None = None
    created: float = field(default_factory=time.time)
    polls: int = 0
    # custom_id -> ("ok", response body) or ("failed", error message)
    answers: dict[str, tuple[str, Any]] = field(default_factory=dict)
    cancel_requested: bool = False
    state: Literal["in_progress", "cancelling", "completed", "expired", "cancelled", "failed"] = "in_progress"
    rejected: str | None = None  # why validation failed
    output_file_id: str | None = None
    error_file_id: str | None = None

    @property
    def final(self) -> bool:
        return self.state in ("completed", "expired", "cancelled", "failed")

    def count(self, kind: str) -> int:
        return sum(1 for outcome, _ in self.answers.values() if outcome == kind)


def _iso(seconds: float | None) -> str | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, timezone.utc).isoformat().replace("+00:00", "Z")


def _multipart(content_type: str, data: bytes) -> dict[str, tuple[str | None, bytes]]:
    """Form fields of a multipart body: name -> (file name, bytes)."""
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + data)
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str) and isinstance(payload, bytes):
            fields[name] = (part.get_filename(), payload)
    return fields


class BatchEndpoints:
    """The batch routes of one :class:`OpenAIStub`, with the test controls described above."""

    def __init__(self, stub: Answering):
        self.stub = stub
        self.enabled = True
        self.reject: str | None = None
        self.polls = 0
        self.fail: LinePredicate | None = None
        self.expire: LinePredicate | None = None
        self.batches: list[StubBatch] = []
        self.lines: list[dict[str, Any]] = []  # bodies of lines answered (or failed), in order
        self.files: dict[str, bytes] = {}  # uploaded and output files still at the provider
        self.deleted: list[str] = []  # ids of files deleted, in order
        self.calls: list[tuple[str, str]] = []  # (method, path) of every batch request
        self._lock = threading.Lock()

    # --- routing ------------------------------------------------------------------------

    def handle(self, handler: Any, method: str) -> bool:
        """Serve ``handler``'s request when it is a batch or file route; False otherwise."""
        url = urlsplit(handler.path)
        parts = [p for p in url.path.split("/") if p]
        if parts[:1] == ["v1"]:
            parts = parts[1:]
        if not parts or not (parts[0] in ("files", "batches") or parts[:2] == ["messages", "batches"]):
            return False
        length = int(handler.headers.get("Content-Length") or 0)
        data = handler.rfile.read(length) if length else b""
        with self._lock:
            self.calls.append((method, url.path))
        if handler._refuse():
            return True
        if not self.enabled:
            self._reply(handler, 404, {"error": {"message": "this server has no batch API"}})
            return True
        with self._lock:
            status, payload = self._route(method, parts, data, handler.headers.get("Content-Type") or "")
        self._reply(handler, status, payload)
        return True

    def _route(self, method: str, parts: list[str], data: bytes, content_type: str) -> tuple[int, Any]:
        if parts[0] == "files":
            if method == "POST" and len(parts) == 1:
                return self._upload(content_type, data)
            if method == "GET" and len(parts) == 3 and parts[2] == "content" and parts[1] in self.files:
                return 200, self.files[parts[1]]
            if method == "DELETE" and len(parts) == 2 and parts[1] in self.files:
                del self.files[parts[1]]
                self.deleted.append(parts[1])
                return 200, {"id": parts[1], "object": "file", "deleted": True}
        elif parts[0] == "batches":
            if method == "POST" and len(parts) == 1:
                return self._create_openai(json.loads(data or b"{}"))
            if method == "GET" and len(parts) == 1:
                listed = [self._openai_view(b) for b in reversed(self.batches) if b.api == "openai"]
                first, last = (listed[0]["id"], listed[-1]["id"]) if listed else (None, None)
                return 200, {"object": "list", "data": listed, "first_id": first, "last_id": last, "has_more": False}
            batch = self._find(parts[1], "openai")
            if batch is not None and method == "GET" and len(parts) == 2:
                self._poll(batch)
                return 200, self._openai_view(batch)
            if batch is not None and method == "POST" and parts[2:] == ["cancel"]:
                self._cancel(batch)
                return 200, self._openai_view(batch)
        else:  # messages/batches
            rest = parts[2:]
            if method == "POST" and not rest:
                return self._create_anthropic(json.loads(data or b"{}"))
            if method == "GET" and not rest:
                listed = [self._anthropic_view(b) for b in reversed(self.batches) if b.api == "anthropic"]
                first, last = (listed[0]["id"], listed[-1]["id"]) if listed else (None, None)
                return 200, {"data": listed, "has_more": False, "first_id": first, "last_id": last}
            batch = self._find(rest[0], "anthropic")
            if batch is not None and method == "GET" and len(rest) == 1:
                self._poll(batch)
                return 200, self._anthropic_view(batch)
            if batch is not None and method == "GET" and rest[1:] == ["results"] and batch.final:
                return 200, self._anthropic_results(batch)
            if batch is not None and method == "POST" and rest[1:] == ["cancel"]:
                self._cancel(batch)
                return 200, self._anthropic_view(batch)
        return 404, {"error": {"type": "not_found_error", "message": f"no route {method} /{'/'.join(parts)}"}}

    @staticmethod
    def _reply(handler: Any, status: int, payload: Any) -> None:
        raw = isinstance(payload, bytes)
        data = payload if raw else json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/binary" if raw else "application/json")
        handler.send_header("Content-Length", str(len(data)))
        try:
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _find(self, batch_id: str, api: str) -> StubBatch | None:
        return next((b for b in self.batches if b.id == batch_id and b.api == api), None)

    # --- submission -----------------------------------------------------------------------

    def _upload(self, content_type: str, data: bytes) -> tuple[int, Any]:
        fields = _multipart(content_type, data)
        if "file" not in fields:
            return 400, {"error": {"message": "multipart field 'file' is missing", "type": "invalid_request_error"}}
        name, content = fields["file"]
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = content
        purpose = fields.get("purpose", (None, b"batch"))[1].decode()
        return 200, self._file_view(file_id, name or "upload.jsonl", purpose)

    def _file_view(self, file_id: str, name: str, purpose: str) -> dict[str, Any]:
        return {
            "id": file_id, "object": "file", "bytes": len(self.files[file_id]), "created_at": int(time.time()),
            "filename": name, "purpose": purpose, "status": "processed",
        }

    def _create_openai(self, request: dict[str, Any]) -> tuple[int, Any]:
        file_id = request.get("input_file_id")
        if file_id not in self.files:
            return 400, {"error": {"message": f"no file {file_id}", "type": "invalid_request_error"}}
        rows = [json.loads(row) for row in self.files[file_id].decode().splitlines() if row.strip()]
        lines = [(str(row["custom_id"]), row["body"]) for row in rows]
        batch = StubBatch(f"batch_{len(self.batches) + 1}", "openai", lines, request.get("metadata") or {}, file_id)
        if self.reject is not None:
            batch.state, batch.rejected = "failed", self.reject
            self.batches.append(batch)
            return 200, self._openai_view(batch)
        return 200, self._openai_view(self._start(batch))

    def _create_anthropic(self, request: dict[str, Any]) -> tuple[int, Any]:
        if self.reject is not None:
            return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": self.reject}}
        lines = [(str(r["custom_id"]), r["params"]) for r in request.get("requests", [])]
        batch = StubBatch(f"msgbatch_{len(self.batches) + 1:04d}", "anthropic", lines)
        return 200, self._anthropic_view(self._start(batch))

    def _start(self, batch: StubBatch) -> StubBatch:
        self.batches.append(batch)
        if self.polls <= 0:
            self._advance(batch, len(batch.lines))
        return batch

    # --- progress ---------------------------------------------------------------------------

    def _poll(self, batch: StubBatch) -> None:
        """A status request: the batch moves on by one step."""
        if batch.final:
            return
        if batch.cancel_requested:
            batch.state = "cancelled"
            self._finish(batch)
            return
        batch.polls += 1
        target = len(batch.lines) if batch.polls >= self.polls else math.ceil(len(batch.lines) * batch.polls / self.polls)
        self._advance(batch, target)

    def _advance(self, batch: StubBatch, target: int) -> None:
        """Answer lines until ``target`` of them were dealt with; finish when all are."""
        for custom_id, body in batch.lines[:target]:
            if custom_id in batch.answers or (self.expire is not None and self.expire(body)):
                continue
            self.lines.append(body)
            if self.fail is not None and self.fail(body):
                batch.answers[custom_id] = ("failed", "the stub was told to fail this line")
            else:
                number = len(self.lines)
                batch.answers[custom_id] = ("ok", self.stub.answer(body, batch.api == "anthropic", number))
        if target >= len(batch.lines):
            batch.state = "completed" if len(batch.answers) == len(batch.lines) else "expired"
            self._finish(batch)

    def _cancel(self, batch: StubBatch) -> None:
        if not batch.final:
            batch.cancel_requested = True
            batch.state = "cancelling"

    def _finish(self, batch: StubBatch) -> None:
        """Write an OpenAI batch's output and error files."""
        if batch.api != "openai":
            return
        out, errors = [], []
        for n, (custom_id, _) in enumerate(batch.lines):
            row: dict[str, Any] = {"id": f"batch_req_{batch.id}_{n}", "custom_id": custom_id}
            outcome, value = batch.answers.get(custom_id, ("", None))
            if outcome == "ok":
                out.append({**row, "response": {"status_code": 200, "request_id": f"req_{n}", "body": value}, "error": None})
            elif outcome == "failed":
                body = {"error": {"message": value, "type": "invalid_request_error", "param": None, "code": None}}
                errors.append({**row, "response": {"status_code": 400, "request_id": f"req_{n}", "body": body}, "error": None})
            elif batch.state == "expired":  # OpenAI lists expired requests in the error file
                errors.append({**row, "response": None, "error": {"code": "batch_expired", "message": EXPIRED_MESSAGE}})
            # a cancelled batch's unanswered lines appear in neither file
        for rows, attr in ((out, "output_file_id"), (errors, "error_file_id")):
            if rows:
                file_id = f"file-{len(self.files) + 1}"
                self.files[file_id] = "".join(json.dumps(r) + "\n" for r in rows).encode()
                setattr(batch, attr, file_id)

    # --- what clients read ----------------------------------------------------------------------

    def _openai_view(self, batch: StubBatch) -> dict[str, Any]:
        status = {"in_progress": "in_progress", "cancelling": "cancelling"}.get(batch.state, batch.state)
        done = time.time() if batch.final else None
        return {
            "id": batch.id, "object": "batch", "endpoint": "/v1/chat/completions",
            "errors": {"object": "list", "data": [{"code": "invalid_request", "message": batch.rejected, "line": 1}]}
            if batch.rejected else None,
            "input_file_id": batch.input_file_id, "completion_window": "24h", "status": status,
            "output_file_id": batch.output_file_id, "error_file_id": batch.error_file_id,
            "created_at": int(batch.created), "in_progress_at": int(batch.created), "expires_at": int(batch.created) + 86400,
            "completed_at": int(done) if done and batch.state == "completed" else None,
            "expired_at": int(done) if done and batch.state == "expired" else None,
            "cancelled_at": int(done) if done and batch.state == "cancelled" else None,
            "cancelling_at": int(batch.created) if batch.cancel_requested else None,
            "request_counts": {"total": len(batch.lines), "completed": batch.count("ok"), "failed": batch.count("failed")},
            "metadata": batch.metadata or None,
        }

    def _anthropic_view(self, batch: StubBatch) -> dict[str, Any]:
        final = batch.final
        unanswered = len(batch.lines) - len(batch.answers)
        processing_status = "ended" if final else ("canceling" if batch.cancel_requested else "in_progress")
        return {
            "id": batch.id, "type": "message_batch", "processing_status": processing_status,
            "request_counts": {
                "processing": 0 if final else unanswered,
                "succeeded": batch.count("ok"), "errored": batch.count("failed"),
                "canceled": unanswered if final and batch.state == "cancelled" else 0,
                "expired": unanswered if final and batch.state == "expired" else 0,
            },
            "created_at": _iso(batch.created), "expires_at": _iso(batch.created + 86400),
            "ended_at": _iso(time.time()) if final else None, "archived_at": None,
            "cancel_initiated_at": _iso(batch.created) if batch.cancel_requested else None,
            "results_url": f"{self.stub.root_url}/v1/messages/batches/{batch.id}/results" if final else None,
        }

    def _anthropic_results(self, batch: StubBatch) -> bytes:
        rows = []
        unanswered = "canceled" if batch.state == "cancelled" else "expired"
        for custom_id, _ in batch.lines:
            outcome, value = batch.answers.get(custom_id, ("", None))
            if outcome == "ok":
                result: dict[str, Any] = {"type": "succeeded", "message": value}
            elif outcome == "failed":
                error = {"type": "invalid_request_error", "message": value}
                result = {"type": "errored", "error": {"type": "error", "error": error}}
            else:
                result = {"type": unanswered}
            rows.append({"custom_id": custom_id, "result": result})
        return "".join(json.dumps(r) + "\n" for r in rows).encode()
