"""Databases next to Cairn's own on the same server, for `manage.py restore`: a scratch database
to restore into (so a damaged dump fails there, not in the live database), the sessions on the
live one (restore refuses to run under them, or ends them and closes the database to new ones
while it works, so no write lands in a database about to be replaced), and the swap that makes
the scratch database the live one by renaming both in one transaction (the old one keeps its
data under another name until the caller drops it).

Works the same with the embedded server (Cairn's role is its superuser) and an external one,
where Cairn's role needs CREATEDB and must own its database (the error says so).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import secrets
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass

import psycopg
from django.db import connection
from psycopg import errors, sql

from memory_site import embedded
from memory_site.backup.create import BackupError

# Connections still arriving after they were ended (a web server's pool): try the rename again.
_SWAP_ATTEMPTS = 5
_GRANT = (
    "Cairn's database role may not do that: as a superuser, `ALTER ROLE <role> CREATEDB;` (it "
    "must also own its database), or run restore with a DATABASE_URL whose role may."
)


def side_name(live: str, purpose: str) -> str:
    """A new name next to `live` (a database, or the mirror's folder):
    `<live>_<purpose>_<UTC time>_<4 hex>`, at most PostgreSQL's 63 characters."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    return f"{live[: 63 - len(purpose) - 23]}_{purpose}_{stamp}_{secrets.token_hex(2)}"


def connect(name: str, *, autocommit: bool = True) -> psycopg.Connection:
    """A connection to the database `name` on Cairn's server, as Cairn's own role."""
    db = connection.settings_dict
    embedded.ensure_started(db)
    options = db.get("OPTIONS") or {}
    params = {
        "host": db.get("HOST") or None,
        "port": db.get("PORT") or None,
        "user": db.get("USER") or None,
        "password": db.get("PASSWORD") or None,
    }
    tls = ("sslmode", "sslrootcert", "sslcert", "sslkey")
    params |= {k: options[k] for k in tls if options.get(k)}
    return psycopg.connect(dbname=name, autocommit=autocommit, **params)


def _server() -> psycopg.Connection:
    """An autocommit connection to the server's maintenance database (`postgres`, else
    `template1`) as Cairn's own role."""
    try:
        return connect("postgres")
    except psycopg.OperationalError:
        try:
            return connect("template1")
        except psycopg.OperationalError as exc:
            raise BackupError(
                f"Could not connect to the database server's `postgres` or `template1` database "
                f"({exc}); restore needs one of them to create and rename databases."
            ) from exc


def create(name: str) -> None:
    try:
        with _server() as server:
            server.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except errors.InsufficientPrivilege as exc:
        raise BackupError(
            f"Restore first restores the snapshot into a new database ({name}) to prove it before "
            f"touching yours, and could not create it ({exc}). {_GRANT}"
        ) from exc


def drop(name: str) -> None:
    with _server() as server:
        server.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def exists(name: str) -> bool:
    with _server() as server:
        found = server.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        return found.fetchone() is not None


@contextlib.contextmanager
def using(name: str) -> Iterator[None]:
    """Point Django's default connection at the database `name` for the block."""
    db = connection.settings_dict
    live = db["NAME"]
    connection.close()
    db["NAME"] = name
    try:
        yield
    finally:
        connection.close()
        db["NAME"] = live


@dataclass(frozen=True)
class Session:
    """A client connected to a database: the web server, the worker, someone's psql."""

    pid: int
    application: str
    client: str
    since: dt.datetime | None

    def __str__(self) -> str:
        since = f", connected since {self.since:%Y-%m-%d %H:%M:%S %Z}" if self.since else ""
        return f"{self.application or 'a client'} from {self.client} (pid {self.pid}{since})"


def sessions(name: str, *, besides: Collection[int] = ()) -> list[Session]:
    """The client sessions on the database `name`, but those of the pids `besides`."""
    with _server() as server:
        rows = server.execute(
            "SELECT pid, application_name, client_addr::text, backend_start "
            "FROM pg_stat_activity WHERE datname = %s AND backend_type = 'client backend' "
            "AND pid <> pg_backend_pid() AND NOT pid = ANY(%s) ORDER BY backend_start, pid",
            [name, list(besides)],
        ).fetchall()
    return [Session(pid, app or "", addr or "this machine", at) for pid, app, addr, at in rows]


def close(name: str, *, keep: Collection[int] = ()) -> None:
    """Let no new session into the database `name` (not even Cairn's own: the web server's and
    the worker's attempts fail like a database that is down, which they answer with "retry"),
    then end every session on it but those of the pids `keep`. `reopen` undoes it."""
    with _server() as server:
        try:
            server.execute(
                sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(sql.Identifier(name))
            )
        except errors.InsufficientPrivilege as exc:
            raise BackupError(
                f"Restore closes the database {name} to new sessions while it works and could "
                f"not ({exc}). {_GRANT}"
            ) from exc
        try:
            server.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                "AND pid <> pg_backend_pid() AND NOT pid = ANY(%s)",
                [name, list(keep)],
            )
        except errors.InsufficientPrivilege as exc:
            _allow(server, name)
            raise BackupError(
                f"Could not end the other sessions on the database {name} ({exc}): another "
                "role holds some. Stop the programs that use it (the web server, the worker, "
                "psql), then run restore again."
            ) from exc


def reopen(name: str) -> None:
    """Let sessions into the database `name` again (see close)."""
    with _server() as server:
        _allow(server, name)


def _allow(server: psycopg.Connection, name: str) -> None:
    server.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS true").format(sql.Identifier(name)))


def swap(live: str, scratch: str) -> str:
    """Make `scratch` the database called `live`; returns the name the old one keeps. Both
    renames happen in one transaction: either both or neither. Every other session on either
    database is ended first (the web server and the worker reconnect to the new one)."""
    old = side_name(live, "old")
    connection.close()
    with _server() as server:
        for attempt in range(_SWAP_ATTEMPTS):
            try:
                server.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = ANY(%s) AND pid <> pg_backend_pid()",
                    [[live, scratch]],
                )
                with server.transaction():
                    for a, b in ((live, old), (scratch, live)):
                        server.execute(
                            sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
                                sql.Identifier(a), sql.Identifier(b)
                            )
                        )
                _allow(server, old)  # closed while the restore worked: open for a look
                return old
            except errors.ObjectInUse as exc:
                if attempt == _SWAP_ATTEMPTS - 1:
                    raise BackupError(
                        f"Could not swap the restored database in: {exc}. Stop the web server "
                        "and the worker, then run restore again."
                    ) from exc
                time.sleep(0.5)
            except errors.InsufficientPrivilege as exc:
                raise BackupError(
                    f"Could not swap the restored database in ({exc}). {_GRANT}"
                ) from exc
    raise AssertionError("unreachable")
