"""How each hit was found, and a plain answer when no hit holds the query's words.

Search fuses two lists (knowledge/search/fusion.py): entries holding the query's words (full
text) and entries nearest in meaning (vectors). From the fused list alone a reader cannot tell
an entry that mentions their words from one about something merely similar: an agent searching
"job candidates" got ten loosely related entries and nothing saying that none mentions
candidates. So each hit carries its place and score in both lists, what each added to the fused
score, and what matched (an observation, a passage); the results say first when no hit holds a
word of the query.
"""

from __future__ import annotations

from knowledge.db.search import fetch_rows, hit_matches
from knowledge.search.snippets import highlight, lexemes_of, marked, words_in
from knowledge.search.types import Rankings, SearchHit, SearchResults, Signals

# Hits whose signals a reader sees in explain mode: the ranking questions are about the top.
EXPLAIN_TOP = 5
OBSERVATION_CHARS = 300


def annotate(
    hits: SearchResults,
    found: Rankings,
    parts: tuple[dict[int, float], dict[int, float]],
    *,
    searched: list[str],
    matched: list[tuple] | None = None,
) -> None:
    """Give each hit its Signals and `matched_in`; show the observation the words matched in
    the snippet when it holds as many query words as the body's window. One small read: the
    hits' matching observations and the passages their vectors matched (`matched`: the rows of
    matches_statement, when the caller read them with the hits)."""
    words_rank = {pk: rank for rank, pk in enumerate(found.text, start=1)}
    meaning_rank = {pk: rank for rank, pk in enumerate(found.semantic, start=1)}
    lexemes = lexemes_of(found.rank_tsquery)
    if matched is None:
        statement = matches_statement([h.id for h in hits], found)
        matched = fetch_rows(statement) if statement else []
    observations, passages, every = _matches(matched)
    words_part, meaning_part = parts
    for hit in hits:
        signals = Signals(
            words_rank=words_rank.get(hit.id),
            words_score=_rounded(found.text_scores.get(hit.id)),
            meaning_rank=meaning_rank.get(hit.id),
            similarity=_rounded(found.semantic_scores.get(hit.id)),
            passage=passages[hit.id][0] if hit.id in passages else None,
            words_part=round(words_part.get(hit.id, 0.0), 6),
            meaning_part=round(meaning_part.get(hit.id, 0.0), 6),
            title_words=words_in(hit.title, lexemes),
            searched=searched,
        )
        if hit.id in observations:
            category, content = observations[hit.id]
            signals.observation = f"[{category}] {content}"
            signals.category = bool(words_in(category, lexemes))
            shown = f"[{highlight(category, lexemes) or category}] " + (
                highlight(content, lexemes) or _shorten(content)
            )
            if len(marked(shown)) >= len(marked(hit.snippet)):
                hit.snippet = shown
            hit.matched_in = f"observation [{category}]"
        elif signals.words_rank is None and passages.get(hit.id, (0, 1))[1] > 1:
            hit.matched_in = "passage {} of {}".format(*passages[hit.id])
        hit.signals = signals
    # A hit that holds one of three words is no match of the question: only one holding them all.
    hits.words_matched = any(h.id in every for h in hits) if "words" in searched else None


def no_words_note(query: str, results: SearchResults) -> str:
    """'No entry contains …; n hold some of its words, m related by meaning.' when no hit holds
    every word of the query (and its phrases), '' otherwise: the first thing a reader of such an
    answer needs to know."""
    if results.words_matched is not False or not results:
        return ""
    some = sum(1 for h in results if h.signals is not None and h.signals.words_rank is not None)
    parts = [f"{some} hold some of its words"] if some else []
    if len(results) > some:
        parts.append(f"{len(results) - some} related by meaning")
    return f"No entry contains {' '.join(query.split())!r}; {', '.join(parts)}."


def left_out_note(results: SearchResults) -> str:
    """'n weaker matches left out …' when the relevance floor cut hits holding only the query's
    common words (fusion.floored), '' otherwise: the reader learns they exist and how to ask."""
    n = results.left_out
    if not n:
        return ""
    match = "match" if n == 1 else "matches"
    return (
        f"{n} weaker {match} left out (only common words of the query, or further in "
        "meaning); weak=true lists them."
    )


def explain_parts(hit: SearchHit) -> list[tuple[str, str]]:
    """Each signal's contribution to a hit's place, as (label, value) pairs to show."""
    s = hit.signals
    if s is None:  # listed by the filters alone: nothing was ranked
        return [("order", "newest first (no query words)")]
    rows = []
    if s.words_rank is not None:
        rows.append(("words", f"#{s.words_rank}, score {s.words_score:g}, adds {s.words_part:.3g}"))
    else:
        rows.append(("words", "none of the query's words" if "words" in s.searched else "off"))
    if s.meaning_rank is not None:
        passage = f" (passage {s.passage})" if s.passage else ""
        similarity = f"similarity {s.similarity:g}{passage}"
        rows.append(("meaning", f"#{s.meaning_rank}, {similarity}, adds {s.meaning_part:.3g}"))
    else:
        rows.append(("meaning", "not among the nearest" if "meaning" in s.searched else "off"))
    rows.append(
        (
            "title",
            f"holds {', '.join(s.title_words)} (title words weigh most)"
            if s.title_words
            else "none of the query's words",
        )
    )
    if s.observation:
        named = " (its category is a query word)" if s.category else ""
        rows.append(("observation", _shorten(s.observation, 120) + named))
    rows.append(("recency", f"not weighed; updated {hit.updated:%Y-%m-%d}"))
    if s.date_used:
        rows.append(("date", f"{s.date_used} (a question about time)"))
    if s.first_place is not None:
        rows.append(("second stage", f"moved it from #{s.first_place} (learned weights)"))
    lead = abs(hit.score - (s.words_part + s.meaning_part)) > 1e-5
    rows.append(("fused", f"{hit.score:.3g}" + (" (put first: the words' clear leader)" * lead)))
    return rows


def matches_statement(ids: list[int], found: Rankings) -> tuple[str, list] | None:
    """The statement reading what annotate shows of hits `ids`: their observations that hold
    the words, and the places of the passages their vectors matched (None: nothing to read)."""
    tsquery = found.rank_tsquery
    in_text = set(found.text)
    word_ids = [pk for pk in ids if pk in in_text] if tsquery else []
    chunk_ids = [found.chunks[pk] for pk in ids if pk in found.chunks]
    if not (word_ids or chunk_ids):
        return None
    return hit_matches(word_ids, tsquery or "", chunk_ids, found.every_tsquery or "")


def _matches(
    rows: list[tuple],
) -> tuple[dict[int, tuple[str, str]], dict[int, tuple[int, int]], set[int]]:
    """(entry id -> (category, content) of its observation best matching the words,
    entry id -> (place from 1, count) of the passage its vector matched, the entries that hold
    every word of the query)."""
    observations: dict[int, tuple[str, str]] = {}
    passages: dict[int, tuple[int, int]] = {}
    every: set[int] = set()
    for kind, entry_id, category, content, place, count in rows:
        if kind == "o":
            observations[entry_id] = (category, content)
        elif kind == "a":
            every.add(entry_id)
        else:
            passages[entry_id] = (place, count)
    return observations, passages, every


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _shorten(text: str, limit: int = OBSERVATION_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
