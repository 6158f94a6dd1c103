"""Snippets from text already at hand: the window of an entry's body with the most query words,
the words in **bold**. Postgres ts_headline gave the same shape but re-parsed every hit's whole
body inside the query (a few milliseconds per search); this reads the body the hit loads anyway.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")
_LITERAL = re.compile(r"'((?:[^']|'')*)'")
WINDOW_WORDS = 30


def lexemes_of(tsquery: str | None) -> list[str]:
    """The lexemes of a tsquery literal like `'restart' | 'worker'`."""
    return [m.replace("''", "'") for m in _LITERAL.findall(tsquery or "")]


def _matches(word: str, lexemes: list[str]) -> bool:
    w = word.lower()
    for lex in lexemes:
        if w == lex or (len(lex) >= 3 and w.startswith(lex)):
            return True
        # The English stemmer turns a final y into i (happy -> happi, story -> stori).
        if (
            len(lex) >= 4
            and lex.endswith("i")
            and w.startswith(lex[:-1])
            and len(w) <= len(lex) + 3
        ):
            return True
    return False


def highlight(body: str, lexemes: list[str], words: int = WINDOW_WORDS) -> str:
    """The `words`-word window of `body` holding the most distinct query lexemes, matches in
    **bold**, '…' where it cuts; '' when no word matches."""
    if not lexemes or not body:
        return ""
    tokens = list(_WORD.finditer(body))
    hits = [i for i, t in enumerate(tokens) if _matches(t.group(), lexemes)]
    if not hits:
        return ""
    best_start, best_score = hits[0], -1
    right = 0
    for left_i, start in enumerate(hits):  # windows that start at a matching word
        right = max(right, left_i)
        while right + 1 < len(hits) and hits[right + 1] < start + words:
            right += 1
        distinct = {tokens[i].group().lower() for i in hits[left_i : right + 1]}
        if len(distinct) > best_score:
            best_start, best_score = start, len(distinct)
    # Start a few words before the first match, so it reads in context.
    first = max(0, best_start - 3)
    last = min(len(tokens), first + words) - 1
    begin, end = tokens[first].start(), tokens[last].end()
    marked = set(hits)
    out, pos = [], begin
    for i in range(first, last + 1):
        t = tokens[i]
        out.append(body[pos : t.start()])
        out.append(f"**{t.group()}**" if i in marked else t.group())
        pos = t.end()
    text = " ".join("".join(out).split())
    return ("… " if first > 0 else "") + text + (" …" if end < len(body.rstrip()) else "")
