"""Per-operation timings: one row per REST route, admin save, command and background task,
and a failure to record never fails the call. (MCP: tests/mcp_api/test_timings.py.)"""

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from history import tasks as history_tasks
from knowledge.actors import Actor
from knowledge.services import EntryFields, entry_update, entry_upsert
from ops import metrics, report, timing
from ops.models import OperationTiming
from tests.factories import EntryFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_a_rest_read_is_recorded_with_its_database_time_and_the_memory_size(api, rows):
    EntryFactory(project__slug="other")
    assert api.get("/api/v1/search", {"q": "anything"}).status_code == 200
    [row] = rows(surface="rest")
    assert row.operation == "GET v1/search"
    assert row.outcome == "ok" and row.error == ""
    assert row.total_ms > 0 and 0 < row.db_ms <= row.total_ms
    assert row.entries == 1
    assert row.content_bytes is None


def test_a_rest_write_records_its_size_and_a_refusal_its_status(api, rows):
    body = {"project": "acme", "title": "Runbook", "body": "é" * 100}
    assert api.put("/api/v1/entries", body, content_type="application/json").status_code == 201
    assert (
        api.patch(
            "/api/v1/entries/424242", {"title": "x"}, content_type="application/json"
        ).status_code
        == 404
    )
    write, refused = rows(surface="rest")
    assert write.operation == "PUT v1/entries" and write.outcome == "ok"
    assert write.content_bytes > 200  # the request's JSON, UTF-8
    assert refused.operation == "PATCH v1/entries/<ref>"
    assert (refused.outcome, refused.error) == ("refused", "HTTP 404")


def test_an_admin_save_is_recorded_and_a_page_view_is_not(admin_client, project, rows):
    add = reverse("admin:knowledge_entry_add")
    assert admin_client.get(add).status_code == 200
    response = admin_client.post(
        add,
        {"project": project.pk, "title": "New", "body": "hello", "kind": "note",
         "status": "active", "searchable": "on", "metadata": "{}"},
    )  # fmt: skip
    assert response.status_code == 302
    [row] = rows(surface="admin")
    assert (row.operation, row.outcome, row.content_bytes) == ("entry.add", "ok", 5)
    assert row.db_ms > 0


def test_an_invalid_admin_form_is_recorded_as_refused(admin_client, project, rows):
    response = admin_client.post(reverse("admin:knowledge_entry_add"), {"project": project.pk})
    assert response.status_code == 200
    [row] = rows(surface="admin")
    assert (row.operation, row.outcome, row.error) == ("entry.add", "refused", "invalid form")


def test_a_background_task_is_recorded_with_its_git_time(settings, tmp_path, acme, owner, rows):
    settings.CAIRN_MIRROR_PATH = str(tmp_path / "mirror.git")
    entry_upsert(
        actor=Actor.for_user(owner),
        project="acme",
        fields=EntryFields(title="Runbook", body="steps"),
    )
    result = history_tasks.mirror_drain.apply()  # Celery runs it here, signals and all
    assert result.get() == {"committed": 1, "reconciled": 0}
    [row] = rows(surface="task")
    assert row.operation == "history.tasks.mirror_drain" and row.outcome == "ok"
    assert row.git_ms is not None and row.git_ms + row.db_ms == pytest.approx(row.total_ms)


def test_a_command_is_recorded(acme, owner, rows, capsys):
    owner.is_superuser = True
    owner.save()
    call_command("search", "nothing here", "--user", "owner", "--mode", "text")
    assert "No entries match" in capsys.readouterr().out
    [row] = rows(surface="command")
    assert (row.operation, row.outcome) == ("search", "ok")


@pytest.mark.parametrize("part", ["the insert", "the metrics"])
def test_a_failure_to_record_never_fails_the_call(api, rows, monkeypatch, part):
    def broken(*args, **kwargs):
        raise RuntimeError(f"{part} broke")

    if part == "the insert":
        monkeypatch.setattr(timing, "COPY_SQL", "COPY no_such_table (at) FROM STDIN")
    else:
        monkeypatch.setattr(metrics, "observe", broken)
    monkeypatch.setattr(timing.settings, "CAIRN_TIMINGS_BATCH", 1)  # write at once: and fail
    assert api.get("/api/v1/search", {"q": "still works"}).status_code == 200
    assert api.get("/api/v1/search", {"q": "and again"}).status_code == 200  # the DB is fine
    monkeypatch.undo()
    assert rows(surface="rest") == []  # what could not be written is dropped, not retried


def test_rows_are_written_in_batches_not_per_call(api, settings, django_assert_max_num_queries):
    settings.CAIRN_TIMINGS_BATCH = 1000
    settings.CAIRN_TIMINGS_FLUSH_SECONDS = 3600
    timing.flush()
    api.get("/api/v1/search", {"q": "warm"})
    with django_assert_max_num_queries(0):
        for _ in range(5):
            timing.record(timing.Timer("rest", "GET v1/search"))
    assert timing.flush() == 6  # one count, one INSERT


def test_old_rows_are_pruned(settings):
    old = timezone.now() - timezone.timedelta(days=40)
    OperationTiming.objects.create(at=old, surface="rest", operation="GET x", outcome="ok",
                                   total_ms=1.0)  # fmt: skip
    OperationTiming.objects.create(at=timezone.now(), surface="rest", operation="GET x",
                                   outcome="ok", total_ms=1.0)  # fmt: skip
    settings.CAIRN_TIMINGS_KEEP_DAYS = 30
    assert timing.prune() == 1
    assert OperationTiming.objects.count() == 1


def test_the_metrics_command_prints_percentiles_and_size_buckets(capsys):
    now = timezone.now()
    OperationTiming.objects.bulk_create(
        [OperationTiming(at=now, surface="mcp", operation="search", outcome="ok",
                         total_ms=float(ms), db_ms=1.0, entries=entries)
         for ms, entries in [(10, 50), (20, 50), (30, 50), (100, 5000), (200, 5000)]]
        + [OperationTiming(at=now, surface="mcp", operation="upsert", outcome="refused",
                           total_ms=5.0, entries=50)]
    )  # fmt: skip
    [search] = report.per_operation(operation="search")
    assert (search["calls"], search["p50"], search["max"]) == (5, 30.0, 200.0)
    call_command("metrics", "--days", "1")
    out = capsys.readouterr().out
    assert "mcp search" in out and "mcp upsert" in out
    assert "p50" in out and "p90" in out and "max" in out
    assert "0-100" in out and "1k-10k" in out
    assert "20.0 (3)" in out and "150.0 (2)" in out  # the rising row
    call_command("metrics", "--operation", "upsert")
    assert "mcp search" not in capsys.readouterr().out


def test_the_admin_shows_the_same_table_to_superusers(client, staff):
    OperationTiming.objects.create(at=timezone.now(), surface="rest", operation="GET v1/search",
                                   outcome="ok", total_ms=12.5, entries=3)  # fmt: skip
    url = reverse("admin:ops_operationtiming_changelist")
    client.force_login(UserFactory(username="clerk", is_staff=True))
    assert client.get(url).status_code == 403  # staff is not enough: timings are the operator's
    client.force_login(staff)  # a superuser
    response = client.get(url, {"days": "2"})
    assert response.status_code == 200
    page = response.content.decode()
    assert "GET v1/search" in page and "12.5" in page and "0-100" in page


def test_the_search_command_prints_compact_hits_and_json(acme, owner, capsys):
    entry_upsert(
        actor=Actor.for_user(owner),
        project="acme",
        subtopic="ops",
        fields=EntryFields(title="Restore the database", body="Stop the workers, then restore."),
    )
    call_command("search", "restore", "--user", "owner", "--mode", "text")
    out = capsys.readouterr().out
    assert "acme/ops  Restore the database" in out
    call_command("search", "restore", "--user", "owner", "--mode", "text", "--json")
    import json

    [hit] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert hit["title"] == "Restore the database" and hit["project"] == "acme"


def test_the_search_command_explains_a_bad_argument(owner):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="No user 'nobody'"):
        call_command("search", "x", "--user", "nobody")
    with pytest.raises(CommandError, match="limit"):
        call_command("search", "x", "--user", "owner", "--limit", "0")


@pytest.mark.urls("tests.admin.urls")
def test_an_admin_revert_is_recorded(admin_client, staff, project, rows):
    actor = Actor.for_user(staff)
    entry = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Plan", body="one")
    ).entry
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body="two"))
    url = f"/admin/knowledge/entry/{entry.pk}/history/revert/1/"
    assert admin_client.post(url, {"expected_version": 2}).status_code == 302
    assert admin_client.post(url, {"expected_version": 2}).status_code == 302  # stale now
    ok, stale = rows(surface="admin")
    assert (ok.operation, ok.outcome) == ("entry.revert", "ok")
    assert (stale.outcome, stale.error) == ("refused", "EntryConflict")
