"""The admin's index opens on what needs a person: the latest changes, the open items, the
revisions the git mirror parked and the embedding backlog, above the stock list of models.

Apps that build on knowledge add their parts through the index's context under `cairn` (history
adds the mirror's state: history/admin/dashboard.py), so this module imports none of them."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from knowledge.admin.common import actor_for
from knowledge.models import EntryStatus
from knowledge.selectors.health import embedding_state
from knowledge.selectors.listings import entry_list

SHOWN = 8


def dashboard(request: HttpRequest) -> dict:
    """What the index shows this person (entries scoped like every read; the backlogs are
    site-wide counts, no names)."""
    actor = actor_for(request)
    entries = entry_list(actor)
    return {
        "recent": list(entries[:SHOWN]),
        "open": list(entries.filter(status=EntryStatus.OPEN)[:SHOWN]),
        "embedding": embedding_state(),
    }


_stock_index = admin.site.index


def index(request: HttpRequest, extra_context=None):
    extra = extra_context or {}
    return _stock_index(
        request, {**extra, "cairn": {**dashboard(request), **extra.get("cairn", {})}}
    )


admin.site.index = index  # the default site's own view, with the dashboard in its context
