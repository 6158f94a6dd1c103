"""Ranking among thousands: every LoCoMo dev conversation and both LongMemEval-S pools in one
project, searched as agents search (scoped to that project), beside the per-conversation stores.

    .venv/bin/python bench/pooled.py [--levels turn,session] [--dump DIR]

One project per level holds the five conversations' sessions (or turns) and the two pools'
sessions, each conversation and pool in a subtopic of its own: 2,847 entries at turn level
(2,760 LoCoMo turns and 87 LongMemEval sessions), 215 at session level. At turn level the
LongMemEval sessions are distractors only: their questions' evidence is turns, not asked there
(`--lme-turns` puts the pools in as turns too, 1,002 entries more and ~1,700 passages to
embed). Entries are written through the services and embedded
through the worker's code with bench/locomo.py's passage cache, so the vectors are those of
the per-conversation benches. Every question of bench/locomo.py and bench/longmemeval.py is
asked in hybrid mode with the project as its only filter and scored as there; the table sets
the per-conversation numbers (`--beside`, the JSON of the benches) beside the pooled ones, and
the drop in R@5 is the number to shrink. `--dump DIR` writes the candidate lists for
bench/stages_prepare.py --name pooled (and so bench/stages_tune.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._common import locomo_data
from bench._setup import ROOT, percentile, setup_django, table, write_json
from bench.locomo_data import (
    dump_item,
    parse_evidence,
    sessions_of,
    stage_inputs,
    turn_line,
    unit_of,
)
from bench.locomo_scoring import CachedProvider, mean_scores, score
from bench.longmemeval_data import session_body
from bench.longmemeval_data import turn_line as lme_turn_line

LME = ROOT / "bench" / "data" / "longmemeval-s-pools.json"
TUNE = {"conv-26", "conv-30", "conv-41"}


def ingest(samples, pools, level: str, actor, lme_turns: bool) -> tuple[dict[int, str], str]:
    """Everything in one project; units are `<conversation or pool>/<unit>`."""
    from tqdm import tqdm

    from knowledge.errors import AlreadyExists
    from knowledge.services import EntryFields, ProjectFields, entry_upsert, project_create

    slug = f"pooled-{level}"
    with contextlib.suppress(AlreadyExists):
        project_create(actor=actor, slug=slug, fields=ProjectFields(name=slug))
    units: dict[int, str] = {}

    def put(subtopic, title, body, kind, unit):
        fields = EntryFields(title=title, body=body, kind=kind)
        entry = entry_upsert(actor=actor, project=slug, subtopic=subtopic, fields=fields).entry
        units[entry.pk] = unit

    for sample in tqdm(samples, desc=f"ingest LoCoMo {level}", unit="conv"):
        sid = sample["sample_id"]
        for n, date, turns in sessions_of(sample["conversation"]):
            if level == "session":
                body = "\n".join(turn_line(t) for t in turns)
                put(sid, f"Session {n} ({date})", body, "session", f"{sid}/S{n}")
                continue
            for t in turns:
                put(f"{sid}/session-{n}", f"{t['dia_id']} {t['speaker']} ({date})",
                    turn_line(t), "turn", f"{sid}/{t['dia_id']}")  # fmt: skip
    for pool in tqdm(pools, desc=f"ingest LongMemEval {level}", unit="pool"):
        for n, session in enumerate(pool["sessions"], 1):
            if level == "session" or not lme_turns:
                put(pool["id"], f"Session {n} ({session['date']})", session_body(session),
                    "session", f"{pool['id']}/{session['id']}")  # fmt: skip
                continue
            for i, turn in enumerate(session["turns"]):
                put(f"{pool['id']}/session-{n}",
                    f"S{n}:{i} {turn['role'].capitalize()} ({session['date']})",
                    lme_turn_line(turn), "turn", f"{pool['id']}/{session['id']}:{i}")  # fmt: skip
    return units, slug


def questions(samples, pools, level: str, lme_turns: bool) -> list[tuple[str, str, set, str]]:
    """(origin split, question, gold units, category) for every question either bench asks."""
    out = []
    for s in samples:
        sid = s["sample_id"]
        split = "locomo-tune" if sid in TUNE else "locomo-report"
        for qa in s["qa"]:
            evidence = parse_evidence(qa.get("evidence", []))
            if qa.get("category") == 5 or not evidence:
                continue
            gold = {f"{sid}/{unit_of(e, level)}" for e in evidence}
            out.append((split, str(qa["question"]), gold, qa.get("category")))
    for pool in pools if level == "session" or lme_turns else []:
        for q in pool["questions"]:
            ids = q["answer_session_ids"] if level == "session" else q["answer_turns"]
            if ids:
                gold = {f"{pool['id']}/{i}" for i in ids}
                out.append((f"lme-{pool['split']}", q["question"], gold, q["type"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="LoCoMo dev JSON (default: shared/bench-data/)")
    parser.add_argument("--levels", default="turn,session")
    parser.add_argument("--db", default="cairn_bench_pooled")
    parser.add_argument("--dump", default="", help="write the candidate lists to DIR")
    parser.add_argument(
        "--lme-turns", action="store_true", help="LongMemEval as turns at turn level, and asked"
    )
    parser.add_argument(
        "--beside",
        default="",
        help="per-store scores to set beside: stages_tune JSON (its `engine` rows)",
    )
    args = parser.parse_args()
    logging.getLogger("knowledge.services.background").setLevel(logging.ERROR)
    samples = json.loads(locomo_data(args.data).read_text())
    pools = json.loads(LME.read_text())["pools"]
    setup_django(args.db)

    from tqdm import tqdm

    from bench.locomo_data import write_dump
    from knowledge.actors import Actor
    from knowledge.search import SearchFilters, query_vectors
    from knowledge.search.engine import rankings, search_entries
    from knowledge.search.providers import get_provider
    from knowledge.services.embeddings import entries_embed, lexeme_stats_refresh
    from tests.factories import UserFactory

    actor = Actor.for_user(UserFactory(username="bench"), agent="agent:bench")
    cached = CachedProvider(get_provider(), ROOT / "var" / "bench-cache" / "embeddings.sqlite3")
    beside = json.loads(Path(args.beside).read_text())["results"]["engine"] if args.beside else {}
    report, rows_out = {"levels": {}}, []
    for level in [lv for lv in args.levels.split(",") if lv]:
        units, slug = ingest(samples, pools, level, actor, args.lme_turns)
        lexeme_stats_refresh()
        ids = list(units)
        for i in tqdm(range(0, len(ids), 32), desc=f"embed {level}"):
            entries_embed(entry_ids=ids[i : i + 32], provider=cached)
        filters = SearchFilters.parse(project=slug)
        by_split: dict[str, list[dict]] = {}
        latency, dumped = [], []
        for split, question, gold, category in tqdm(
            questions(samples, pools, level, args.lme_turns), desc=f"search {level}", unit="q"
        ):
            query_vectors.clear()
            start = time.perf_counter()
            hits = search_entries(actor, question, filters=filters, limit=20, mode="hybrid")
            latency.append((time.perf_counter() - start) * 1000)
            by_split.setdefault(split, []).append(score([units.get(h.id, "?") for h in hits], gold))
            if args.dump:
                found = rankings(actor, question, mode="hybrid", candidates=50, filters=filters)
                item = dump_item(
                    "pooled",
                    question,
                    {"category": category},
                    gold,
                    found,
                    [],
                    stage_inputs(actor, question, filters),
                )
                dumped.append({**item, "split": split})
        if args.dump:
            write_dump(Path(args.dump), level, dumped, units, {"pooled": slug}, name="pooled")
        level_report = {"entries": len(units), "p50_ms": round(percentile(latency, 50), 1)}
        for split, rows in sorted(by_split.items()):
            m = mean_scores(rows)
            level_report[split] = {k: round(v, 4) for k, v in m.items()}
            origin, _, part = split.partition("-")
            name = {"locomo": "locomo", "lme": "longmemeval"}[origin]
            alone = beside.get(f"{name} {level} {part}")
            rows_out.append(
                [level, split, len(rows), len(units),
                 *[m[f"recall@{k}"] for k in (1, 5, 10)], m["mrr"],
                 f"{alone['recall@5']:.3f}" if alone else "-",
                 f"{m['recall@5'] - alone['recall@5']:+.3f}" if alone else "-"]
            )  # fmt: skip
        report["levels"][level] = level_report
        print(f"{level}: {len(units)} entries, search p50 {statistics.median(latency):.1f} ms")
    headers = ["level", "questions", "q", "entries", "R@1", "R@5", "R@10", "MRR",
               "R@5 per store", "drop"]  # fmt: skip
    print()
    print(table(headers, rows_out))
    print(f"JSON: {write_json('pooled', report)}")


if __name__ == "__main__":
    main()
