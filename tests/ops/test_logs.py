"""Structured logs: a request id from the surface to the Celery tasks it queues; JSON lines."""

import json
import logging

import pytest
from celery.signals import task_success

from history import tasks as history_tasks
from memory_site import embedded
from ops.logs import REQUEST_ID, JsonFormatter, RequestIdFilter

pytestmark = pytest.mark.django_db


def test_a_request_gets_an_id_and_keeps_a_safe_one_it_was_given(client):
    fresh = client.get("/healthz")
    assert len(fresh["X-Request-ID"]) == 16
    given = client.get("/healthz", headers={"X-Request-ID": "lb-42:abc"})
    assert given["X-Request-ID"] == "lb-42:abc"
    hostile = client.get("/healthz", headers={"X-Request-ID": "a\nb<script>" + "x" * 100})
    assert hostile["X-Request-ID"].startswith("abscript") and len(hostile["X-Request-ID"]) == 64


def test_json_lines_carry_the_request_id():
    record = logging.LogRecord("cairn", logging.WARNING, __file__, 1, "slow %s", ("drain",), None)
    token = REQUEST_ID.set("req-7")
    try:
        RequestIdFilter().filter(record)
    finally:
        REQUEST_ID.reset(token)
    line = json.loads(JsonFormatter().format(record))
    assert line == {**line, "level": "WARNING", "message": "slow drain", "request_id": "req-7"}


def test_the_request_id_travels_with_a_queued_task(settings):
    from memory_site.celery import app

    started = embedded.start_broker()
    try:
        with app.connection_for_write() as conn:
            conn.default_channel.queue_purge("celery")
        token = REQUEST_ID.set("req-queued")
        try:
            app.send_task("history.tasks.mirror_drain", retry=False)
        finally:
            REQUEST_ID.reset(token)
        with app.connection_for_read() as conn:
            queue = conn.SimpleQueue("celery", no_ack=True)
            message = queue.get(timeout=5)
            queue.close()
    finally:
        if started is not None:
            embedded.stop_broker()
    assert message.headers["task"] == "history.tasks.mirror_drain"
    assert message.headers["cairn_request_id"] == "req-queued"


def test_a_task_runs_under_the_request_id_it_was_queued_with(settings, tmp_path):
    settings.CAIRN_MIRROR_PATH = str(tmp_path / "mirror.git")
    seen = []

    def grab(sender=None, **kwargs):
        seen.append(REQUEST_ID.get())

    task_success.connect(grab, weak=False)
    try:
        history_tasks.mirror_drain.apply(headers={"cairn_request_id": "req-from-rest"})
    finally:
        task_success.disconnect(grab)
    assert seen == ["req-from-rest"]
    assert REQUEST_ID.get() == ""  # and it does not leak past the task
