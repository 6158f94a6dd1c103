"""Variants measured by bench/locomo_tune.py (name -> run() keyword arguments)."""

from __future__ import annotations

from bench.locomo_tune import engine_text, variant_text

VARIANTS = {
    "engine": {"text_fn": engine_text},
    "base": {"text_fn": variant_text()},
}
for w in (
    "{0.1, 0.2, 0.4, 0.4}",
    "{0.1, 0.2, 0.4, 0.2}",
    "{0.1, 0.2, 0.2, 0.2}",
    "{0.1, 0.2, 0.4, 0.6}",
    "{0.1, 0.4, 0.4, 1.0}",
    "{0.1, 0.2, 0.2, 1.0}",
):
    VARIANTS["w" + w.strip("{}").replace(" ", "").replace(",", "_")] = {
        "text_fn": variant_text(weights=w)
    }
for n in (0, 2, 8, 16, 32, 33):
    VARIANTS[f"norm{n}"] = {"text_fn": variant_text(norm=n)}
for c in (0.1, 0.3, 1.0):
    VARIANTS[f"cover{c}"] = {"text_fn": variant_text(cover=c)}
for a in (0.25, 0.5, 0.75, 1.0):
    VARIANTS[f"lenpow{a}"] = {"text_fn": variant_text(norm=0, lenpow=a)}
VARIANTS["norm32_w6"] = {"text_fn": variant_text(norm=32, weights="{0.1, 0.2, 0.4, 0.6}")}
VARIANTS["norm0_w6"] = {"text_fn": variant_text(norm=0, weights="{0.1, 0.2, 0.4, 0.6}")}


def prf_text(k=3, m=10, beta=0.3, norm=1, base_norm=1, fusion_first=True):
    """Words-side pseudo-relevance feedback: the first pass's top k (fused, or text only)
    give their most telling lexemes (tf x idf, tf from the tsvector's positions), added to the
    query with weight beta x (their score / the best one's) x idf."""

    def fn(bench, item):
        # Imported here, not when the variants are listed: Django is set up after that.
        import math

        from django.db import connection

        from bench.locomo_tune import sql_text
        from knowledge.search.engine import default_fusion
        from knowledge.search.fulltext import Term
        from knowledge.search.fusion import fuse_lists

        scope, terms = item["_terms"]
        text, text_scores = sql_text(scope, terms, norm=base_norm)
        if fusion_first:
            sem, sem_scores = item["_sem"]
            top = [i for i, _ in fuse_lists(default_fusion(), text, text_scores, sem, sem_scores)]
        else:
            top = text
        top = top[:k]
        if not top:
            return text, text_scores
        key = ("_stats", item["sid"])
        if key not in bench.__dict__:
            with connection.cursor() as c:
                c.execute("SELECT word, sum(ndoc) FROM knowledge_lexemestat GROUP BY word")
                bench.__dict__[key] = dict(c.fetchall())
        ndocs = bench.__dict__[key]
        total = ndocs.get("", 1)
        with connection.cursor() as c:
            c.execute(
                "SELECT e.id, u.lexeme, coalesce(array_length(u.positions, 1), 1) "
                "FROM knowledge_entry e CROSS JOIN LATERAL unnest(e.search_vector) u "
                "WHERE e.id = ANY(%s)",
                [top],
            )
            rows = c.fetchall()
        lengths: dict[int, int] = {}
        for e, _, n in rows:
            lengths[e] = lengths.get(e, 0) + n
        have = {t.tsquery.strip("'") for t in terms}
        weight: dict[str, float] = {}
        for e, lexeme, n in rows:
            if lexeme in have or len(lexeme) < 3 or lexeme.isdigit():
                continue
            nd = ndocs.get(lexeme, 0)
            idf = math.log(1 + (total - nd + 0.5) / (nd + 0.5))
            weight[lexeme] = weight.get(lexeme, 0.0) + n / lengths[e] * idf
        best = sorted(weight.items(), key=lambda kv: -kv[1])[:m]
        if not best:
            return text, text_scores
        top_w = best[0][1]
        extra = []
        boosts = {}
        for lexeme, w in best:
            nd = ndocs.get(lexeme, 0)
            idf = math.log(1 + (total - nd + 0.5) / (nd + 0.5))
            q = "'" + lexeme.replace("'", "''") + "'"
            extra.append(Term(q, nd, idf))
            boosts[q] = beta * w / top_w
        return sql_text(scope, [*terms, *extra], norm=norm, boosts=boosts)

    return fn


for k in (1, 3, 5):
    for beta in (0.1, 0.3):
        VARIANTS[f"prf_k{k}_b{beta}"] = {"text_fn": prf_text(k=k, beta=beta)}
VARIANTS["prf_k3_b0.3_m20"] = {"text_fn": prf_text(k=3, beta=0.3, m=20)}
VARIANTS["prf_text_k3_b0.3"] = {"text_fn": prf_text(k=3, beta=0.3, fusion_first=False)}
for w in (
    "0.1, 0.2, 0.4, 0.6",
    "0.1, 0.2, 0.4, 0.4",
    "0.1, 0.4, 0.4, 1.0",
    "0.1, 0.3, 0.4, 0.6",
    "0.1, 0.2, 0.4, 0.5",
    "0.1, 0.2, 0.4, 0.8",
):
    name = w.replace(", ", "_")
    VARIANTS[f"n33_{name}"] = {"text_fn": variant_text(norm=33, weights="{" + w + "}")}
    VARIANTS[f"n1_{name}"] = {"text_fn": variant_text(norm=1, weights="{" + w + "}")}
QWORDS = ("kind", "type", "mani", "much", "long", "describ", "mention", "say", "recent")
for b in (0.0, 0.5):
    VARIANTS[f"qwords{b}"] = {"text_fn": variant_text(boosts={f"'{w}'": b for w in QWORDS})}
for w in (
    "0.1, 0.5, 0.5, 1.0",
    "0.1, 0.6, 0.6, 1.0",
    "0.1, 0.4, 0.4, 0.8",
    "0.1, 0.3, 0.3, 1.0",
    "0.1, 0.4, 0.6, 1.0",
):
    name = w.replace(", ", "_")
    VARIANTS[f"n33_{name}"] = {"text_fn": variant_text(norm=33, weights="{" + w + "}")}
NEW = variant_text(norm=33, weights="{0.1, 0.4, 0.6, 1.0}")
VARIANTS["new"] = {"text_fn": NEW}
for w in (0.5, 0.6, 0.9, 1.0):
    # (mode, text weight, semantic weight): made a Fusion by run(), after Django is set up
    VARIANTS[f"new_sw{w}"] = {"text_fn": NEW, "fusion": ("score", 1.0, w)}


def zscore_fusion(sem_weight=0.75):
    """Each list's scores as z-scores over its candidates (missing: the list's minimum)."""
    import statistics as st

    from bench.locomo_tune import engine_text

    def z(ids, raw):
        vals = [raw[i] for i in ids]
        if len(vals) < 2:
            return dict.fromkeys(ids, 1.0), 0.0
        m, sd = st.fmean(vals), st.pstdev(vals) or 1.0
        return {i: (raw[i] - m) / sd for i in ids}, (min(vals) - m) / sd

    def post(bench, item, fused):
        text, ts = engine_text(bench, item)
        sem, ss = item["_sem"]
        zt, lt = z(text, ts) if text else ({}, 0.0)
        zs, ls = z(sem, ss) if sem else ({}, 0.0)
        ids = set(text) | set(sem)
        score = {i: zt.get(i, lt) + sem_weight * zs.get(i, ls) for i in ids}
        keep = {i for i, _ in fused}
        return sorted(((i, s) for i, s in score.items() if i in keep), key=lambda kv: -kv[1])

    return post


def neighbours(lam=0.3):
    """Turn level only: a turn's fused score plus lam x the better of its neighbours' (same
    session, previous or next turn); what a passage's surrounding context would give."""

    def post(bench, item, fused):
        if bench.level != "turn":
            return fused
        score = dict(fused)
        by_unit = {bench.units[i]: i for i in score}
        out = {}
        for i, s in score.items():
            sess, turn = bench.units[i][1:].split(":")
            near = [by_unit.get(f"D{sess}:{int(turn) + d}") for d in (-1, 1)]
            out[i] = s + lam * max([score[n] for n in near if n is not None] or [0.0])
        return sorted(out.items(), key=lambda kv: -kv[1])

    return post


for w in (0.5, 0.75, 1.0):
    VARIANTS[f"zscore{w}"] = {"text_fn": engine_text, "post": zscore_fusion(w)}
for lam in (0.1, 0.2, 0.4):
    VARIANTS[f"neigh{lam}"] = {"text_fn": engine_text, "post": neighbours(lam)}
for w in ("0.1, 0.4, 1.0, 1.0", "0.1, 0.3, 1.0, 1.0", "0.1, 0.2, 1.0, 1.0", "0.1, 0.2, 0.4, 1.0"):
    name = w.replace(", ", "_")
    VARIANTS[f"n33_{name}"] = {"text_fn": variant_text(norm=33, weights="{" + w + "}")}
    VARIANTS[f"n1_{name}"] = {"text_fn": variant_text(norm=1, weights="{" + w + "}")}
VARIANTS["new_qwords0.5"] = {
    "text_fn": variant_text(
        norm=33, weights="{0.1, 0.4, 1.0, 1.0}", boosts={f"'{w}'": 0.5 for w in QWORDS}
    )
}
for b in (0.25, 0.5, 0.75):
    for n in (0, 32):
        VARIANTS[f"bm25b{b}_n{n}"] = {
            "text_fn": variant_text(norm=n, weights="{0.1, 0.4, 1.0, 1.0}", bm25b=b)
        }
