"""Which run a revision belongs to: the token that wrote it, the agent label, and the run id.

A client may mark its writes with a run id (the X-Cairn-Run header: knowledge.runs); a service
that writes as one unit (an undo) gives its own. Otherwise a token's write continues the run of
the token's latest revision when that is a run Cairn gave and is at most CAIRN_RUN_GAP_MINUTES
old, and starts a new one when not: one indexed read of the token's latest revision
(entry_revision_token_latest), decided when the write is made, so a run keeps its rows whatever
the setting later says. A person's own edits (no token, no run id) belong to no run.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.db.revisions import token_latest
from knowledge.runs import GENERATED


def new_run_id(kind: str = "") -> str:
    """A run id no client can send (knowledge.runs.client_run refuses the mark)."""
    return f"{GENERATED}{kind}{secrets.token_hex(6)}"


def run_columns(actor: Actor | None) -> dict:
    """The revision row's token, agent and run columns for a write by `actor`."""
    if actor is None:
        return {}
    run = actor.run
    if not run and actor.token_id is not None:
        run = _continued(actor.token_id) or new_run_id()
    return {
        "history_token_id": actor.token_id,
        "history_agent": actor.label[:120],
        "history_run": run[:80],
    }


def _continued(token_id: int) -> str | None:
    row = token_latest(token_id)
    if row is None or not row[0].startswith(GENERATED) or row[0].startswith(f"{GENERATED}undo"):
        return None
    gap = timedelta(minutes=settings.CAIRN_RUN_GAP_MINUTES)
    return row[0] if timezone.now() - row[1] <= gap else None
