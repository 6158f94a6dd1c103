"""Ranking variants scored offline on LoCoMo dev's tune/report split (after bench/locomo.py --dump).

    .venv/bin/python bench/locomo.py --levels session --modes hybrid --no-cv --dump DIR
    .venv/bin/python bench/locomo_tune.py --dump DIR --levels session --variants engine,base

It reads the database and the dump `bench/locomo.py --dump DIR` leaves.

The semantic side is recomputed exactly from the stored chunk vectors (an entry scores by its
best chunk, as the engine's exact path does); the full-text side runs each variant's SQL on
the benchmark database; the two are fused with the engine's own `fuse_lists` and relevance
floor. Scores are printed per split: tune (conv-26, conv-30, conv-41), report (conv-42,
conv-43) and all five. Choose on the tune split; the report split says whether it holds.
`engine` must reproduce `bench/locomo.py`'s hybrid row; `base` is the same ranking written with
sql_text's knobs, the starting point of a new variant (add it to VARIANTS below).
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._setup import setup_django, table, write_json

TUNE = {"conv-26", "conv-30", "conv-41"}
METRICS = ("recall@1", "recall@5", "recall@10", "mrr")
N = 50  # CAIRN_SEARCH_CANDIDATES


def score(ranked: list[str], gold: set[str]) -> dict:
    out = {f"recall@{k}": len(gold & set(ranked[:k])) / len(gold) for k in (1, 5, 10)}
    out["mrr"] = next((1 / (i + 1) for i, u in enumerate(ranked) if u in gold), 0.0)
    return out


def means(rows):
    return {m: statistics.fmean(r[m] for r in rows) for m in METRICS} if rows else {}


class Bench:
    def __init__(self, dump: Path, level: str):
        import numpy as np
        from django.contrib.auth import get_user_model

        from knowledge.actors import Actor
        from knowledge.models import EntryChunk
        from knowledge.search.providers import get_provider

        payload = pickle.loads((dump / f"locomo-{level}.pkl").read_bytes())
        self.level = level
        self.items = payload["items"]
        self.entries = payload["entries"]
        self.projects = payload["projects"]
        self.units = {pk: e["unit"] for pk, e in self.entries.items()}
        self.actor = Actor.for_user(
            get_user_model().objects.get(username="bench"), agent="agent:bench"
        )
        rows = EntryChunk.objects.filter(
            model=get_provider().name, entry_id__in=list(self.entries)
        ).values_list("entry_id", "embedding")
        self.chunk_entry = np.array([e for e, _ in rows])
        self.chunk_vec = np.vstack([np.asarray(v, dtype=np.float32) for _, v in rows])
        self.np = np
        self.mismatch = 0

    def semantic(self, item) -> tuple[list[int], dict[int, float]]:
        np = self.np
        proj_ids = item.get("_allowed") or {
            pk for pk in self.entries if self._project_of(pk) == item["sid"]
        }
        sims = self.chunk_vec @ np.asarray(item["vector"], dtype=np.float32)
        best: dict[int, float] = {}
        for e, s in zip(self.chunk_entry.tolist(), sims.tolist(), strict=True):
            if e in proj_ids and s > best.get(e, -9):
                best[e] = s
        ranked = sorted(best, key=lambda e: -best[e])[:N]
        return ranked, {e: best[e] for e in ranked}

    def _project_of(self, pk):
        if not hasattr(self, "_proj"):
            from knowledge.models import Entry

            slug_to_sid = {v: k for k, v in self.projects.items()}
            self._proj = {
                pk: slug_to_sid.get(slug)
                for pk, slug in Entry.objects.filter(pk__in=list(self.entries)).values_list(
                    "pk", "project__slug"
                )
            }
        return self._proj[pk]


def run(bench: Bench, text_fn, fusion=None, post=None) -> dict:
    from django.conf import settings

    from knowledge.search.engine import default_fusion
    from knowledge.search.fusion import Fusion, above_floor, fuse_lists

    fusion = Fusion(*fusion) if isinstance(fusion, tuple) else fusion or default_fusion()
    rows = {"tune": [], "report": [], "all": []}
    for item in bench.items:
        if "_terms" not in item:
            item["_terms"] = scope_and_terms(bench, item)
        if "_sem" not in item:
            item["_sem"] = bench.semantic(item)
        sem, sem_scores = item["_sem"]
        if not item.get("_checked"):
            item["_checked"] = True
            bench.mismatch += sem[:20] != item["semantic"][:20]
        text, text_scores = text_fn(bench, item)
        fused = fuse_lists(fusion, text, text_scores, sem, sem_scores)
        fused = above_floor(fused, text, sem_scores, settings.CAIRN_SEARCH_MIN_SIMILARITY)
        if post is not None:
            fused = post(bench, item, fused)
        ranked = [bench.units.get(i, "?") for i, _ in fused[:20]]
        s = score(ranked, set(item["gold"]))
        rows["tune" if item["sid"] in TUNE else "report"].append(s)
        rows["all"].append(s)
    return {k: means(v) for k, v in rows.items()}


# ---- the full-text side -------------------------------------------------------------------


def scope_and_terms(bench: Bench, item, question: str | None = None):
    from django.conf import settings

    from knowledge.search.filters import SearchFilters
    from knowledge.search.fulltext import word_stats
    from knowledge.search.query import filter_expression, parse
    from knowledge.search.scope import search_scope
    from knowledge.selectors import visible_projects

    question = " ".join((question or item["question"]).split())
    if item.get("_relaxed"):
        question = question.replace('"', " ")
    parsed = parse(question)
    scope, searched = search_scope(
        bench.actor, SearchFilters.parse(project=bench.projects[item["sid"]])
    )
    constraint = filter_expression(parsed, settings.CAIRN_SEARCH_CONFIG)
    if constraint is not None:
        scope = scope.filter(constraint)
        allowed = set(scope.values_list("pk", flat=True))
        if not allowed:  # the engine searches again without the quotes
            item["_relaxed"] = True
            return scope_and_terms(bench, item, question)
        item["_allowed"] = allowed
    words = [*parsed.words, *(p for g in parsed.required for p in g)]
    stats = word_stats(
        words, settings.CAIRN_SEARCH_CONFIG, visible_projects(bench.actor), searched=searched
    )
    return scope, stats.terms


def engine_text(bench, item):
    from knowledge.search.fulltext import text_ranking

    key = "_text"
    if key not in item:
        scope, terms = item["_terms"]
        scored = text_ranking(scope, terms, N) if terms else []
        item[key] = ([pk for pk, _ in scored], dict(scored))
    return item[key]


def sql_text(
    scope,
    terms,
    *,
    weights=None,
    norm=None,
    boosts=None,
    cover=0.0,
    lenpow=None,
    bm25b=None,
    n=N,
):
    """text_ranking with the knobs exposed: ts_rank weights {D,C,B,A} and normalization (the
    engine's when None), a per lexeme multiplier (boosts), a cover-density bonus over all the
    query's lexemes, a length power (lenpow, with norm 0) and BM25's length factor (bm25b)."""
    from django.db.models import BooleanField, FloatField
    from django.db.models.expressions import RawSQL

    from knowledge.search.fulltext import RANK_NORMALIZATION, rank_weights

    weights = rank_weights() if weights is None else weights
    norm = RANK_NORMALIZATION if norm is None else norm

    boosts = boosts or {}
    if not terms:
        return [], {}
    matching, pool = [], 0
    for term in terms:
        if matching and pool + term.ndoc > 5000:
            break
        matching.append(term)
        pool += term.ndoc
    match = " | ".join(t.tsquery for t in matching)
    parts, params = [], []
    for t in terms:
        parts.append(f"%s * ts_rank(%s::float4[], search_vector, %s::tsquery, {norm})")
        params += [t.idf * boosts.get(t.tsquery, 1.0), weights, t.tsquery]
    if cover:
        parts.append(f"%s * ts_rank_cd(%s::float4[], search_vector, %s::tsquery, {norm})")
        params += [
            cover,
            weights,
            " | ".join(t.tsquery for t in terms if boosts.get(t.tsquery, 1) >= 1),
        ]
    rank_sql = " + ".join(parts)
    if lenpow is not None:  # norm must be 0: the length factor is applied once here
        rank_sql = f"({rank_sql}) / power(1 + ln(greatest(length(search_vector), 1)), %s)"
        params.append(lenpow)
    if bm25b is not None:  # BM25's length factor against the scope's mean length (in lexemes)
        from django.db.models import Avg

        mean = scope.aggregate(m=Avg(RawSQL("length(search_vector)", [], FloatField())))["m"] or 1.0
        rank_sql = f"({rank_sql}) / (1 - %s + %s * length(search_vector) / %s)"
        params += [bm25b, bm25b, mean]
    candidates = scope.filter(RawSQL("search_vector @@ %s::tsquery", [match], BooleanField()))
    scored = list(
        candidates.annotate(rank=RawSQL(rank_sql, params, FloatField()))
        .order_by("-rank", "-updated_at", "-pk")
        .values_list("pk", "rank")[:n]
    )
    return [pk for pk, _ in scored], dict(scored)


def variant_text(**kw):
    def fn(bench, item):
        if "_terms" not in item:
            item["_terms"] = scope_and_terms(bench, item)
        scope, terms = item["_terms"]
        return sql_text(scope, terms, **kw)

    return fn


# Each: run()'s keyword arguments. What was tried on LoCoMo and why it was dropped is in
# docs/developers/measured.md ("Search ranking"); these few show each kind of knob.
VARIANTS = {
    "engine": {"text_fn": engine_text},
    "base": {"text_fn": variant_text()},
    "norm0": {"text_fn": variant_text(norm=0)},  # no length normalization
    "cover0.1": {"text_fn": variant_text(cover=0.1)},  # words standing together
    "bm25b0.25": {"text_fn": variant_text(norm=0, bm25b=0.25)},  # BM25's own length factor
    # (method, text weight, semantic weight): made a Fusion by run(), after Django is set up
    "semantic0.6": {"text_fn": engine_text, "fusion": ("score", 1.0, 0.6)},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dump", default="var/bench-cache/dump", help="bench/locomo.py --dump DIR")
    parser.add_argument("--levels", default="session,turn")
    parser.add_argument("--db", default="cairn_bench_locomo", help="the database locomo.py used")
    parser.add_argument("--variants", default="engine,base", help=f"of {', '.join(VARIANTS)}")
    args = parser.parse_args()
    unknown = [v for v in args.variants.split(",") if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variants {unknown}; choose from {', '.join(VARIANTS)}")
    setup_django(args.db)

    rows, results = [], {}
    for level in args.levels.split(","):
        bench = Bench(Path(args.dump), level)
        for name in args.variants.split(","):
            got = run(bench, **VARIANTS[name])
            if bench.mismatch:
                print(f"{level}: {bench.mismatch} semantic lists differ from the dump's")
                bench.mismatch = 0
            results[f"{level} {name}"] = got
            rows.append(
                [level, name]
                + [" ".join(f"{got[s][m]:.3f}" for m in METRICS) for s in ("tune", "report", "all")]
            )
            print(table(["level", "variant", "tune", "report", "all"], rows[-1:]), flush=True)
    print()
    print(table(["level", "variant", "tune R1 R5 R10 MRR", "report", "all"], rows))
    print(f"JSON: {write_json('locomo_tune', {'dump': args.dump, 'results': results})}")


if __name__ == "__main__":
    main()
