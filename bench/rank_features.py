"""What a second stage reads about each of a question's first-stage candidates, and the linear
scorer bench/stages_tune.py learns over it. Plain Python and numpy, no Django: the same code
can score a search's top candidates in the product (docs/developers/measured.md, "A second
stage"; /work/wt/PLAN-46.md says where it goes).

Every feature is something the search already has at hand for its top candidates: the two
first-stage scores, each chunk's similarity, the sparse latent-terms overlap, the entry's words
(loaded for its snippet) against the query's words and their idf, and the dates in the title
and text. None is a count only a benchmark knows.
"""

from __future__ import annotations

import math
import re

from bench.locomo_scoring import STOPWORDS as STOP

WORD = re.compile(r"[a-z0-9]+")
# TIME_WORDS and WHEN are knowledge/search/second_stage.py's, copied: importing that module runs
# knowledge.search's __init__, which needs Django, and the offline replay runs without it.
# Words that date an event in the text itself ("yesterday", "last week", "in May", "2023").
TIME_WORDS = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|ago|last (?:week|weekend|month|year|night|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|next (?:week|month|year)|"
    r"this (?:week|weekend|month|year)|(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
    r"(?:january|february|march|april|june|july|august|september|october|november|december)|"
    r"(?:19|20)\d\d)\b",
    re.I,
)
WHEN = re.compile(
    r"^\s*(when\b|what (?:date|day|time|year|month)|which (?:year|month|day)|how long ago)|"
    r"\bhow (?:many|long) (?:days|weeks|months|years)\b|\bwhich\b.{0,60}?\bfirst\b",
    re.I,
)

FEATURES = (
    "fused",  # the engine's fused score (text 1.0 + semantic 0.75, each scaled 0..1)
    "first_rank",  # 1 / the first stage's rank
    "text",  # the full-text score over the best one's (0 when not found by words)
    "dense",  # the best chunk's cosine similarity
    "dense_gap",  # the best candidate's similarity minus this one's
    "dense_mean",  # the mean of the entry's chunks' similarities (evidence spread over it)
    "sparse",  # the best chunk's latent-terms dot product over the best candidate's
    "cover",  # share of the query's idf found in the entry
    "title_cover",  # share of the query's idf found in the title
    "when_dated",  # a "when" question and the entry's text dates an event
    "log_len",  # log of the entry's words
)


def words(text: str) -> list[str]:
    return [w for w in WORD.findall(text.lower()) if w not in STOP]


def stem(word: str) -> str:
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + keep
    return word


def terms(text: str) -> set[str]:
    return {stem(w) for w in words(text)}


def is_when(question: str) -> bool:
    return bool(WHEN.search(question))


def dated(text: str) -> bool:
    return bool(TIME_WORDS.search(text))


def candidate_features(
    *,
    question: str,
    q_terms: dict[str, float],
    cands: list[int],
    fused: dict[int, float],
    text_scores: dict[int, float],
    dense: dict[int, list[float]],
    sparse: dict[int, float],
    titles: dict[int, str],
    bodies: dict[int, str],
    body_terms: dict[int, set[str]],
) -> list[list[float]]:
    """One row of FEATURES per candidate, in the order of `cands` (the first stage's).

    q_terms: the query's stemmed words and their idf; dense: each candidate's chunk
    similarities; sparse: each candidate's best chunk's latent-terms dot product."""
    idf_total = sum(q_terms.values()) or 1.0
    top_text = max(text_scores.values(), default=0.0) or 1.0
    best = {c: max(dense.get(c) or [0.0]) for c in cands}
    top_dense = max(best.values(), default=0.0)
    top_sparse = max((sparse.get(c, 0.0) for c in cands), default=0.0) or 1.0
    when = is_when(question)
    rows = []
    for rank, c in enumerate(cands, 1):
        found = body_terms[c]
        title = terms(titles[c])
        sims = dense.get(c) or [0.0]
        rows.append(
            [
                fused.get(c, 0.0),
                1.0 / rank,
                text_scores.get(c, 0.0) / top_text,
                best[c],
                top_dense - best[c],
                sum(sims) / len(sims),
                sparse.get(c, 0.0) / top_sparse,
                sum(v for t, v in q_terms.items() if t in found) / idf_total,
                sum(v for t, v in q_terms.items() if t in title) / idf_total,
                float(when and dated(bodies[c])),
                math.log1p(len(bodies[c].split())),
            ]
        )
    return rows


class Linear:
    """A linear scorer over standardized features: score = w . (x - mean) / scale."""

    def __init__(self, weights: dict) -> None:
        self.names = list(weights["features"])
        self.mean = [weights["mean"][n] for n in self.names]
        self.scale = [weights["scale"][n] for n in self.names]
        self.w = [weights["weights"][n] for n in self.names]

    def score(self, row: list[float], names=FEATURES) -> float:
        index = {n: i for i, n in enumerate(names)}
        return sum(
            w * (row[index[n]] - m) / s
            for n, w, m, s in zip(self.names, self.w, self.mean, self.scale, strict=True)
        )
