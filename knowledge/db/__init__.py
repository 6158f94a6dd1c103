"""The data-access floor: the one place in the apps where SQL text lives
(tests/architecture/test_sql.py).

- compiled.py: querysets compiled once per shape and bound per call (`compile_once`), for the
  statements every write and search sends, whose building cost more CPU than running them
  (tokens.py: a cached token's recheck; knowledge.access: the access rule; a report's blame);
- rows.py: rows → model instances as the ORM loads them (`from_row`, `columns`);
- round_trip.py: several statements in one round trip (`fetch_together`);
- lookups.py: `field__any=[…]`, a list as one array parameter;
- and the statements the ORM cannot say or that every write and search sends: expressions (the
  embedding key), text (an entry's weighted vector), graph (facts closed and added in one
  statement), revisions (the revision row, commit hashes), write_lookups (a write report's
  lookups), search (word statistics, exact
  distances, the HNSW scan, the rank, hit rows, the query's constraints), generation (the search
  answers' generation), locks (advisory locks and claims), sequences. Each written statement
  is held to its ORM form by tests/knowledge/db/test_statements.py.

It stands on the models alone: a statement that embeds the projects an actor may see takes
them as an argument (knowledge.access compiles the rule).
"""

from django.db import connection

from knowledge.db.compiled import Bound, Compiled, Loaded, Stand, StandInLost, compile_once
from knowledge.db.round_trip import fetch_together
from knowledge.db.rows import columns, from_row


def ping() -> None:
    """One round trip to the database (raises when it does not answer)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


__all__ = [
    "Bound",
    "Compiled",
    "Loaded",
    "Stand",
    "StandInLost",
    "columns",
    "compile_once",
    "fetch_together",
    "from_row",
    "ping",
]
