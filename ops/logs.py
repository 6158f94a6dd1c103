"""Structured logs: every record carries the request id of the call it belongs to, from the
surface that took the call to the Celery tasks it queued; CAIRN_LOG_FORMAT=json writes one JSON
object per line."""

from __future__ import annotations

import json
import logging
import re
import uuid
from contextvars import ContextVar

REQUEST_ID: ContextVar[str] = ContextVar("cairn_request_id", default="")
_SAFE = re.compile(r"[^A-Za-z0-9._:-]")


def new_request_id(given: str = "") -> str:
    """A caller's X-Request-ID when it is usable (64 safe characters at most), else a new one."""
    given = _SAFE.sub("", given or "")[:64]
    return given or uuid.uuid4().hex[:16]


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        data = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", "") or REQUEST_ID.get() or None,
        }
        if record.exc_info:
            data["exception"] = self.formatException(record.exc_info)
        return json.dumps(data, default=str)
