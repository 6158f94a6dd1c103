"""LongMemEval retrieval benchmark: Cairn's search against in-process BM25, scored as LoCoMo.

    .venv/bin/python bench/longmemeval.py                      # the committed pools
    .venv/bin/python bench/longmemeval.py --prepare SOURCE     # rebuild them from the data

Loads each pool (bench/longmemeval_data.py) into its own project through the services, as
bench/locomo.py loads a conversation: one entry per session (title `Session N (date)`, body
`User: ...` / `Assistant: ...` lines), or one per turn with `--levels turn`. Embeds them through
the worker's code with the same passage cache (var/bench-cache/), asks every question in its
pool and scores with bench/locomo.py's definitions, per split (dev / held-out).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._setup import ROOT, percentile, setup_django, table, write_json
from bench.locomo_scoring import KS, CachedProvider, bm25_tokens, mean_scores, score, search_as
from bench.longmemeval_data import describe, make_pools, read_source, session_body, turn_line

DEFAULT_DATA = ROOT / "bench" / "data" / "longmemeval-s-pools.json"


def ingest(pools: list[dict], level: str, actor) -> tuple[dict[int, str], dict[str, str]]:
    """Returns (entry id -> evidence unit, pool id -> project slug)."""
    from knowledge.errors import AlreadyExists
    from knowledge.services import EntryFields, ProjectFields, entry_upsert, project_create

    units: dict[int, str] = {}
    projects: dict[str, str] = {}
    for pool in pools:
        slug = f"lme-{level}-{pool['id']}"
        with contextlib.suppress(AlreadyExists):
            project_create(actor=actor, slug=slug, fields=ProjectFields(name=slug))
        projects[pool["id"]] = slug
        for n, session in enumerate(pool["sessions"], 1):
            if level == "session":
                fields = EntryFields(
                    title=f"Session {n} ({session['date']})",
                    body=session_body(session),
                    kind="session",
                )
                units[entry_upsert(actor=actor, project=slug, fields=fields).entry.pk] = session[
                    "id"
                ]
                continue
            for i, turn in enumerate(session["turns"]):
                fields = EntryFields(
                    title=f"S{n}:{i} {turn['role'].capitalize()} ({session['date']})",
                    body=turn_line(turn),
                    kind="turn",
                )
                entry = entry_upsert(
                    actor=actor, project=slug, subtopic=f"session-{n}", fields=fields
                ).entry
                units[entry.pk] = f"{session['id']}:{i}"
    return units, projects


def gold_of(question: dict, level: str) -> set[str]:
    return set(question["answer_session_ids" if level == "session" else "answer_turns"])


def bm25_indexes(projects: dict[str, str]) -> dict[str, tuple]:
    from rank_bm25 import BM25Okapi

    from knowledge.models import Entry

    out = {}
    for pool_id, slug in projects.items():
        rows = list(Entry.objects.filter(project__slug=slug).values_list("pk", "title", "body"))
        out[pool_id] = (
            BM25Okapi([bm25_tokens(f"{t}\n{b}") for _, t, b in rows]),
            [pk for pk, _, _ in rows],
        )
    return out


def run_level(pools, level, modes, actor, cached, dump: str = "") -> dict:
    """Scores per split and mode: {split: {mode: {metric: value}}}, plus latency. With `dump`,
    each question's candidate lists are written for offline tuning, as bench/locomo.py does."""
    from tqdm import tqdm

    from bench.locomo_data import dump_item, stage_inputs, write_dump
    from knowledge.search import SearchFilters, query_vectors
    from knowledge.search.engine import rankings
    from knowledge.services.embeddings import entries_embed, lexeme_stats_refresh

    units, projects = ingest(pools, level, actor)
    lexeme_stats_refresh()
    ids = list(units)
    start = time.perf_counter()
    if {"semantic", "hybrid"} & {m.split(":")[0] for m in modes}:
        for i in tqdm(range(0, len(ids), 32), desc=f"embed {level}"):
            entries_embed(entry_ids=ids[i : i + 32], provider=cached)
    embed_s = time.perf_counter() - start
    bm25 = bm25_indexes(projects)
    rows: dict[str, dict[str, list[dict]]] = {}
    by_type: dict[str, dict[str, list[dict]]] = {}  # both splits: LongMemEval's question types
    latency: dict[str, list[float]] = {m: [] for m in [*modes, "bm25-stem"]}
    asked = [(pool, q) for pool in pools for q in pool["questions"] if gold_of(q, level)]
    dumped: list[dict] = []
    for pool, q in tqdm(asked, desc=f"search {level}", unit="q"):
        gold = gold_of(q, level)
        split = rows.setdefault(pool["split"], {m: [] for m in latency})
        for mode in modes:
            query_vectors.clear()  # cold: each mode embeds the question itself
            t0 = time.perf_counter()
            hits = search_as(
                actor,
                q["question"],
                filters=SearchFilters.parse(project=projects[pool["id"]]),
                mode=mode,
            )
            latency[mode].append((time.perf_counter() - t0) * 1000)
            split[mode].append(score([units.get(h.id, "?") for h in hits], gold))
            by_type.setdefault(q["type"], {}).setdefault(mode, []).append(split[mode][-1])
        t0 = time.perf_counter()
        index, pks = bm25[pool["id"]]
        scores = index.get_scores(bm25_tokens(q["question"]))
        order = sorted(range(len(pks)), key=lambda i: -scores[i])[:20]
        latency["bm25-stem"].append((time.perf_counter() - t0) * 1000)
        split["bm25-stem"].append(score([units[pks[i]] for i in order], gold))
        by_type.setdefault(q["type"], {}).setdefault("bm25-stem", []).append(split["bm25-stem"][-1])
        if dump:
            found = rankings(
                actor,
                q["question"],
                mode="hybrid",
                candidates=50,
                filters=SearchFilters.parse(project=projects[pool["id"]]),
            )
            qa = {"category": q["type"], "split": pool["split"], "date": q.get("date", "")}
            item = dump_item(
                pool["id"],
                q["question"],
                qa,
                gold,
                found,
                [],
                stage_inputs(
                    actor, q["question"], SearchFilters.parse(project=projects[pool["id"]])
                ),
            )
            dumped.append({**item, "split": pool["split"], "question_date": q.get("date", "")})
    if dump:
        write_dump(Path(dump), level, dumped, units, projects, name="longmemeval")
    return {
        "entries": len(units),
        "embed_seconds": round(embed_s, 1),
        "chunks_embedded_now": cached.embedded,
        "splits": {
            split: {
                mode: {"questions": len(r), **{k: round(v, 4) for k, v in mean_scores(r).items()}}
                for mode, r in by_mode.items()
            }
            for split, by_mode in rows.items()
        },
        "types": {
            kind: {
                mode: {
                    "questions": len(r),
                    "recall@5": round(mean_scores(r)["recall@5"], 4),
                    "mrr": round(mean_scores(r)["mrr"], 4),
                }
                for mode, r in modes_.items()
            }
            for kind, modes_ in sorted(by_type.items())
        },
        "p50_ms": {m: round(percentile(v, 50), 1) for m, v in latency.items()},
    }


def prepare(args) -> None:
    items = list(read_source(Path(args.prepare)))
    pools = make_pools(
        items, questions=args.questions, per_pool=args.per_pool, source=describe(Path(args.prepare))
    )
    Path(args.data).write_text(json.dumps(pools, ensure_ascii=False, indent=0))
    sessions = sum(len(p["sessions"]) for p in pools["pools"])
    print(f"{len(pools['pools'])} pools, {sessions} sessions, {len(items)} items -> {args.data}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="the pools file")
    parser.add_argument("--levels", default="session", help="session,turn")
    parser.add_argument(
        "--modes",
        default="text,semantic,hybrid",
        help="hybrid:learned and hybrid:off: hybrid with the second stage on or off",
    )
    parser.add_argument("--db", default="cairn_bench_longmemeval")
    parser.add_argument(
        "--prepare",
        default="",
        help="write --data from LongMemEval-S: longmemeval_s_cleaned.json, a folder of "
        "per-question files or a git directory of hussainzs/Memoria; then stop",
    )
    parser.add_argument(
        "--dump",
        default="",
        help="write each level's candidate lists, query vectors and entries to DIR (pickles) "
        "for offline tuning (bench/stages_tune.py)",
    )
    parser.add_argument("--questions", type=int, default=50, help="with --prepare")
    parser.add_argument("--per-pool", type=int, default=25, help="with --prepare")
    args = parser.parse_args()
    if args.prepare:
        prepare(args)
        return
    data = Path(args.data)
    if not data.exists():
        sys.exit(f"No pools file at {data}; build one with --prepare (see bench/data/README.md)")
    pools = json.loads(data.read_text())["pools"]
    logging.getLogger("knowledge.services.background").setLevel(logging.ERROR)
    setup_django(args.db)

    from knowledge.actors import Actor
    from knowledge.search.providers import get_provider
    from tests.factories import UserFactory

    actor = Actor.for_user(UserFactory(username="bench"), agent="agent:bench")
    cached = CachedProvider(get_provider(), ROOT / "var" / "bench-cache" / "embeddings.sqlite3")
    modes = [m for m in args.modes.split(",") if m]
    report: dict = {"data": str(data), "model": cached.name, "levels": {}}
    out = []
    for level in [lv for lv in args.levels.split(",") if lv]:
        result = run_level(pools, level, modes, actor, cached, args.dump)
        report["levels"][level] = result
        cached.embedded = 0
        for split, by_mode in sorted(result["splits"].items()):
            for mode, m in by_mode.items():
                out.append(
                    [
                        level,
                        split,
                        mode,
                        m["questions"],
                        *[m[f"recall@{k}"] for k in KS],
                        m["hit@5"],
                        m["mrr"],
                        result["p50_ms"][mode],
                    ]
                )
    headers = ["level", "split", "mode", "q", *[f"R@{k}" for k in KS], "hit@5", "MRR", "p50 ms"]
    print()
    print(table(headers, out))
    kinds = [*modes, "bm25-stem"]
    by_kind = [
        [level, kind, by_mode[kinds[0]]["questions"],
         *[f"{by_mode[m]['recall@5']:.3f} / {by_mode[m]['mrr']:.3f}" for m in kinds]]
        for level, r in report["levels"].items()
        for kind, by_mode in r["types"].items()
    ]  # fmt: skip
    print("\nBy question type, both splits (R@5 / MRR):")
    print(table(["level", "type", "q", *kinds], by_kind))
    for level, r in report["levels"].items():
        print(
            f"{level}: {r['entries']} entries, embed {r['embed_seconds']} s "
            f"({r['chunks_embedded_now']} chunks computed now)"
        )
    print(f"JSON: {write_json('longmemeval', report)}")


if __name__ == "__main__":
    main()
