"""LoCoMo scoring for bench/locomo.py and the benches that reuse its definitions: R@k, hit@5 and
MRR per question, the stemmed BM25 baseline's tokens, the passage-vector cache under
var/bench-cache/, and the leave-one-conversation-out choice of a fusion. Cairn is imported inside
the functions, so this module imports before Django is set up."""

from __future__ import annotations

import hashlib
import re
import sqlite3
import statistics
import time
from pathlib import Path

KS = (1, 5, 10, 20)
STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        """
        a about above after again against all am an and any are as at be because been before
        being below between both but by can could did do does doing down during each few for
        from further had has have having he her here hers herself him himself his how i if in
        into is it its itself just me more most my myself no nor not now of off on once only or
        other our ours ourselves out over own same she should so some such than that the their
        theirs them themselves then there these they this those through to too under until up
        very was we were what when where which while who whom why will with would you your yours
        yourself yourselves
        """,
    )
)


def light_stem(token: str) -> str:
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            return token[: -len(suffix)] + keep
    return token


def bm25_tokens(text: str) -> list[str]:
    return [light_stem(t) for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOPWORDS]


class CachedProvider:
    """Wraps the configured provider; passage vectors are cached by text under var/."""

    def __init__(self, inner, path: Path) -> None:
        import numpy as np

        self.np = np
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path)
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS v (model TEXT, key TEXT, vec BLOB, "
            "PRIMARY KEY (model, key))"
        )
        self.embedded = 0
        self.seconds = 0.0

    def _key(self, text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    def embed_passages(self, texts):
        np = self.np
        keys = [self._key(t) for t in texts]
        found = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            rows = self.db.execute(
                f"SELECT key, vec FROM v WHERE model = ? AND key IN ({','.join('?' * len(part))})",
                [self.name, *part],
            ).fetchall()
            found.update({k: np.frombuffer(b, dtype=np.float32) for k, b in rows})
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            start = time.perf_counter()
            vectors = self.inner.embed_passages([texts[i] for i in missing])
            self.seconds += time.perf_counter() - start
            self.embedded += len(missing)
            for i, vec in zip(missing, vectors, strict=True):
                found[keys[i]] = vec.astype(np.float32)
                self.db.execute(
                    "INSERT OR REPLACE INTO v VALUES (?, ?, ?)",
                    [self.name, keys[i], vec.astype(np.float32).tobytes()],
                )
            self.db.commit()
        return np.vstack([found[k] for k in keys])

    def embed_query(self, text):
        return self.inner.embed_query(text)


def score(ranked: list[str], gold: set[str]) -> dict:
    out = {}
    for k in KS:
        out[f"recall@{k}"] = len(gold & set(ranked[:k])) / len(gold)
    out["hit@5"] = float(bool(gold & set(ranked[:5])))
    out["mrr"] = next((1 / (i + 1) for i, u in enumerate(ranked) if u in gold), 0.0)
    return out


def mean_scores(rows: list[dict]) -> dict:
    return {k: statistics.fmean(r[k] for r in rows) for k in rows[0]} if rows else {}


CV_METRICS = ("recall@1", "recall@5", "recall@10", "mrr")
CV_HEADERS = [
    "level",
    "held out",
    "chosen",
    "R@1",
    "R@5",
    "R@10",
    "MRR",
    "bm25 R@1",
    "bm25 R@5",
    "bm25 R@10",
    "bm25 MRR",
]


def fusion_grid():
    from knowledge.search.fusion import Fusion

    leads = (0.0, 1.1, 1.25, 1.5, 2.0)
    grid = [
        Fusion("rrf", 1.0, w, k, lead)
        for w in (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0)
        for k in (10, 30, 60)
        for lead in leads
    ]
    grid += [
        Fusion("score", 1.0, w, 60, lead) for w in (0.1, 0.2, 0.3, 0.5, 0.75, 1.0) for lead in leads
    ]
    return grid


def cross_validate(items, units, current, fuse, level, out_rows) -> dict:
    """Leave one conversation out: pick the grid's best fusion on the other conversations
    (objective: the mean of R@1, R@5, R@10 and MRR), score it on the held-out one."""
    grid = fusion_grid()
    convs = sorted({sid for sid, *_ in items})
    # Every (config, question) scored once; folds only regroup them.
    table_ = {
        f: [
            score([units.get(i, "?") for i, _ in fuse(found, "hybrid", fusion=f)[:20]], gold)
            for _, gold, found, _ in items
        ]
        for f in [*grid, current]
    }
    bm25 = [score(ranked, gold) for _, gold, _, ranked in items]

    def objective(rows):
        means = mean_scores(rows)
        return statistics.fmean(means[m] for m in CV_METRICS)

    folds, held = [], {m: [] for m in ("hybrid", "bm25", "current")}
    for conv in convs:
        train = [i for i, (sid, *_) in enumerate(items) if sid != conv]
        test = [i for i, (sid, *_) in enumerate(items) if sid == conv]
        if not train:  # one conversation only (--limit-questions): nothing to tune on
            continue
        best = max(grid, key=lambda f: objective([table_[f][i] for i in train]))
        got = mean_scores([table_[best][i] for i in test])
        base = mean_scores([bm25[i] for i in test])
        cur = mean_scores([table_[current][i] for i in test])
        held["hybrid"].append(got)
        held["bm25"].append(base)
        held["current"].append(cur)
        folds.append(
            {
                "held_out": conv,
                "questions": len(test),
                "chosen": best.label(),
                "hybrid": got,
                "bm25": base,
                "current_default": cur,
            }
        )
        out_rows.append(
            [
                level,
                conv,
                best.label(),
                *[got[m] for m in CV_METRICS],
                *[base[m] for m in CV_METRICS],
            ]
        )
    summary = {}
    if not folds:
        return {"folds": [], "note": "needs questions from at least two conversations"}
    for name, rows in held.items():
        summary[name] = {
            m: {
                "mean": round(statistics.fmean(r[m] for r in rows), 4),
                "sd": round(statistics.pstdev(r[m] for r in rows), 4),
            }
            for m in CV_METRICS
        }
    for name in ("hybrid", "current"):
        label = "mean (sd)" if name == "hybrid" else f"default {current.label()}"
        out_rows.append(
            [
                level,
                label,
                "-" if name == "current" else "per fold",
                *[
                    f"{summary[name][m]['mean']:.3f} ({summary[name][m]['sd']:.3f})"
                    for m in CV_METRICS
                ],
                *[
                    f"{summary['bm25'][m]['mean']:.3f} ({summary['bm25'][m]['sd']:.3f})"
                    for m in CV_METRICS
                ],
            ]
        )
    everything = max(grid, key=lambda f: objective(table_[f]))
    out_rows.append(
        [
            level,
            "all (tuned on all 5)",
            everything.label(),
            *[mean_scores(table_[everything])[m] for m in CV_METRICS],
            *[mean_scores(bm25)[m] for m in CV_METRICS],
        ]
    )
    return {
        "folds": folds,
        "summary": summary,
        "tuned_on_all": everything.label(),
        "current_default": current.label(),
        "grid": {
            f.label(): {**mean_scores(table_[f]), "objective": objective(table_[f])} for f in grid
        },
    }


def search_as(actor, question: str, *, filters, mode: str, limit: int = 20):
    """search_entries in `mode`; "hybrid:learned" or "hybrid:off" is hybrid with
    CAIRN_SEARCH_RERANK set so (the second stage on or off), no kept answer reused."""
    from django.conf import settings

    from knowledge.search import result_cache
    from knowledge.search.engine import search_entries

    base, _, rerank = mode.partition(":")
    before = settings.CAIRN_SEARCH_RERANK
    settings.CAIRN_SEARCH_RERANK = rerank or before
    result_cache.clear()
    try:
        return search_entries(actor, question, filters=filters, limit=limit, mode=base)
    finally:
        settings.CAIRN_SEARCH_RERANK = before


def split_of(sid: str) -> str:
    """LoCoMo's tune split (conv-26, 30, 41: where weights are fitted) or its report split."""
    return "tune" if sid in ("conv-26", "conv-30", "conv-41") else "report"
