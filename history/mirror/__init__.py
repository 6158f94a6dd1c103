"""The database side of the git mirror: which revisions are pending, and committing them in order.

A revision (a HistoricalEntry row) is pending while its `git_commit` is empty. `drain()` commits
pending revisions in history_id order under a Postgres advisory lock (so it is safe across
workers and hosts), publishes the branch, then records the commit hashes. A crash between the
two steps is repaired on the next drain from the `Cairn-Revision` trailers (see `_reconcile`),
so every revision ends up in exactly one commit.

The mirror never stops for one revision: a revision that cannot be loaded, rendered or committed
is parked (history.models.ParkedRevision, with its error) and the drain goes on. The entry's next
revision commits the parked ones first, in order (as a note commit when one still cannot be
rendered: its text stays in the database history); `retry()` puts parked revisions back in line.
"""

from history.mirror.drain import DrainResult, drain
from history.mirror.push import PUSHED_MARKER, push
from history.mirror.queue import (
    LOCK_KEY,
    NOT_THE_REVISION,
    advisory_lock,
    committer,
    describe,
    open_mirror,
    park,
    parked,
    pending,
    record_commits,
    retry,
)
from history.mirror.render import (
    Names,
    Prepared,
    author_of,
    commit_prepared,
    commit_revision,
    note_revision,
    render_revision,
    sources_by_entry,
    state_of,
)

__all__ = [
    "LOCK_KEY", "NOT_THE_REVISION", "PUSHED_MARKER", "DrainResult", "Names",
    "Prepared", "advisory_lock", "author_of", "commit_prepared", "commit_revision", "committer",
    "describe", "drain", "note_revision", "open_mirror", "park", "parked", "pending", "push",
    "record_commits", "render_revision", "retry", "sources_by_entry", "state_of",
]  # fmt: skip
