"""Kernel step for full-text search: an entry's weighted vector (title A, tags and path B,
body C), computed by the save's own statement or refreshed from the stored row by a reindex."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.db.models.expressions import RawSQL

from knowledge.models import Entry


def _words_of_place(entry: Entry) -> str:
    path = entry.subtopic.path.replace("/", " ").replace("-", " ") if entry.subtopic_id else ""
    return " ".join([*entry.tags, path])


def index_text(entry: Entry) -> None:
    """Refresh the weighted full-text vector of a loaded entry (a reindex, a restore): the one
    a save computes in its own statement."""
    Entry.objects.filter(pk=entry.pk).update(search_vector=text_vector(entry))


# Title A, tags and path B, body C, as SearchVector(...) + ... compiles it, written once:
# compiling the three expressions cost every write ~0.25 ms of CPU.
_TEXT_VECTOR_SQL = (
    "setweight(to_tsvector(%s::regconfig, COALESCE(%s, '')), 'A') || "
    "setweight(to_tsvector(%s::regconfig, COALESCE(%s, '')), 'B') || "
    "setweight(to_tsvector(%s::regconfig, COALESCE(%s, '')), 'C')"
)


def text_vector(entry: Entry) -> RawSQL:
    """The vector index_text makes, from the instance's values: the save's INSERT or UPDATE
    computes it, so a write needs no second statement for it."""
    config = settings.CAIRN_SEARCH_CONFIG
    return RawSQL(
        _TEXT_VECTOR_SQL,
        [config, entry.title, config, _words_of_place(entry), config, entry.body],
        output_field=SearchVectorField(),
    )
