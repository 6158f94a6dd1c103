"""The values search passes between its steps and returns: the rankings before fusion and the
hits a caller reads (their own module, so engine and hits need not import each other)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, fields

from knowledge.search.freshness import Pending


@dataclass
class Rankings:
    """The two candidate lists before fusion (used by the benchmarks to tune the weights)."""

    text: list[int] = field(default_factory=list)
    semantic: list[int] = field(default_factory=list)
    chunks: dict[int, int] = field(default_factory=dict)  # entry id -> best chunk id
    text_scores: dict[int, float] = field(default_factory=dict)  # entry id -> BM25-like rank
    # entry id -> the idf summed over the query's lexemes it holds (fusion.floored)
    text_held: dict[int, float] = field(default_factory=dict)
    # The fused list before the relevance floor, and the hits the floor left out (first_stage).
    unfloored: list[tuple[int, float]] = field(default_factory=list)
    below_floor: set[int] = field(default_factory=set)
    semantic_scores: dict[int, float] = field(default_factory=dict)  # entry id -> 1 - distance
    # entry id -> the similarity of each of its chunks that the vector SQL read, best first
    similarities: dict[int, list[float]] = field(default_factory=dict)
    idf: dict[str, float] = field(default_factory=dict)  # the query's lexemes -> their idf
    rank_tsquery: str | None = None
    every_tsquery: str | None = None  # all the query's lexemes: a hit that holds every word
    # Entries of the text ranking's top, loaded (with their snippets) while the query was
    # still being embedded, so the hits need not wait for them afterwards.
    loaded: dict = field(default_factory=dict)  # entry id -> hits.HitRow
    highlights: dict[int, str] = field(default_factory=dict)
    # Entries of the searched set still waiting for vectors (knowledge/search/freshness.py).
    pending: Pending | None = None
    # Hybrid search ran on words alone (the model failed or is switched off): not kept.
    degraded: bool = False
    stamp: tuple | None = None  # result_cache.stamp of the statement sent first, if any


@dataclass
class Signals:
    """How a hit was found, per signal (knowledge/search/explain.py): each list's place (from 1)
    and score, None where that list did not find it; what each added to the fused score."""

    words_rank: int | None = None
    words_score: float | None = None  # BM25-like: idf-weighted ts_rank, title > tags > body
    meaning_rank: int | None = None
    similarity: float | None = None  # cosine similarity of its best passage to the query
    passage: int | None = None  # that passage (chunk), from 1
    words_part: float = 0.0
    meaning_part: float = 0.0
    title_words: list[str] = field(default_factory=list)  # query words in the title
    observation: str = ""  # "[category] content": the observation the words matched best
    category: bool = False  # a query word names that observation's category
    searched: list[str] = field(default_factory=list)  # the lists that ran: words, meaning
    # Its place before the second stage (knowledge/search/second_stage.py) moved it; None:
    # the stage did not run or left it where it was.
    first_place: int | None = None
    # A "when" question: the date it shows (written near the matched words, else the entry's).
    date_used: str = ""


@dataclass
class SearchHit:
    id: int
    short_id: str
    title: str
    project: str
    path: str
    address: str  # memory://project/subtopic/slug: a reference every surface accepts
    kind: str
    tags: list[str]
    status: str
    updated: dt.datetime
    score: float
    snippet: str
    matched: list[str] = field(default_factory=list)  # "text" and/or "semantic"
    # Where it matched: "observation [category]", "passage 2", "" (the snippet's words).
    matched_in: str = ""
    chars: int = 0  # the body's size
    lines: int = 0
    signals: Signals | None = None

    def as_dict(self) -> dict:
        """The hit as REST and MCP answer it: plain values, `updated` in ISO form. (As
        dataclasses.asdict gives, field by field: its recursive deep copy cost more CPU than
        the rest of a hit's rendering.)"""
        out = {name: getattr(self, name) for name in _HIT_FIELDS}
        out["tags"], out["matched"] = list(self.tags), list(self.matched)
        out["updated"] = self.updated.isoformat()
        if self.signals is not None:
            out["signals"] = _signals_dict(self.signals)
        return out


class SearchResults(list[SearchHit]):
    """The hits, best first, and one short note for the reader: entries of the searched set
    whose vectors are not ready yet are found by their words only ("" when none wait)."""

    note: str = ""
    # False when no hit holds a word of the query (all found by meaning); None when the words
    # were not searched (mode semantic, no query words).
    words_matched: bool | None = None
    # Hits that hold only the query's common words, not close in meaning, left out of the
    # `limit` asked for by the relevance floor (fusion.floored); 0 when the floor was off.
    left_out: int = 0
    # False for an answer a repeated search must not reuse (knowledge/search/result_cache.py);
    # the generation and visible projects it was computed for, when its search read them.
    cacheable: bool = True
    stamp: tuple | None = None


_HIT_FIELDS = tuple(f.name for f in fields(SearchHit))
_SIGNAL_FIELDS = tuple(f.name for f in fields(Signals))
_SIGNAL_LISTS = tuple(f.name for f in fields(Signals) if f.type.startswith("list"))


def _signals_dict(signals: Signals) -> dict:
    out = {name: getattr(signals, name) for name in _SIGNAL_FIELDS}
    for name in _SIGNAL_LISTS:
        out[name] = list(out[name])
    return out
