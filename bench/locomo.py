"""LoCoMo retrieval benchmark: Cairn's search (text, semantic, hybrid) against in-process BM25.

    .venv/bin/python bench/locomo.py --data ../shared/bench-data/locomo-dev.json

Ingests each conversation into its own project through the services at session level (one
entry per session) and turn level (one entry per turn), embeds the entries (passage vectors are
cached under var/bench-cache/ so a re-run does not embed again), then searches with every
non-adversarial question. Scoring follows the data's README. Prints a table, writes JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import math
import re
import sqlite3
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._common import locomo_data
from bench._setup import ROOT, percentile, setup_django, table, write_json

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


def parse_evidence(raw: list) -> list[str]:
    ids = []
    for item in raw:
        for part in str(item).split(";"):
            part = part.strip()
            if re.fullmatch(r"D\d+:\d+", part):
                ids.append(part)
    return ids


def sessions_of(conv: dict) -> list[tuple[int, str, list[dict]]]:
    out = []
    for key, turns in conv.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(turns, list):
            n = int(m.group(1))
            out.append((n, conv.get(f"session_{n}_date_time", ""), turns))
    return sorted(out)


def turn_line(turn: dict) -> str:
    line = f"{turn['speaker']}: {turn.get('text', '')}"
    if turn.get("blip_caption"):
        line += f" [shares an image: {turn['blip_caption']}]"
    return line


def ingest(samples, level: str, actor) -> tuple[dict[int, str], dict[str, str], float]:
    """Returns (entry id -> evidence unit, sample id -> project slug, seconds)."""
    from knowledge.errors import AlreadyExists
    from knowledge.services import EntryFields, ProjectFields, entry_upsert, project_create

    units: dict[int, str] = {}
    projects: dict[str, str] = {}
    start = time.perf_counter()
    from tqdm import tqdm

    for sample in tqdm(samples, desc=f"ingest {level}", unit="conv"):
        slug = f"locomo-{level}-{sample['sample_id']}"
        with contextlib.suppress(AlreadyExists):
            project_create(actor=actor, slug=slug, fields=ProjectFields(name=slug))
        projects[sample["sample_id"]] = slug
        for n, date, turns in sessions_of(sample["conversation"]):
            if level == "session":
                body = "\n".join(turn_line(t) for t in turns)
                entry = entry_upsert(
                    actor=actor,
                    project=slug,
                    fields=EntryFields(title=f"Session {n} ({date})", body=body, kind="session"),
                ).entry
                units[entry.pk] = f"S{n}"
            else:
                for t in turns:
                    entry = entry_upsert(
                        actor=actor,
                        project=slug,
                        subtopic=f"session-{n}",
                        fields=EntryFields(
                            title=f"{t['dia_id']} {t['speaker']} ({date})",
                            body=turn_line(t),
                            kind="turn",
                        ),
                    ).entry
                    units[entry.pk] = t["dia_id"]
    return units, projects, time.perf_counter() - start


def unit_of(evidence: str, level: str) -> str:
    return "S" + evidence[1:].split(":")[0] if level == "session" else evidence


def score(ranked: list[str], gold: set[str]) -> dict:
    out = {}
    for k in KS:
        out[f"recall@{k}"] = len(gold & set(ranked[:k])) / len(gold)
    out["hit@5"] = float(bool(gold & set(ranked[:5])))
    out["mrr"] = next((1 / (i + 1) for i, u in enumerate(ranked) if u in gold), 0.0)
    return out


def mean_scores(rows: list[dict]) -> dict:
    return {k: statistics.fmean(r[k] for r in rows) for k in rows[0]} if rows else {}


def dump_item(sid, question, qa, gold, found, bm25_ranked) -> dict:
    from knowledge.search.providers import get_provider
    from knowledge.search.query_vectors import query_vector

    provider = get_provider()
    return {
        "sid": sid,
        "question": question,
        "category": qa.get("category"),
        "gold": sorted(gold),
        "text": found.text,
        "text_scores": found.text_scores,
        "semantic": found.semantic,
        "semantic_scores": found.semantic_scores,
        "bm25": bm25_ranked,
        "vector": query_vector(provider, question).result() if provider else None,
    }


def write_dump(folder: Path, level: str, items: list[dict], units, projects) -> None:
    """Everything offline tuning needs: the questions' candidate lists and the entries."""
    import pickle

    from knowledge.models import Entry

    folder.mkdir(parents=True, exist_ok=True)
    entries = {
        pk: {"title": t, "body": b, "created": c, "unit": units[pk]}
        for pk, t, b, c in Entry.objects.filter(pk__in=list(units)).values_list(
            "pk", "title", "body", "created_at"
        )
    }
    payload = {"level": level, "items": items, "entries": entries, "projects": projects}
    (folder / f"locomo-{level}.pkl").write_bytes(pickle.dumps(payload))


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data", help="LoCoMo dev JSON (default: shared/bench-data/ beside or above the checkout)"
    )
    parser.add_argument("--levels", default="session,turn")
    parser.add_argument("--modes", default="text,semantic,hybrid")
    parser.add_argument("--limit-questions", type=int, default=0, help="0 = all")
    parser.add_argument("--db", default="cairn_bench_locomo")
    parser.add_argument(
        "--cv",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="choose the fusion by leave-one-conversation-out cross-validation",
    )
    parser.add_argument(
        "--floors",
        default="0,0.7,0.75,0.78,0.8,0.82,0.85",
        help="relevance floors (CAIRN_SEARCH_MIN_SIMILARITY) to measure on the hybrid ranking",
    )
    parser.add_argument(
        "--weights",
        default="0,0.1,0.2,0.25,0.3,0.4,0.5,0.75,1.0",
        help="semantic weights to sweep (text weight 1.0) for the tuning table",
    )
    parser.add_argument(
        "--dump",
        default="",
        help="write each level's candidate lists, query vectors and entries to DIR (pickles) "
        "for offline tuning",
    )
    args = parser.parse_args()
    logging.getLogger("knowledge.services.background").setLevel(logging.ERROR)

    data_path = locomo_data(args.data)
    samples = json.loads(data_path.read_text())
    setup_django(args.db)

    from django.conf import settings
    from rank_bm25 import BM25Okapi
    from tqdm import tqdm

    from knowledge.actors import Actor
    from knowledge.models import Entry
    from knowledge.search import SearchFilters, query_vectors, stages
    from knowledge.search.engine import default_fusion, fuse, rankings, search_entries
    from knowledge.search.fusion import above_floor
    from knowledge.search.providers import get_provider
    from knowledge.services.embeddings import entries_embed, lexeme_stats_refresh
    from tests.factories import UserFactory

    actor = Actor.for_user(UserFactory(username="bench"), agent="agent:bench")
    modes = [m for m in args.modes.split(",") if m]
    sweep = [float(w) for w in args.weights.split(",") if w]
    floors = [float(f) for f in args.floors.split(",") if f]
    floor_rows = []
    provider = get_provider()
    cached = CachedProvider(provider, ROOT / "var" / "bench-cache" / "embeddings.sqlite3")
    report: dict = {
        "data": str(data_path),
        "settings": {
            "text_weight": settings.CAIRN_SEARCH_TEXT_WEIGHT,
            "semantic_weight": settings.CAIRN_SEARCH_SEMANTIC_WEIGHT,
            "rrf_k": settings.CAIRN_SEARCH_RRF_K,
            "candidates": settings.CAIRN_SEARCH_CANDIDATES,
            "chunk_words": settings.CAIRN_CHUNK_WORDS,
            "chunk_overlap": settings.CAIRN_CHUNK_OVERLAP,
            "search_config": settings.CAIRN_SEARCH_CONFIG,
            "model": provider.name if provider else None,
        },
        "levels": {},
    }
    rows_out = []
    sweep_rows = []
    cv_rows = []
    stage_rows = []
    for level in [lv for lv in args.levels.split(",") if lv]:
        units, projects, ingest_s = ingest(samples, level, actor)
        ids = list(units)
        lexeme_stats_refresh()
        embed_start = time.perf_counter()
        semantic = bool({"semantic", "hybrid"} & set(modes))
        for i in tqdm(range(0, len(ids) if semantic else 0, 32), desc=f"embed {level}"):
            entries_embed(entry_ids=ids[i : i + 32], provider=cached)
        embed_s = time.perf_counter() - embed_start

        # BM25 baseline over the same entries, one index per conversation.
        bm25 = {}
        for sid, slug in projects.items():
            entries = list(
                Entry.objects.filter(project__slug=slug).values_list("pk", "title", "body")
            )
            bm25[sid] = (
                BM25Okapi([bm25_tokens(f"{t}\n{b}") for _, t, b in entries]),
                [pk for pk, _, _ in entries],
            )

        questions = [
            (s["sample_id"], qa)
            for s in samples
            for qa in s["qa"]
            if qa.get("category") != 5 and parse_evidence(qa.get("evidence", []))
        ]
        if args.limit_questions:
            questions = questions[: args.limit_questions]
        per_mode: dict[str, list[dict]] = {m: [] for m in [*modes, "bm25-stem"]}
        latency: dict[str, list[float]] = {m: [] for m in per_mode}
        empty: dict[str, int] = dict.fromkeys(per_mode, 0)
        sweep_scores: dict[float, list[dict]] = {w: [] for w in sweep}
        floor_scores: dict[float, list[dict]] = {f: [] for f in floors}
        floor_cut: dict[float, int] = dict.fromkeys(floors, 0)
        cv_items: list[tuple[str, set[str], object, list[str]]] = []
        hybrid_stages: list[dict[str, float]] = []
        dumped: list[dict] = []
        for sid, qa in tqdm(questions, desc=f"search {level}", unit="q"):
            gold = {unit_of(e, level) for e in parse_evidence(qa["evidence"])}
            question = str(qa["question"])
            for mode in modes:
                query_vectors.clear()  # cold: each mode embeds the question itself
                start = time.perf_counter()
                with stages.collect() as spent:
                    hits = search_entries(
                        actor,
                        question,
                        filters=SearchFilters.parse(project=projects[sid]),
                        limit=20,
                        mode=mode,
                    )
                latency[mode].append((time.perf_counter() - start) * 1000)
                if mode == "hybrid":
                    hybrid_stages.append(spent)
                empty[mode] += not hits
                per_mode[mode].append(score([units.get(h.id, "?") for h in hits], gold))
            start = time.perf_counter()
            index, pks = bm25[sid]
            scores = index.get_scores(bm25_tokens(question))
            order = sorted(range(len(pks)), key=lambda i: -scores[i])[:20]
            latency["bm25-stem"].append((time.perf_counter() - start) * 1000)
            bm25_ranked = [units[pks[i]] for i in order]
            per_mode["bm25-stem"].append(score(bm25_ranked, gold))
            if (sweep or args.cv) and semantic:
                found = rankings(
                    actor,
                    question,
                    mode="hybrid",
                    candidates=50,
                    filters=SearchFilters.parse(project=projects[sid]),
                )
                for w in sweep:
                    fused = fuse(found, "hybrid", text_weight=1.0, semantic_weight=w)[:20]
                    sweep_scores[w].append(score([units.get(i, "?") for i, _ in fused], gold))
                cv_items.append((sid, gold, found, bm25_ranked))
                if args.dump:
                    dumped.append(dump_item(sid, question, qa, gold, found, bm25_ranked))
                fused = fuse(found, "hybrid")
                for f in floors:
                    kept = above_floor(fused, found.text, found.semantic_scores, f)[:20]
                    floor_cut[f] += len(fused[:20]) - len(kept)
                    floor_scores[f].append(score([units.get(i, "?") for i, _ in kept], gold))
        if args.dump:
            write_dump(Path(args.dump), level, dumped, units, projects)
        level_report = {
            "entries": len(units),
            "questions": len(questions),
            "ingest_seconds": round(ingest_s, 1),
            "embed_seconds": round(embed_s, 1),
            "embedded_now": cached.embedded,
            "model_seconds": round(cached.seconds, 1),
            "modes": {},
            "sweep": {},
        }
        for mode, rows in per_mode.items():
            means = mean_scores(rows)
            level_report["modes"][mode] = {
                **{k: round(v, 4) for k, v in means.items()},
                "empty": empty[mode],
                "p50_ms": round(percentile(latency[mode], 50), 1),
                "p95_ms": round(percentile(latency[mode], 95), 1),
            }
            rows_out.append(
                [
                    level,
                    mode,
                    *[means[f"recall@{k}"] for k in KS],
                    means["hit@5"],
                    means["mrr"],
                    empty[mode],
                    percentile(latency[mode], 50),
                    percentile(latency[mode], 95),
                ]
            )
        for w, rows in sweep_scores.items():
            means = mean_scores(rows)
            level_report["sweep"][str(w)] = {k: round(v, 4) for k, v in means.items()}
            sweep_rows.append(
                [level, w, *[means[f"recall@{k}"] for k in KS], means["hit@5"], means["mrr"]]
            )
        level_report["floors"] = {}
        for f, rows in floor_scores.items():
            if not rows:
                continue
            means = mean_scores(rows)
            level_report["floors"][str(f)] = {
                **{k: round(v, 4) for k, v in means.items()},
                "hits_dropped_per_query": round(floor_cut[f] / len(rows), 2),
            }
            floor_rows.append(
                [level, f, *[means[f"recall@{k}"] for k in KS], means["mrr"],
                 floor_cut[f] / len(rows)]
            )  # fmt: skip
        if hybrid_stages:
            names = sorted({n for st in hybrid_stages for n in st})
            level_report["hybrid_stages_p50_ms"] = {
                n: round(statistics.median(st.get(n, 0.0) for st in hybrid_stages), 2)
                for n in names
            }
            for n, v in level_report["hybrid_stages_p50_ms"].items():
                stage_rows.append([level, n, v])
        if args.cv and cv_items:
            level_report["cv"] = cross_validate(
                cv_items, units, default_fusion(), fuse, level, cv_rows
            )
        report["levels"][level] = level_report
        cached.embedded, cached.seconds = 0, 0.0

    headers = [
        "level",
        "mode",
        *[f"R@{k}" for k in KS],
        "hit@5",
        "MRR",
        "empty",
        "p50 ms",
        "p95 ms",
    ]
    print()
    print(table(headers, rows_out))
    if sweep_rows:
        print("\nFusion sweep (text weight 1.0, k=60; semantic weight below):")
        print(table(["level", "sem w", *[f"R@{k}" for k in KS], "hit@5", "MRR"], sweep_rows))
    if floor_rows:
        print("\nRelevance floor (hybrid; meaning-only hits below the similarity dropped):")
        print(table(["level", "floor", *[f"R@{k}" for k in KS], "MRR", "dropped/q"], floor_rows))
    if stage_rows:
        print("\nWhere an in-process hybrid search's time goes (p50 ms, cold query vectors):")
        print(table(["level", "stage", "p50 ms"], stage_rows))
    if cv_rows:
        print(
            "\nLeave-one-conversation-out: fusion tuned on four conversations "
            "(mean of R@1, R@5, R@10, MRR), scored on the fifth:"
        )
        print(table(CV_HEADERS, cv_rows))
    for level, lr in report["levels"].items():
        rate = lr["embedded_now"] / lr["model_seconds"] if lr["model_seconds"] else math.nan
        print(
            f"{level}: {lr['entries']} entries, ingest {lr['ingest_seconds']} s, embed "
            f"{lr['embed_seconds']} s ({lr['embedded_now']} chunks computed now, "
            f"{rate:.1f} chunks/s)"
        )
    print(f"JSON: {write_json('locomo', report)}")


if __name__ == "__main__":
    main()
