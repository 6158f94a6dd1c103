"""From fused ids to the hits a caller reads: entry metadata and a snippet for each.

The hits' entries (and the passages matched by meaning alone) are read by one plain statement
into HitRow: building Entry models with select_related cost more CPU than the search's SQL.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.conf import settings

from knowledge.db import fetch_together
from knowledge.db.search import hit_rows
from knowledge.models import body_lines
from knowledge.search.snippets import highlight, lexemes_of
from knowledge.search.types import Rankings, SearchHit

SNIPPET_CHARS = 300
HEADLINE_OPTIONS = (
    'MaxWords=30, MinWords=12, MaxFragments=2, FragmentDelimiter=" … ", StartSel="**", StopSel="**"'
)


@dataclass(frozen=True)
class HitRow:
    """What a hit shows of an entry, read without building the model."""

    pk: int
    short_id: str
    title: str
    slug: str
    body: str
    kind: str
    tags: list[str]
    status: str
    updated_at: dt.datetime
    project_slug: str
    subtopic_path: str | None
    headline: str | None = None  # ts_headline, when CAIRN_SEARCH_SNIPPETS=headline
    chunk_text: str = ""  # the passage its vector matched (hits found by meaning alone)

    @classmethod
    def of(cls, entry) -> HitRow:
        """The same, from an Entry loaded with its project and subtopic (the filter listing)."""
        return cls(
            pk=entry.pk,
            short_id=entry.short_id,
            title=entry.title,
            slug=entry.slug,
            body=entry.body,
            kind=entry.kind,
            tags=entry.tags,
            status=entry.status,
            updated_at=entry.updated_at,
            project_slug=entry.project.slug,
            subtopic_path=entry.subtopic.path if entry.subtopic_id else None,
        )

    @property
    def path(self) -> str:  # as Entry.path
        project, subtopic = self.project_slug, self.subtopic_path
        return f"{project}/{subtopic}" if subtopic else project

    def hit(self, *, score: float, snippet: str, matched: list[str]) -> SearchHit:
        return SearchHit(
            id=self.pk,
            short_id=self.short_id,
            title=self.title,
            project=self.project_slug,
            path=self.path,
            address=f"memory://{self.path}/{self.slug}",  # as Entry.permalink
            kind=self.kind,
            tags=list(self.tags),
            status=self.status,
            updated=self.updated_at,
            score=score,
            snippet=snippet,
            matched=matched,
            chars=len(self.body),
            lines=body_lines(self.body),
        )


def _rows(
    ids: list[int],
    *,
    chunk_ids: list[int] = (),
    headline: str | None = None,
    headed=(),
    alongside: tuple[str, list] | None = None,
) -> tuple[dict[int, HitRow], list[tuple]]:
    """Entries `ids` as HitRows; `chunk_ids` their matched passages' texts; `headline` a
    tsquery for ts_headline snippets of the entries `headed`. `alongside`: another statement
    sent in the same round trip, and its rows."""
    statements = []
    if ids:
        statements.append(
            hit_rows(
                list(ids),
                chunk_ids=list(chunk_ids),
                headline=headline,
                headed=list(headed),
                config=settings.CAIRN_SEARCH_CONFIG,
                options=HEADLINE_OPTIONS,
            )
        )
    if alongside is not None:
        statements.append(alongside)
    if not statements:
        return {}, []
    results = fetch_together(statements)
    loaded = {row[0]: HitRow(*row) for row in results[0]} if ids else {}
    return loaded, results[-1] if alongside is not None else []


def preload(ids: list[int], rank_tsquery: str | None) -> tuple[dict[int, HitRow], dict[int, str]]:
    """Entries `ids` with their snippets, loaded ahead (while the query is still embedded)."""
    lexemes = lexemes_of(rank_tsquery)
    loaded, _ = _rows(ids)
    return loaded, {pk: highlight(row.body, lexemes) for pk, row in loaded.items()}


def load_hits(
    fused: list[tuple[int, float]], found: Rankings, *, alongside: tuple[str, list] | None = None
) -> tuple[list[SearchHit], list[tuple]]:
    """The hits of the fused ids, best first, and the rows of `alongside` (another statement,
    read in the same round trip)."""
    if not fused:
        return [], []
    ids = [entry_id for entry_id, _ in fused]
    missing = [entry_id for entry_id in ids if entry_id not in found.loaded]
    text_ids, semantic_ids = set(found.text), set(found.semantic)
    headline_sql = settings.CAIRN_SEARCH_SNIPPETS == "headline"
    headed = text_ids & set(ids) if headline_sql and found.rank_tsquery else set()
    lexemes = [] if headline_sql else lexemes_of(found.rank_tsquery)
    # ts_headline reads the whole body: only for hits the full text actually matched.
    chunk_ids = [found.chunks[i] for i in missing if i in found.chunks and i not in text_ids]
    by_id = dict(found.loaded)
    rows, alongside_rows = _rows(
        missing,
        chunk_ids=chunk_ids,
        headline=found.rank_tsquery if headed else None,
        headed=headed,
        alongside=alongside,
    )
    by_id.update(rows)
    hits = []
    for entry_id, score in fused:
        entry = by_id.get(entry_id)
        if entry is None:  # deleted between ranking and loading
            continue
        matched = [
            m for m, ids_ in (("text", text_ids), ("semantic", semantic_ids)) if entry_id in ids_
        ]
        hits.append(
            entry.hit(
                score=round(score, 6),
                snippet=_snippet(
                    entry,
                    found.highlights.get(entry_id)
                    if entry_id in found.highlights
                    else highlight(entry.body, lexemes)
                    if entry_id in text_ids
                    else "",
                ),
                matched=matched,
            )
        )
    return hits, alongside_rows


def plain_snippet(body: str) -> str:
    """The start of a body, as a snippet when no words were searched for."""
    return _shorten(body)


def _shorten(text: str, limit: int = SNIPPET_CHARS) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"


def _snippet(entry: HitRow, highlighted: str = "") -> str:
    headline = highlighted or entry.headline or ""
    if "**" in headline:
        return _shorten(headline)
    return _shorten(entry.chunk_text or headline or entry.body)
