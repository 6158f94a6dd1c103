"""Fusing the full-text and the semantic ranking into one list.

Three ways, chosen by cross-validation over LoCoMo conversations (bench/locomo.py --cv):

- `rrf`: Reciprocal Rank Fusion, weight / (k + rank) per list (ranks only);
- `score`: each list's own scores scaled to 0..1 for the query (the best hit 1, the last
  candidate 0), then weighted and summed, so a clear winner keeps its lead;
- `text_lead` (with either): when the full text's first hit scores at least `text_lead` times its
  second, it is confident, and it goes first whatever the other list says.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fusion:
    method: str = "score"  # "score" or "rrf"
    text_weight: float = 1.0
    semantic_weight: float = 0.75
    k: int = 60  # rrf only
    text_lead: float = 0.0  # 0: off

    def label(self) -> str:
        core = (
            f"rrf w={self.semantic_weight:g} k={self.k}"
            if self.method == "rrf"
            else f"score w={self.semantic_weight:g}"
        )
        return core + (f" lead={self.text_lead:g}" if self.text_lead else "")


def rrf(rankings: list[tuple[float, list[int]]], k: int) -> list[tuple[int, float]]:
    """Reciprocal Rank Fusion: each list adds weight / (k + rank) to its items (rank from 1)."""
    scores: dict[int, float] = {}
    for weight, ids in rankings:
        if weight <= 0:
            continue
        for rank, item in enumerate(ids, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return _ordered(scores, rankings[0][1] if rankings else [])


def _ordered(scores: dict[int, float], first: list[int]) -> list[tuple[int, float]]:
    # Ties (rare) go to the text ranking's order, then the id, so results are stable.
    first_list = {item: i for i, item in enumerate(first)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], first_list.get(kv[0], 1 << 30), kv[0]))


def _scaled(ids: list[int], raw: dict[int, float]) -> dict[int, float]:
    values = [raw[i] for i in ids if i in raw]
    if not values:  # no scores known: fall back to the rank
        return {item: 1.0 - r / max(1, len(ids)) for r, item in enumerate(ids)}
    top, low = max(values), min(values)
    span = top - low
    return {i: (raw.get(i, low) - low) / span if span > 0 else 1.0 for i in ids}


def by_scores(
    text: list[int],
    text_scores: dict[int, float],
    semantic: list[int],
    semantic_scores: dict[int, float],
    text_weight: float,
    semantic_weight: float,
) -> list[tuple[int, float]]:
    scores: dict[int, float] = {}
    for weight, ids, raw in (
        (text_weight, text, text_scores),
        (semantic_weight, semantic, semantic_scores),
    ):
        if weight <= 0 or not ids:
            continue
        for item, value in _scaled(ids, raw).items():
            scores[item] = scores.get(item, 0.0) + weight * value
    return _ordered(scores, text)


# A hit found by its words that holds less than this share of the query's weight the best
# word hit holds (the idf of the query's lexemes it holds: a common word weighs little), and is
# not close in meaning, is weak: "recovery time after data loss" listed two entries holding
# only "data" above the restore runbook, and 10 of 13 entries.
WORDS_SHARE = 0.4
# A small local model's similarities bunch together (0.8-0.9 between a question and short notes
# on other things), so nearness is judged against the nearest hit: a weak word hit is close in
# meaning within WORDS_MARGIN of it, a hit found only by meaning is kept within MEANING_MARGIN.
WORDS_MARGIN = 0.03
MEANING_MARGIN = 0.06


def above_floor(
    fused: list[tuple[int, float]],
    text: list[int],
    semantic_scores: dict[int, float],
    floor: float,
    *,
    held: dict[int, float] | None = None,
) -> list[tuple[int, float]]:
    """The fused hits above the relevance floor (floored's first part)."""
    return floored(fused, text, semantic_scores, floor, held=held)[0]


def floored(
    fused: list[tuple[int, float]],
    text: list[int],
    semantic_scores: dict[int, float],
    floor: float,
    *,
    held: dict[int, float] | None = None,
) -> tuple[list[tuple[int, float]], set[int]]:
    """The fused hits above the relevance floor, and those left out that a reader may want
    (all but the hits found only by meaning under `floor`).

    Below it: a hit found only by meaning (not by the full text) whose similarity is under
    `floor` (with few word matches, scaling lifts unrelated entries in) or more than
    MEANING_MARGIN under the nearest hit's; and, given `held` (entry id -> idf of the query's
    lexemes it holds), a word hit holding under WORDS_SHARE of what the best word hit holds and
    not close in meaning (under `floor`, or more than WORDS_MARGIN under the nearest hit)."""
    if floor <= 0:
        return fused, set()
    words = set(text)
    nearest = max(semantic_scores.values(), default=0.0)
    best = max(held.values(), default=0.0) if held else 0.0
    close = max(floor, nearest - WORDS_MARGIN)
    left: set[int] = set()
    kept = []
    for i, s in fused:
        similarity = semantic_scores.get(i)
        if i in words:
            above = not held or held.get(i, 0.0) >= WORDS_SHARE * best or (similarity or 0) >= close
        elif similarity is None or similarity < floor:  # as the floor always did: not counted
            continue
        else:
            above = similarity >= nearest - MEANING_MARGIN
        if above:
            kept.append((i, s))
        else:
            left.add(i)
    return kept, left


def shown_above_floor(
    fused: list[tuple[int, float]],
    text: list[int],
    semantic_scores: dict[int, float],
    floor: float,
    limit: int,
    *,
    held: dict[int, float] | None = None,
) -> tuple[list[tuple[int, float]], int]:
    """The first `limit` hits above the floor, and how many of the first `limit` without it
    were left out (besides those found only by meaning under `floor`)."""
    kept, weak = floored(fused, text, semantic_scores, floor, held=held)
    return kept[:limit], sum(1 for i, _ in fused[:limit] if i in weak)


def fuse_lists(
    fusion: Fusion,
    text: list[int],
    text_scores: dict[int, float],
    semantic: list[int],
    semantic_scores: dict[int, float],
) -> list[tuple[int, float]]:
    if fusion.method == "score":
        fused = by_scores(
            text, text_scores, semantic, semantic_scores, fusion.text_weight, fusion.semantic_weight
        )
    else:
        fused = rrf([(fusion.text_weight, text), (fusion.semantic_weight, semantic)], fusion.k)
    if fusion.text_lead and fusion.text_weight > 0 and len(fused) > 1 and text:
        leader = text[0]
        first = text_scores.get(leader, 0.0)
        second = text_scores.get(text[1], 0.0) if len(text) > 1 else 0.0
        if first > 0 and first >= fusion.text_lead * second and fused[0][0] != leader:
            top = fused[0][1]
            fused = [(leader, top)] + [pair for pair in fused if pair[0] != leader]
    return fused
