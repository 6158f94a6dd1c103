"""From fused ids to the hits a caller reads: entry metadata and a snippet for each."""

from __future__ import annotations

from django.conf import settings
from django.db.models.expressions import RawSQL

from knowledge.models import Entry, EntryChunk
from knowledge.search.snippets import highlight, lexemes_of
from knowledge.search.types import Rankings, SearchHit

SNIPPET_CHARS = 300
HEADLINE_OPTIONS = (
    'MaxWords=30, MinWords=12, MaxFragments=2, FragmentDelimiter=" … ", StartSel="**", StopSel="**"'
)


def preload(ids: list[int], rank_tsquery: str | None) -> tuple[dict[int, Entry], dict[int, str]]:
    """Entries `ids` with their snippets, loaded ahead (while the query is still embedded)."""
    lexemes = lexemes_of(rank_tsquery)
    loaded, highlights = {}, {}
    for entry in Entry.objects.filter(pk__in=ids).select_related("project", "subtopic"):
        loaded[entry.pk] = entry
        highlights[entry.pk] = highlight(entry.body, lexemes)
    return loaded, highlights


def load_hits(fused: list[tuple[int, float]], found: Rankings) -> list[SearchHit]:
    if not fused:
        return []
    ids = [entry_id for entry_id, _ in fused]
    missing = [entry_id for entry_id in ids if entry_id not in found.loaded]
    entries = Entry.objects.filter(pk__in=missing).select_related("project", "subtopic")
    text_ids, semantic_ids = set(found.text), set(found.semantic)
    headline_sql = settings.CAIRN_SEARCH_SNIPPETS == "headline"
    if headline_sql and found.rank_tsquery and text_ids & set(ids):
        # ts_headline reads the whole body: only for hits the full text actually matched.
        entries = entries.annotate(
            headline=RawSQL(
                "CASE WHEN knowledge_entry.id = ANY(%s) THEN "
                "ts_headline(%s::regconfig, knowledge_entry.body, %s::tsquery, %s) END",
                [
                    list(text_ids & set(ids)),
                    settings.CAIRN_SEARCH_CONFIG,
                    found.rank_tsquery,
                    HEADLINE_OPTIONS,
                ],
            )
        )
    lexemes = [] if headline_sql else lexemes_of(found.rank_tsquery)
    chunk_ids = [found.chunks[i] for i in ids if i in found.chunks and i not in text_ids]
    chunk_texts = (
        dict(EntryChunk.objects.filter(pk__in=chunk_ids).values_list("entry_id", "text"))
        if chunk_ids
        else {}
    )
    by_id = dict(found.loaded)
    if missing:
        by_id.update((entry.pk, entry) for entry in entries)
    hits = []
    for entry_id, score in fused:
        entry = by_id.get(entry_id)
        if entry is None:  # deleted between ranking and loading
            continue
        matched = [
            m for m, ids_ in (("text", text_ids), ("semantic", semantic_ids)) if entry_id in ids_
        ]
        hits.append(
            SearchHit.of(
                entry,
                score=round(score, 6),
                snippet=_snippet(
                    entry,
                    chunk_texts.get(entry_id, ""),
                    found.highlights.get(entry_id)
                    if entry_id in found.highlights
                    else highlight(entry.body, lexemes)
                    if entry_id in text_ids
                    else "",
                ),
                matched=matched,
            )
        )
    return hits


def plain_snippet(body: str) -> str:
    """The start of a body, as a snippet when no words were searched for."""
    return _shorten(body)


def _shorten(text: str, limit: int = SNIPPET_CHARS) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"


def _snippet(entry: Entry, chunk_text: str, highlighted: str = "") -> str:
    headline = highlighted or getattr(entry, "headline", None) or ""
    if "**" in headline:
        return _shorten(headline)
    return _shorten(chunk_text or headline or entry.body)
