"""Kernel step for full-text search: an entry's weighted vector (title A, tags and path B,
body C), computed by the save's own statement or refreshed from the stored row by a reindex."""

from __future__ import annotations

from django.conf import settings

from knowledge.db.text import weighted_vector
from knowledge.models import Entry


def _words_of_place(entry: Entry) -> str:
    path = entry.subtopic.path.replace("/", " ").replace("-", " ") if entry.subtopic_id else ""
    return " ".join([*entry.tags, path])


def index_text(entry: Entry) -> None:
    """Refresh the weighted full-text vector of a loaded entry (a reindex, a restore): the one
    a save computes in its own statement."""
    Entry.objects.filter(pk=entry.pk).update(search_vector=text_vector(entry))


def text_vector(entry: Entry):
    """The vector index_text makes, from the instance's values: the save's INSERT or UPDATE
    computes it, so a write needs no second statement for it."""
    return weighted_vector(
        settings.CAIRN_SEARCH_CONFIG, entry.title, _words_of_place(entry), entry.body
    )
