"""An entry save's revision row, written by one plain INSERT instead of django-simple-history's
post_save (which builds and saves a historical model instance through the ORM: about a tenth of
a write's CPU, bench/write_profile.py). The row is the one simple-history writes: every tracked
column as saved, who, why, when and the kind of change; the columns the history adds of its own
(git_commit, sources) take their defaults. And the commit hashes the mirror records on them,
one statement per batch; and the read that decides which run a token's write joins."""

from __future__ import annotations

from functools import cache

from django.db import connection, transaction
from django.utils import timezone

from knowledge.models import Entry, HistoricalEntry

_WHO = {"history_type", "history_user_id", "history_change_reason", "history_date",
        "history_token_id", "history_agent", "history_run"}  # fmt: skip


@cache
def _insert() -> tuple[str, tuple]:
    tracked = {f.attname for f in Entry._meta.concrete_fields}
    fields = [f for f in HistoricalEntry._meta.concrete_fields if not f.primary_key]
    for f in fields:  # a column that is neither the entry's nor ours must say what it holds
        assert f.attname in tracked or f.attname in _WHO or f.has_default() or f.null, f
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    slots = ", ".join(["%s"] * len(fields))
    sql = f"INSERT INTO {HistoricalEntry._meta.db_table} ({columns}) VALUES ({slots})"
    return sql, tuple((f, f.attname in tracked) for f in fields)


def save_revision(
    entry: Entry, *, created: bool, user_id: int | None, reason: str | None, runs: dict
) -> None:
    """The revision row of the save just made: who (`user_id`) and why (`reason`, as the row
    keeps it: knowledge/services/_kernel/checks.py change_reason), and `runs`: its token, agent
    and run columns (knowledge/services/_kernel/runs.py run_columns)."""
    sql, fields = _insert()
    who = {
        "history_type": "+" if created else "~",
        "history_user_id": user_id,
        "history_change_reason": reason,
        "history_date": timezone.now(),
        **runs,
    }
    values = []
    for field, tracked in fields:
        if tracked:
            value = getattr(entry, field.attname)
        elif field.attname in who:
            value = who[field.attname]
        else:
            value = field.get_default()
        values.append(field.get_db_prep_save(value, connection))
    with connection.cursor() as cursor:
        cursor.execute(sql, values)


_TOKEN_LATEST = (
    f"SELECT history_run, history_date FROM {HistoricalEntry._meta.db_table} "
    "WHERE history_token_id = %s ORDER BY history_id DESC LIMIT 1"
)


def token_latest(token_id: int) -> tuple[str, object] | None:
    """(run, date) of the token's latest revision, or None: what each of its writes reads to
    know whether it continues the token's run. One index probe (entry_revision_token_latest);
    a statement of its own, as the revision insert it precedes (about a tenth of the ORM's CPU
    for this one-row read, on every write a token makes)."""
    with connection.cursor() as cursor:
        cursor.execute(_TOKEN_LATEST, [token_id])
        return cursor.fetchone()


def record_commits(shas: dict[int, str]) -> None:
    """Store commit hashes on their revisions (revision id -> sha); only rows still pending
    are touched. One statement for the batch, where the ORM would send one per revision."""
    if not shas:
        return
    ids, values = list(shas), [shas[i] for i in shas]
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(
            f"UPDATE {HistoricalEntry._meta.db_table} AS h SET git_commit = v.sha "
            "FROM unnest(%s::int[], %s::text[]) AS v(id, sha) "
            "WHERE h.history_id = v.id AND h.git_commit = ''",
            [ids, values],
        )
