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


def above_floor(
    fused: list[tuple[int, float]],
    text: list[int],
    semantic_scores: dict[int, float],
    floor: float,
) -> list[tuple[int, float]]:
    """The fused hits without those found only by meaning (not by the full text) whose
    similarity is below `floor`: with few word matches, scaling lifts unrelated entries in."""
    if floor <= 0:
        return fused
    words = set(text)
    return [(i, s) for i, s in fused if i in words or semantic_scores.get(i, 1.0) >= floor]


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
