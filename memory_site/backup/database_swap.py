"""Databases next to Cairn's own on the same server, for `manage.py restore`: a scratch database
to restore into (so a damaged dump fails there, not in the live database), and the swap that
makes it the live one by renaming both in one transaction (the old one keeps its data under
another name until the caller drops it).

Works the same with the embedded server (Cairn's role is its superuser) and an external one,
where Cairn's role needs CREATEDB and must own its database (the error says so).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import secrets
import time
from collections.abc import Iterator

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


def _server() -> psycopg.Connection:
    """An autocommit connection to the server's maintenance database (`postgres`, else
    `template1`) as Cairn's own role."""
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
    try:
        return psycopg.connect(dbname="postgres", autocommit=True, **params)
    except psycopg.OperationalError:
        try:
            return psycopg.connect(dbname="template1", autocommit=True, **params)
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
