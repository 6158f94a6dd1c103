"""The mirror with a real Celery worker process and the real embedded broker."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from history import maintenance, mirror
from history.mirror.manifest import manifest_current
from knowledge.actors import Actor
from knowledge.models import HistoricalEntry
from knowledge.services import EntryFields, entry_upsert
from memory_site import embedded

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db(transaction=True)


class Worker:
    def __init__(self, tmp_path: Path, mirror_path: Path, *, batch: int = 10) -> None:
        self.tmp_path, self.proc, self.runs = tmp_path, None, 0
        self.env = os.environ | {
            "DJANGO_SETTINGS_MODULE": "tests.history.worker_settings",
            "CAIRN_TEST_DATABASE_NAME": connection.settings_dict["NAME"],
            "CAIRN_MIRROR_PATH": str(mirror_path),
            "CAIRN_MIRROR_BATCH_SIZE": str(batch),
            "CAIRN_MIRROR_SWEEP_SECONDS": "1",
            "CAIRN_MIRROR_PUSH_URL": "",
        }

    def start(self) -> None:
        self.runs += 1
        log = open(self.tmp_path / f"worker-{self.runs}.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "memory_site",
                "worker",
                "-B",
                "-s",
                str(self.tmp_path / "beat-schedule"),
                "--pool",
                "solo",
                "-l",
                "info",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        """The whole log of the current run."""
        return (self.tmp_path / f"worker-{self.runs}.log").read_text(errors="replace")

    def logs(self) -> str:
        return "\n".join(
            (self.tmp_path / f"worker-{i}.log").read_text(errors="replace")[-3000:]
            for i in range(1, self.runs + 1)
        )


@pytest.fixture
def worker(tmp_path, mirror_path):
    w = Worker(tmp_path, mirror_path)
    yield w
    w.stop()


def committed() -> int:
    return HistoricalEntry.objects.exclude(git_commit="").count()


def wait_until(predicate, timeout: float, worker: Worker, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}; worker log:\n{worker.logs()}")
        time.sleep(0.05)


def worker_sessions() -> int:
    """The worker's open database sessions (tests/history/worker_settings.py names them)."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE application_name = 'cairn-test-worker' AND datname = current_database()"
        )
        return cur.fetchone()[0]


def manifest_synced() -> bool:
    # The drain commits the projects manifest after the entries' revisions: the last revision
    # can be committed a moment before the manifest that names its subtopic.
    return manifest_current(mirror.open_mirror())


def assert_every_revision_committed_exactly_once() -> None:
    revisions = dict(
        HistoricalEntry.objects.order_by("history_id").values_list("history_id", "git_commit")
    )
    commits = [c for c in reversed(list(mirror.open_mirror().walk())) if c.revision]
    assert [c.revision for c in commits] == sorted(revisions)  # each once, in revision order
    assert {c.revision: c.sha for c in commits} == revisions
    assert maintenance.verify() == []


def test_a_worker_killed_mid_drain_loses_and_repeats_nothing(broker, worker, user, project):
    actor = Actor.for_user(user)
    for i in range(400):
        entry_upsert(
            actor=actor,
            project="acme",
            subtopic=f"s{i % 5}",
            fields=EntryFields(title=f"Note {i % 40}", body=f"revision {i}\n" * 3),
        )
    total = HistoricalEntry.objects.count()
    assert committed() == 0  # no worker yet: everything is pending, the writes did not wait
    worker.start()
    wait_until(lambda: committed() >= 20, 60, worker, "the drain to start")
    assert worker_sessions() > 0  # the name is the worker's: the wait below can see them go
    worker.kill()
    # A COMMIT the worker sent just before it died may still land; once its sessions are gone
    # the count is final.
    wait_until(lambda: worker_sessions() == 0, 30, worker, "the killed worker's sessions to end")
    at_kill = committed()
    assert 0 < at_kill < total, "the drain finished before the kill; make it longer"
    worker.start()
    wait_until(
        lambda: committed() == total and manifest_synced(), 90, worker,
        "the restarted worker to catch up",
    )  # fmt: skip
    assert_every_revision_committed_exactly_once()


def test_writes_made_while_the_broker_is_down_are_mirrored_when_it_returns(
    broker, worker, user, project
):
    actor = Actor.for_user(user)
    worker.start()
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Before", body="x"))
    wait_until(lambda: committed() == 1, 60, worker, "the first commit")
    embedded.stop_broker()
    assert not embedded.broker_running()
    # A drain or sweep delivered before the outage may still run and take the writes below
    # with it. The solo pool notices the lost connection only between tasks, so once it says
    # so nothing runs until the broker is back.
    wait_until(lambda: "Connection to broker lost" in worker.log(), 60, worker, "the outage")
    for i in range(3):
        result = entry_upsert(
            actor=actor, project="acme", fields=EntryFields(title=f"During {i}", body="y")
        )
        assert result.outcome == "created"  # the write succeeds without a broker

    # The worker (its consumer, and beat sending the sweep) retries the broker every few seconds
    # and logs each failure: once one has failed after the writes, "nothing reached the worker"
    # is a finding, not a matter of waiting long enough.
    def failed_tries() -> int:
        log = worker.log()
        return log.count("consumer: Cannot connect to") + log.count("beat: Connection error")

    before = failed_tries()
    wait_until(lambda: failed_tries() > before, 60, worker, "the worker to try the broker again")
    assert mirror.pending().count() == 3
    embedded.start_broker()
    wait_until(
        lambda: not mirror.pending().exists() and manifest_synced(), 90, worker,
        "the sweep after the outage",
    )  # fmt: skip
    assert_every_revision_committed_exactly_once()
