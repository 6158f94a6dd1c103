"""Snippets from text already at hand: the window of an entry's body with the most query words,
the words in **bold**. Postgres ts_headline gave the same shape but re-parsed every hit's whole
body inside the query (a few milliseconds per search); this reads the body the hit loads anyway.
"""

from __future__ import annotations

import functools
import re
from itertools import islice

_LITERAL = re.compile(r"'((?:[^']|'')*)'")
WINDOW_CHARS = 200
# A body may hold 1 MB of the searched word: every match of it once took 1.5 s a hit to sort
# through. The snippet comes from the body's first SCAN_CHARS, from its first MAX_MATCHES
# matches, and is cut within SLACK_CHARS of the window when no space comes sooner.
SCAN_CHARS = 100_000
MAX_MATCHES = 500
SLACK_CHARS = 40


def lexemes_of(tsquery: str | None) -> list[str]:
    """The lexemes of a tsquery literal like `'restart' | 'worker'`."""
    return [m.replace("''", "'") for m in _LITERAL.findall(tsquery or "")]


def _pattern(lexemes: list[str]) -> re.Pattern:
    return _compiled(tuple(lexemes))


@functools.lru_cache(maxsize=256)  # a search highlights each hit with the same lexemes
def _compiled(lexemes: tuple[str, ...]) -> re.Pattern:
    parts = []
    for lex in sorted(set(lexemes), key=len, reverse=True):
        if len(lex) < 3:
            parts.append(re.escape(lex) + r"\b")  # too short to match as a prefix
        elif len(lex) >= 4 and lex.endswith("i"):
            # The English stemmer turns a final y into i (happy -> happi, story -> stori).
            parts.append(re.escape(lex[:-1]) + r"[iy]\w*")
        else:
            parts.append(re.escape(lex) + r"\w*")
    return re.compile(r"\b(?:" + "|".join(parts) + ")", re.IGNORECASE)


def highlight(body: str, lexemes: list[str], chars: int = WINDOW_CHARS) -> str:
    """The `chars`-long stretch of `body` holding the most distinct query words, matches in
    **bold**, '…' where it cuts; '' when no word matches. One regex pass over the start of the
    body (SCAN_CHARS), stopped after MAX_MATCHES matches."""
    if not lexemes or not body:
        return ""
    pattern = _pattern(lexemes)
    found = pattern.finditer(body, 0, SCAN_CHARS)
    hits = [(m.start(), m.group().lower()) for m in islice(found, MAX_MATCHES)]
    if not hits:
        return ""
    best_start, best_score = hits[0][0], -1
    # Windows that start at a matching word, slid along: the words of hits[left..right] counted.
    counts: dict[str, int] = {}
    right = -1
    for left, (start, word) in enumerate(hits):
        if right < left:
            right = left
            counts[word] = counts.get(word, 0) + 1
        while right + 1 < len(hits) and hits[right + 1][0] < start + chars:
            right += 1
            counts[hits[right][1]] = counts.get(hits[right][1], 0) + 1
        if len(counts) > best_score:
            best_start, best_score = start, len(counts)
        counts[word] -= 1  # hits[left] leaves the window
        if not counts[word]:
            del counts[word]
    # Start a few words before the first match, so it reads in context; cut at spaces (or
    # mid-word, when there is none nearby: a window never grows with the body).
    begin = 0
    if best_start > 25:
        space = body.rfind(" ", best_start - 25 - SLACK_CHARS, best_start - 25)
        begin = space + 1 if space >= 0 else best_start - 25
    end = body.find(" ", begin + chars, begin + chars + SLACK_CHARS)
    end = min(len(body), begin + chars) if end < 0 else end
    text = pattern.sub(lambda m: f"**{m.group()}**", body[begin:end])
    text = " ".join(text.split())
    return ("… " if begin > 0 else "") + text + (" …" if end < len(body.rstrip()) else "")


_MARKED = re.compile(r"\*\*(.+?)\*\*")


def words_in(text: str, lexemes: list[str]) -> list[str]:
    """The query words found in a short text (a title, a category), as written, each once."""
    if not lexemes or not text:
        return []
    seen: dict[str, str] = {}
    for match in _pattern(lexemes).finditer(text):
        seen.setdefault(match.group().lower(), match.group())
    return list(seen.values())


def marked(snippet: str) -> set[str]:
    """The distinct words a snippet shows in **bold**."""
    return {word.lower() for word in _MARKED.findall(snippet)}
