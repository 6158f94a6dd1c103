"""The learned second stage: a linear scorer that reorders the fused list's top candidates.

The first stage fuses two lists by hand-tuned weights (fusion.py); this one reads a few more
things the search already holds about each of its top candidates (each chunk's similarity, how
much of the query's idf its words and its title hold, whether a "when" question meets a text
that dates an event) and scores them with weights learned on LoCoMo's tune split
(bench/stages_tune.py --write-weights writes second_stage.json beside this module; measured in
docs/developers/measured.md, "Past the plateau (issue 46)").

Pure: numpy and the standard library, no Django, no SQL. knowledge/search/reranking.py reads
the inputs and calls it; the training script calls the same `features`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

FEATURES = (
    "fused",  # the first stage's fused score
    "first_rank",  # 1 / the first stage's place
    "text",  # the full-text score over the best one's (0: not found by words)
    "dense",  # the best chunk's cosine similarity (0: not among the nearest chunks)
    "dense_gap",  # the best candidate's similarity minus this one's
    "dense_mean",  # the mean similarity of the entry's chunks that were read
    "cover",  # share of the query's idf whose lexemes the entry holds
    "title_cover",  # share of the query's idf whose lexemes its title holds
    "when_dated",  # a "when" question, and the entry's text dates an event
)

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
# The body read to find a date in it (reranking reads no more): the features of an entry
# longer than this see its start.
DATED_CHARS = 20_000


def is_when(question: str) -> bool:
    """A question about time, answered by a date ("When did…", "How many weeks…")."""
    return bool(WHEN.search(question))


def dated(text: str) -> bool:
    return bool(TIME_WORDS.search(text))


_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
# A written date: "8 May, 2023", "May 8, 2023", "2023-05-08".
DATE = re.compile(
    rf"\b(\d{{1,2}} {_MONTH},? \d{{4}}|{_MONTH} \d{{1,2}},? \d{{4}}|\d{{4}}-\d{{2}}-\d{{2}})\b",
    re.I,
)


def date_used(title: str, text: str, own: str) -> str:
    """What a hit shows a "when" question: the date written in `text` (its snippet: near the
    matched words), else its words that date an event, as of the date its title carries or
    `own` (the entry's own date), else that date alone."""
    written = DATE.search(text)
    if written:
        return written.group(0)
    titled = DATE.search(title)
    anchor = titled.group(0) if titled else own
    said = TIME_WORDS.search(text)
    return f"{said.group(0)} (as of {anchor})" if said else anchor


@dataclass(frozen=True)
class Candidate:
    """What the second stage reads of one candidate, beside the first stage's lists."""

    similarities: tuple[float, ...] = ()  # of its chunks that were read, best first
    lexemes: frozenset[str] = frozenset()  # the query's lexemes its text holds
    title_lexemes: frozenset[str] = frozenset()  # …that its title holds
    body: str = ""  # read for "when" questions only


def features(
    question: str,
    fused: list[tuple[int, float]],
    text_scores: dict[int, float],
    idf: dict[str, float],
    candidates: dict[int, Candidate],
) -> np.ndarray:
    """One row of FEATURES per pair of `fused` (id, fused score), in that order."""
    total = sum(idf.values()) or 1.0
    top_text = max(text_scores.values(), default=0.0) or 1.0
    empty = Candidate()
    best = [max((candidates.get(i) or empty).similarities, default=0.0) for i, _ in fused]
    top_dense = max(best, default=0.0)
    when = is_when(question)
    rows = np.zeros((len(fused), len(FEATURES)))
    for r, (i, score) in enumerate(fused):
        c = candidates.get(i) or empty
        sims = c.similarities or (0.0,)
        rows[r] = (
            score,
            1.0 / (r + 1),
            text_scores.get(i, 0.0) / top_text,
            best[r],
            top_dense - best[r],
            sum(sims) / len(sims),
            sum(v for t, v in idf.items() if t in c.lexemes) / total,
            sum(v for t, v in idf.items() if t in c.title_lexemes) / total,
            float(when and dated(c.body)),
        )
    return rows


@dataclass(frozen=True)
class Model:
    """score = weights . (x - mean) / scale, over the standardized FEATURES it names."""

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray

    @classmethod
    def of(cls, data: dict) -> Model:
        names = tuple(data["features"])
        unknown = set(names) - set(FEATURES)
        if unknown:
            raise ValueError(f"second stage weights name unknown features: {sorted(unknown)}")
        return cls(
            names,
            np.array([data["mean"][n] for n in names]),
            np.array([data["scale"][n] for n in names]),
            np.array([data["weights"][n] for n in names]),
        )

    def score(self, rows: np.ndarray) -> np.ndarray:
        columns = [FEATURES.index(n) for n in self.features]
        return ((rows[:, columns] - self.mean) / self.scale) @ self.weights


@cache
def installed() -> Model:
    """The weights shipped in this package (no file to fetch, nothing downloaded)."""
    text = resources.files(__package__).joinpath("second_stage.json").read_text()
    return Model.of(json.loads(text))


def leads(fused: list[tuple[int, float]], margin: float) -> bool:
    """Whether the first hit's fused score leads the second's by more than `margin`: the
    stage is skipped then (it would rarely move a clear leader; measured)."""
    if len(fused) < 2:
        return True
    return margin > 0 and fused[0][1] - fused[1][1] > margin


def reorder(fused: list[tuple[int, float]], scores: np.ndarray) -> list[tuple[int, float]]:
    """The first len(scores) pairs by `scores` (higher first; ties keep the first stage's
    order), the rest as they were."""
    k = len(scores)
    order = sorted(range(k), key=lambda r: (-scores[r], r))
    return [fused[r] for r in order] + fused[k:]
