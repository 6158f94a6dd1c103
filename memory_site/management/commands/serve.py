"""`manage.py serve`: everything Cairn needs, in one command, stopped cleanly on Ctrl-C."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections
from django.db.migrations.executor import MigrationExecutor

from memory_site import embedded
from memory_site.management.commands.createadmin import PASSWORD_FILE, ensure_admin
from ops.version import VERSION


def _stop_process(proc: subprocess.Popen, timeout: float) -> None:
    """SIGTERM the child's whole process group, then SIGKILL what is left after `timeout`."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)
    except ProcessLookupError:
        pass


def _fresh_metrics_dir() -> None:
    """The web workers and the worker count into one directory (prometheus-client's
    multiprocess mode); a previous run's counters would add up with this run's: start empty."""
    directory = Path(settings.PROMETHEUS_MULTIPROC_DIR or embedded.VAR_DIR / "prometheus")
    directory.mkdir(parents=True, exist_ok=True)
    for db_file in directory.glob("*.db"):
        db_file.unlink(missing_ok=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(directory)  # inherited by the children


def _default_site_url(host: str, port: int) -> None:
    """Without CAIRN_SITE_URL the site is where serve listens: MCP clients check that the sign-in
    metadata names the address they used, so `make run ARGS='--port 8100'` must not name 8000.
    A wildcard address is reached on loopback. The children inherit it."""
    if os.environ.get("CAIRN_SITE_URL"):
        return
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    name = f"[{host}]" if ":" in host else host
    os.environ["CAIRN_SITE_URL"] = f"http://{name}:{port}"


def _port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def _wait_http(host: str, port: int, proc: subprocess.Popen, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


class Command(BaseCommand):
    help = (
        "Start Cairn: the embedded PostgreSQL and broker (unless DATABASE_URL / "
        "CELERY_BROKER_URL are set), the ASGI web server and a Celery worker. "
        "Ctrl-C, SIGTERM or SIGHUP stops them all in reverse order."
    )

    # Checks run inside handle(), after the cleanups are registered: a failed check must not
    # leave the embedded PostgreSQL that settings started running.
    requires_system_checks = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument(
            "--migrate", action="store_true", help="apply unapplied migrations before starting"
        )
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument(
            "--web-workers",
            type=int,
            default=None,
            help="uvicorn processes (default CAIRN_WEB_PROCESSES)",
        )
        parser.add_argument(
            "--concurrency",
            type=int,
            default=None,
            help="Celery worker processes (default CAIRN_WORKER_CONCURRENCY: one per core, max 4)",
        )
        parser.add_argument("--no-worker", action="store_true", help="web server only")

    def handle(self, *args, host, port, web_workers, concurrency, no_worker, migrate, **options):
        self.stop = threading.Event()
        self.cleanups: list[tuple[str, Callable[[], None]]] = []
        if not os.environ.get("DATABASE_URL"):
            # The first connection (the checks below) starts it if needed; serve owns it from
            # here and stops it on exit, a failed start included.
            self.cleanups.append(("PostgreSQL", embedded.stop_postgres))
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, lambda *_: self.stop.set())
        try:
            if not _port_free(host, port):
                raise CommandError(
                    f"{host}:{port} is already in use (another Cairn?). Stop it, or pick another "
                    f"port: make run ARGS='--port {port + 1}'."
                )
            self.check()
            self._check_migrations(migrate)
            _fresh_metrics_dir()
            concurrency = max(1, concurrency or settings.CAIRN_WORKER_CONCURRENCY)
            web_workers = max(1, web_workers or settings.CAIRN_WEB_PROCESSES)
            self._start(host, port, web_workers, concurrency, no_worker)
            self._watch()
        finally:
            self._shutdown()

    def _check_migrations(self, migrate: bool) -> None:
        executor = MigrationExecutor(connections["default"])
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
        if not plan:
            return
        if migrate:
            self.stdout.write(f"Applying {len(plan)} migration(s) …")
            call_command("migrate", interactive=False, verbosity=0)
            return
        first = ", ".join(f"{m.app_label}.{m.name}" for m, _ in plan[:3])
        more = f" and {len(plan) - 3} more" if len(plan) > 3 else ""
        raise CommandError(
            f"The database has {len(plan)} unapplied migration(s) ({first}{more}). "
            "Run `make run` (it migrates, then serves), or `manage.py serve --migrate`."
        )

    def _start(self, host, port, web_workers, concurrency, no_worker) -> None:
        if not os.environ.get("DATABASE_URL"):
            self.stdout.write(f"PostgreSQL (embedded) … data in {embedded.PG_DIR}")
        if settings.CELERY_EMBEDDED_BROKER and not no_worker:
            if embedded.start_broker() is not None:  # one already running is not ours to stop
                self.cleanups.append(("broker", embedded.stop_broker))
            self.stdout.write(f"Broker (embedded Valkey) … {embedded.BROKER_SOCKET}")
        self.stdout.write(f"Web … {web_workers} process(es)")
        if not no_worker:
            self.stdout.write(
                f"Worker … {concurrency} process(es), embedding model with "
                f"{settings.CAIRN_EMBEDDING_THREADS} thread(s) each"
            )

        password = ensure_admin()
        connections.close_all()  # children open their own connections
        _default_site_url(host, port)

        web = subprocess.Popen(
            [sys.executable, "-m", "memory_site.webserver",
             "--host", host, "--port", str(port), "--workers", str(web_workers)],
            start_new_session=True,
        )  # fmt: skip
        self.cleanups.append(("web server", lambda: _stop_process(web, 15)))
        self.children = {"web server": web}
        if not no_worker:
            worker = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "memory_site", "worker", "-B",
                 "--schedule", str(embedded.VAR_DIR / "celerybeat-schedule"),
                 "--concurrency", str(concurrency), "--loglevel", "INFO", "--without-gossip",
                 "--without-mingle"],
                start_new_session=True,
            )  # fmt: skip
            self.cleanups.append(("worker", lambda: _stop_process(worker, 30)))
            self.children["worker"] = worker

        if not _wait_http(host, port, web):
            raise CommandError("The web server did not start; see its output above.")
        url = f"http://{host}:{port}"
        self.stdout.write("")
        self.stdout.write(self.style.SUCCESS(f"Cairn {VERSION} is running at {url}/"))
        self.stdout.write(f"  Admin:   {url}/admin/")
        if password:
            self.stdout.write(self.style.WARNING(f"  Log in as admin / {password}"))
            self.stdout.write(f"  (shown once; also saved in {PASSWORD_FILE})")
        elif PASSWORD_FILE.exists():
            self.stdout.write(f"  Login:   see {PASSWORD_FILE} for the first admin's password")
        self.stdout.write("  Stop:    Ctrl-C")
        self.stdout.write("")

    def _watch(self) -> None:
        while not self.stop.wait(0.5):
            for name, proc in self.children.items():
                if proc.poll() is not None:
                    self.stderr.write(f"The {name} exited (code {proc.returncode}); stopping.")
                    return

    def _shutdown(self) -> None:
        for name, cleanup in reversed(self.cleanups):
            self.stdout.write(f"Stopping {name} …")
            try:
                cleanup()
            except Exception as exc:  # keep stopping the rest
                self.stderr.write(f"Could not stop {name} cleanly: {exc}")
        self.stdout.write("Stopped.")
