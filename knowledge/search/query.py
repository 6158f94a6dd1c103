"""Turn a search box query into Postgres tsqueries.

Natural-language questions must not need every word to match, so plain words are optional and
ranked by how well they match. What websearch users expect still holds: a "quoted phrase" must
appear, `-word` / `-"phrase"` must not, and `OR` between quoted phrases makes them alternatives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.conf import settings

from knowledge.db.search import text_constraint
from knowledge.errors import ValidationFailed

_TOKEN = re.compile(r'(-?)"([^"]*)"?|(\S+)')
MAX_TERMS = 32


@dataclass
class ParsedQuery:
    words: list[str] = field(default_factory=list)  # optional: any may match
    required: list[list[str]] = field(default_factory=list)  # each group: one phrase must match
    excluded: list[str] = field(default_factory=list)  # none may match

    @property
    def is_empty(self) -> bool:
        return not (self.words or self.required)


def parse(text: str) -> ParsedQuery:
    parsed = ParsedQuery()
    tokens: list[tuple[str, str]] = []  # (kind, text): kind in word, phrase, not, or
    for match in _TOKEN.finditer(text or ""):
        negated, phrase, word = match.groups()
        if phrase is not None:
            phrase = " ".join(phrase.split())
            if phrase:
                tokens.append(("not" if negated else "phrase", phrase))
        elif word == "OR":
            tokens.append(("or", word))
        elif word.startswith("-") and len(word) > 1:
            tokens.append(("not", word[1:]))
        else:
            word = word.strip("\"'")
            if word and word != "-":
                tokens.append(("word", word))

    def or_neighbour(i: int, step: int) -> str | None:
        j = i + step
        if 0 <= j < len(tokens) and tokens[j][0] == "or" and 0 <= j + step < len(tokens):
            return tokens[j + step][0]
        return None

    group: list[str] | None = None
    for i, (kind, value) in enumerate(tokens):
        if kind == "not":
            parsed.excluded.append(value)
        elif kind == "word":
            parsed.words.append(value)
        elif kind == "phrase":
            left, right = or_neighbour(i, -1), or_neighbour(i, 1)
            if {left, right} - {None, "phrase"}:
                parsed.words.append(value)  # "a phrase" OR word: nothing is required
                group = None
                continue
            if left == "phrase" and group is not None:
                group.append(value)
            else:
                group = [value]
                parsed.required.append(group)
            continue
        if kind != "or":
            group = None
    parsed.words = parsed.words[:MAX_TERMS]
    return parsed


def filter_expression(parsed: ParsedQuery, config: str):
    """The hard constraints alone (required phrases, exclusions), for semantic candidates too:
    a boolean expression to filter entries by, or None when the query has none."""
    return text_constraint(parsed.required, parsed.excluded, config)


def check_query(query: str) -> None:
    """Bounded work per search: the query's length and its number of terms are capped."""
    text = query or ""
    max_chars, max_terms = settings.CAIRN_SEARCH_MAX_QUERY_CHARS, settings.CAIRN_SEARCH_MAX_TERMS
    if len(text) > max_chars:
        raise ValidationFailed(
            f"The query is {len(text):,} characters long; the limit is {max_chars:,}. Search for "
            "the few words that matter most.",
            field="query",
            limit=max_chars,
        )
    # Terms as the parser reads them: '"a""b""c"' is one word to split() and three phrases,
    # each of which a search must match. The length is checked first: this scan is linear.
    terms = sum(1 for _ in _TOKEN.finditer(text))
    if terms > max_terms:
        raise ValidationFailed(
            f"The query has {terms} terms (words, phrases and exclusions); the limit is "
            f"{max_terms}. Keep the words that matter most.",
            field="query",
            limit=max_terms,
        )
