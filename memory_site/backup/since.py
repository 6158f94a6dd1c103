"""What the database that was here holds that a snapshot lacks, for `manage.py restore`: read
from both databases after the snapshot was proven in its new one and before that one goes live.

- Revisions (of entries, projects and subtopics) made since the snapshot would be lost with the
  old database: they are counted and the newest named, and restore keeps the old database
  instead of dropping it (restore.py).
- Access taken away since the snapshot must not come back with it: a token revoked or deleted,
  an account deactivated or deleted, a staff or superuser flag cleared, a password changed
  (perhaps because the old one leaked). Each is applied to the restored database too and said.
  Deletions count only when the two databases are one installation at two times (they share a
  token or an account, row for row): a snapshot from another host shares neither, and its
  accounts are not the old database's to judge.
- The search generation (knowledge/search/result_cache.py) moves past every value the old
  database gave out: web processes that kept answers under those values while they ran must not
  find them again under the restored database's.

Both sides are read in primary-key order, a bounded batch at a time, so the memory this takes
does not grow with the history.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import psycopg
from django.contrib.auth import get_user_model
from psycopg import sql

from knowledge.db.generation import CURRENT, SEQUENCE
from knowledge.models import ApiToken, HistoricalEntry, HistoricalProject, HistoricalSubtopic

_BATCH = 2000
_NAMED = 5  # revisions named in the report, the newest first
# What names a revision to the operator, per history table.
_HISTORIES = (
    (HistoricalEntry, "entry", "title"),
    (HistoricalProject, "project", "slug"),
    (HistoricalSubtopic, "subtopic", "path"),
)


@dataclass
class Since:
    revisions: int = 0  # made in the old database since the snapshot: lost with it
    newest: list[str] = field(default_factory=list)  # a few of them, described
    carried: list[str] = field(default_factory=list)  # access taken away, applied again
    generation: int = 0  # where the restored database's search generation now stands


def compare(old: psycopg.Connection, restored: psycopg.Connection) -> Since:
    """Read `old` (the live database, closed to everyone else) against `restored` (the proven
    snapshot, not live yet), carry the revocations over into `restored` and move its search
    generation; `restored` is committed by the caller."""
    since = Since()
    if not _has_table(old, HistoricalEntry._meta.db_table):
        return since  # an empty database that was never migrated: nothing to lose
    lost: list[tuple] = []
    for model, kind, label in _HISTORIES:
        table = model._meta.db_table
        if not (_has_table(old, table) and _has_table(restored, table)):
            continue  # a database from before that history was kept
        for row in _missing(old, restored, table, label):
            since.revisions += 1
            lost.append((row[2], kind, row))
    lost.sort(key=lambda item: item[0], reverse=True)
    since.newest = [_revision_line(kind, row) for _, kind, row in lost[:_NAMED]]
    same = _same_installation(old, restored)
    since.carried = _tokens(old, restored, same) + _accounts(old, restored, same)
    since.generation = _move_generation(old, restored)
    return since


def _has_table(conn: psycopg.Connection, table: str) -> bool:
    return conn.execute("SELECT to_regclass(%s) IS NOT NULL", [table]).fetchone()[0]


def _rows(conn: psycopg.Connection, table: str, label: str) -> Iterator[tuple]:
    """(history_id, id, history_date, history_type, label, version or None) in history_id
    order, read by keyset a batch at a time."""
    version = "version" if table == HistoricalEntry._meta.db_table else "NULL"
    query = sql.SQL(
        "SELECT history_id, id, history_date, history_type, {label}, {version} FROM {table} "
        "WHERE history_id > %s ORDER BY history_id LIMIT %s"
    ).format(label=sql.Identifier(label), version=sql.SQL(version), table=sql.Identifier(table))
    after = -1
    while True:
        batch = conn.execute(query, [after, _BATCH]).fetchall()
        yield from batch
        if len(batch) < _BATCH:
            return
        after = batch[-1][0]


def _missing(old, restored, table: str, label: str) -> Iterator[tuple]:
    """The rows of `table` in `old` that `restored` does not hold as they are (the same
    history_id for the same row at the same time): a merge of the two in history_id order."""
    theirs = _rows(restored, table, label)
    other = next(theirs, None)
    for row in _rows(old, table, label):
        while other is not None and other[0] < row[0]:
            other = next(theirs, None)
        if other is None or other[:3] != row[:3]:
            yield row


def _revision_line(kind: str, row: tuple) -> str:
    _, pk, when, action, label, version = row
    what = {"+": "created", "-": "deleted"}.get(action, "changed")
    at = f" version {version}" if version is not None else ""
    return f"{kind} {pk} {label!r}{at}, {what} at {when:%Y-%m-%d %H:%M:%S %Z}"


def _same_installation(old, restored) -> bool:
    """Whether the two databases share a token or an account, row for row."""
    tokens, users = _token_table(), _user_table()
    for table, key in ((tokens, "secret_hash"), (users, "date_joined")):
        query = sql.SQL("SELECT id, {key} FROM {table} ORDER BY id LIMIT 1000").format(
            key=sql.Identifier(key), table=sql.Identifier(table)
        )
        if set(old.execute(query).fetchall()) & set(restored.execute(query).fetchall()):
            return True
    return False


def _token_table() -> str:
    return ApiToken._meta.db_table


def _user_table() -> str:
    return get_user_model()._meta.db_table


def _tokens(old, restored, same: bool) -> list[str]:
    """Tokens revoked (or, in the same installation, deleted) since the snapshot: revoked in the
    restored database too."""
    table = sql.Identifier(_token_table())
    revoked = old.execute(
        sql.SQL("SELECT secret_hash, revoked_at FROM {} WHERE revoked_at IS NOT NULL").format(table)
    ).fetchall()
    lines = []
    revoke = sql.SQL(
        "UPDATE {t} SET revoked_at = %s WHERE secret_hash = %s AND revoked_at IS NULL "
        "RETURNING name, prefix"
    ).format(t=table)
    for digest, at in revoked:
        for name, prefix in restored.execute(revoke, [at, digest]).fetchall():
            lines.append(f"token {name!r} ({prefix}…) revoked")
    if same:
        kept = {row[0] for row in old.execute(sql.SQL("SELECT secret_hash FROM {}").format(table))}
        live = restored.execute(
            sql.SQL("SELECT secret_hash, name, prefix FROM {} WHERE revoked_at IS NULL").format(
                table
            )
        ).fetchall()
        gone = [(digest, name, prefix) for digest, name, prefix in live if digest not in kept]
        for digest, name, prefix in gone:
            restored.execute(
                sql.SQL("UPDATE {} SET revoked_at = now() WHERE secret_hash = %s").format(table),
                [digest],
            )
            lines.append(f"token {name!r} ({prefix}…) deleted: revoked here")
    return lines


def _accounts(old, restored, same: bool) -> list[str]:
    """Accounts deactivated, stripped of staff or superuser, given a new password or (in the
    same installation) deleted since the snapshot: the same in the restored database."""
    table = sql.Identifier(_user_table())
    query = sql.SQL(
        "SELECT id, username, date_joined, is_active, is_staff, is_superuser, password "
        "FROM {} ORDER BY id"
    ).format(table)
    then = {row[:3]: row[3:] for row in restored.execute(query).fetchall()}
    now = {row[:3]: row[3:] for row in old.execute(query).fetchall()}
    lines = []
    for key, (active, staff, superuser, password) in sorted(then.items()):
        pk, username = key[0], key[1]
        if key not in now:
            if same and active:
                restored.execute(
                    sql.SQL("UPDATE {} SET is_active = false WHERE id = %s").format(table), [pk]
                )
                lines.append(f"account {username} deleted: inactive here")
            continue
        still_active, still_staff, still_superuser, new_password = now[key]
        taken = [
            name
            for name, was, is_now in (
                ("active", active, still_active),
                ("staff", staff, still_staff),
                ("superuser", superuser, still_superuser),
            )
            if was and not is_now
        ]
        changed = new_password != password
        if not taken and not changed:
            continue
        restored.execute(
            sql.SQL(
                "UPDATE {} SET is_active = is_active AND %s, is_staff = is_staff AND %s, "
                "is_superuser = is_superuser AND %s, password = %s WHERE id = %s"
            ).format(table),
            [still_active, still_staff, still_superuser, new_password, pk],
        )
        said = [
            {"active": "deactivated", "staff": "no longer staff"}.get(n, "no longer superuser")
            for n in taken
        ] + (["with a new password"] if changed else [])
        lines.append(f"account {username} {', '.join(said)}")
    return lines


def _move_generation(old, restored) -> int:
    """Set the restored database's search generation past both its own and the old one's."""
    theirs = old.execute(CURRENT).fetchone()[0] if _has_table(old, SEQUENCE) else 0
    ours = restored.execute(CURRENT).fetchone()[0]
    moved = max(theirs, ours) + 1
    restored.execute("SELECT setval(%s, %s)", [SEQUENCE, moved])
    return moved
