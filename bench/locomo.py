"""LoCoMo retrieval benchmark: Cairn's search (text, semantic, hybrid) against in-process BM25.

    .venv/bin/python bench/locomo.py --data ../shared/bench-data/locomo-dev.json

Ingests each conversation into its own project through the services at session level (one
entry per session) and turn level (one entry per turn), embeds the entries (passage vectors are
cached under var/bench-cache/ so a re-run does not embed again), then searches with every
non-adversarial question. Scoring follows the data's README. Prints a table, writes JSON.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._common import locomo_data
from bench._setup import ROOT, percentile, setup_django, table, write_json
from bench.locomo_data import dump_item, ingest, parse_evidence, stage_inputs, unit_of, write_dump
from bench.locomo_scoring import (
    CV_HEADERS,
    KS,
    CachedProvider,
    bm25_tokens,
    cross_validate,
    mean_scores,
    score,
    search_as,
    split_of,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data", help="LoCoMo dev JSON (default: shared/bench-data/ beside or above the checkout)"
    )
    parser.add_argument("--levels", default="session,turn")
    parser.add_argument(
        "--modes",
        default="text,semantic,hybrid",
        help="hybrid:learned and hybrid:off: hybrid with the second stage on or off",
    )
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
    from knowledge.search.engine import default_fusion, fuse, rankings
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
    split_rows = []
    for level in [lv for lv in args.levels.split(",") if lv]:
        units, projects, ingest_s = ingest(samples, level, actor)
        ids = list(units)
        lexeme_stats_refresh()
        embed_start = time.perf_counter()
        semantic = bool({"semantic", "hybrid"} & {m.split(":")[0] for m in modes})
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
        by_split: dict[tuple[str, str], list[dict]] = {}
        for sid, qa in tqdm(questions, desc=f"search {level}", unit="q"):
            gold = {unit_of(e, level) for e in parse_evidence(qa["evidence"])}
            question = str(qa["question"])
            for mode in modes:
                query_vectors.clear()  # cold: each mode embeds the question itself
                start = time.perf_counter()
                with stages.collect() as spent:
                    hits = search_as(
                        actor,
                        question,
                        filters=SearchFilters.parse(project=projects[sid]),
                        mode=mode,
                    )
                latency[mode].append((time.perf_counter() - start) * 1000)
                if mode.startswith("hybrid"):
                    hybrid_stages.append(spent)
                empty[mode] += not hits
                per_mode[mode].append(score([units.get(h.id, "?") for h in hits], gold))
                by_split.setdefault((mode, split_of(sid)), []).append(per_mode[mode][-1])
            start = time.perf_counter()
            index, pks = bm25[sid]
            scores = index.get_scores(bm25_tokens(question))
            order = sorted(range(len(pks)), key=lambda i: -scores[i])[:20]
            latency["bm25-stem"].append((time.perf_counter() - start) * 1000)
            bm25_ranked = [units[pks[i]] for i in order]
            per_mode["bm25-stem"].append(score(bm25_ranked, gold))
            if (sweep or args.cv or args.dump) and semantic:
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
                    dumped.append(
                        dump_item(
                            sid,
                            question,
                            qa,
                            gold,
                            found,
                            bm25_ranked,
                            stage_inputs(
                                actor, question, SearchFilters.parse(project=projects[sid])
                            ),
                        )
                    )
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
            if not rows:  # no semantic mode asked for: nothing to sweep
                continue
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
        level_report["splits"] = {}
        for (mode, split), rows in sorted(by_split.items()):
            means = mean_scores(rows)
            level_report["splits"].setdefault(split, {})[mode] = {
                k: round(v, 4) for k, v in means.items()
            }
            split_rows.append(
                [level, split, mode, len(rows), *[means[f"recall@{k}"] for k in KS], means["mrr"]]
            )
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
    print("\nBy split (tune: conv-26, 30, 41; report: conv-42, 43):")
    print(table(["level", "split", "mode", "q", *[f"R@{k}" for k in KS], "MRR"], split_rows))
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
