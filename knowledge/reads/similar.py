"""Entries that may already say what a new entry says, for the writer's answer: titles alike
(trigrams, then difflib's ratio or most words shared) with bodies sharing most words, and
bodies the same word for word. Each compares a bounded part of each body.
"""

from __future__ import annotations

import difflib
import re

from django.db.models.functions import Left

from knowledge.actors import Actor
from knowledge.models import Entry
from knowledge.reads.write_lookups import MAX_SIMILAR, Named, report_lookups

_WORD = re.compile(r"[\w-]+")
_STOPWORDS = {"the", "a", "an", "of", "and", "or", "to", "in", "on", "for", "with", "by", "at"}
# Similar entries: the share of the shorter body's words the other must hold, and how much of
# each body is compared (a report's work stays bounded whatever the entries' size).
BODY_SHARE = 0.5
BODY_CHARS = 20_000


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS}


def _close_bodies(mine: set[str], theirs: set[str]) -> str:
    """'bodies share n of m words' when most of the shorter body's words are in the other
    (at least three, or all of a shorter one), '' otherwise."""
    shared, fewer = len(mine & theirs), min(len(mine), len(theirs))
    if not fewer or shared < min(3, fewer) or shared < BODY_SHARE * fewer:
        return ""
    return f"bodies share {shared} of {fewer} words"


def kept_similar(entry: Entry, candidates: list[Named]) -> list[dict]:
    """The candidates kept: titles alike (difflib's ratio) or sharing most words, and bodies
    sharing most words too. A title alone misleads: a session summary sharing a date and two
    words with a meeting note's title was said to be the same note (issue 48)."""
    mine = _words(entry.title)
    titled = []
    for hit in candidates:
        ratio = difflib.SequenceMatcher(None, entry.title.lower(), hit.title.lower()).ratio()
        shared = sorted(mine & _words(hit.title))
        if ratio >= 0.75:
            why = f"title {round(ratio * 100)}% alike"
        elif mine and len(shared) >= max(2, (len(mine) + 1) // 2):
            why = "its title shares " + ", ".join(shared)
        else:
            continue
        titled.append((hit, why))
    bodies = (
        dict(
            Entry.objects.filter(pk__in=[hit.id for hit, _ in titled]).values_list(
                "pk", Left("body", BODY_CHARS)
            )
        )
        if titled
        else {}
    )
    body = _words(entry.body[:BODY_CHARS])
    found = []
    for hit, why in titled:
        close = _close_bodies(body, _words(bodies.get(hit.id) or ""))
        if not close:
            continue
        why = f"{why}; {close}"
        found.append(
            {
                "id": hit.id,
                "short_id": hit.short_id,
                "title": hit.title,
                "path": hit.path,
                "why": why,
            }
        )
    return found[:MAX_SIMILAR]


def listed_same_body(rows: list[Named]) -> list[dict]:
    return [
        {"id": e.id, "short_id": e.short_id, "title": e.title, "path": e.path, "kind": e.kind}
        for e in rows
    ]


def similar_entries(actor: Actor, entry: Entry) -> list[dict]:
    """Entries of the same project that may say the same as a new entry (its title alike by
    trigrams, then kept when the titles are alike or share most words)."""
    return kept_similar(entry, report_lookups(actor, entry, new=True).similar)


def same_body_entries(actor: Actor, entry: Entry) -> list[dict]:
    """Entries in projects the actor can see whose body says word for word what `entry`'s does
    (whitespace and case aside), whatever their titles: one lookup on the entry_body_key index."""
    if not entry.body.strip():
        return []
    return listed_same_body(report_lookups(actor, entry, new=True).same_body)


__all__ = ["kept_similar", "listed_same_body", "same_body_entries", "similar_entries"]
