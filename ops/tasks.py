"""Celery's side: each task run is timed like a surface call, and carries the request id of the
call that queued it (a message header set at publish time)."""

from __future__ import annotations

import contextlib

from celery.signals import before_task_publish, task_failure, task_postrun, task_prerun

from ops import timing
from ops.logs import REQUEST_ID, new_request_id

HEADER = "cairn_request_id"
_running: dict[str, tuple[timing.Timer, object]] = {}


@before_task_publish.connect
def _stamp_request_id(headers=None, **kwargs) -> None:
    rid = REQUEST_ID.get()
    if rid and headers is not None:
        headers.setdefault(HEADER, rid)


@task_prerun.connect
def _start(task_id=None, task=None, **kwargs) -> None:
    request = getattr(task, "request", None)
    rid = getattr(request, HEADER, None) or (getattr(request, "headers", None) or {}).get(HEADER)
    token = REQUEST_ID.set(new_request_id(rid or ""))
    _running[task_id] = (timing.Timer("task", task.name).start(), token)


@task_failure.connect
def _failed(task_id=None, exception=None, **kwargs) -> None:
    running = _running.get(task_id)
    if running and exception is not None:
        running[0].failed(exception)


@task_postrun.connect
def _stop(task_id=None, state=None, **kwargs) -> None:
    running = _running.pop(task_id, None)
    if running is None:
        return
    timer, token = running
    if state == "RETRY" and timer.outcome == "ok":
        timer.outcome, timer.error = "error", "Retry"
    timer.stop()
    with contextlib.suppress(ValueError):  # another context (an eager task in a request)
        REQUEST_ID.reset(token)
