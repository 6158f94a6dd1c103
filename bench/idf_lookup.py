"""What per-project word statistics cost: the full-text idf lookup, old shape against new.

    .venv/bin/python bench/idf_lookup.py [--db cairn_bench_locomo] [--data PATH] [--n 760]

Runs on the database bench/locomo.py leaves (five LoCoMo conversations, one project each) and
times, for the LoCoMo dev questions, the idf lookup of one query three ways in the same sitting:
the old global table (rebuilt here as a temporary table: the per-project counts summed by word,
which is exactly what the old refresh stored), the new lookup scoped to the one project searched
(what bench/locomo.py asks), and the new lookup over every project the reader may see (a search
without a project filter; the visible-projects subquery runs inside the same statement).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from _common import locomo_data
from _setup import percentile, setup_django, table, write_json

LEGACY_SQL = """
SELECT quote_literal(u.lexeme), coalesce(s.ndoc, 0)
FROM unnest(to_tsvector(%s::regconfig, %s)) u
LEFT JOIN bench_legacy_lexemestat s ON s.word = u.lexeme
UNION ALL
SELECT NULL, ndoc FROM bench_legacy_lexemestat WHERE word = ''
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", default="cairn_bench_locomo")
    parser.add_argument(
        "--data", help="LoCoMo dev JSON (default: shared/bench-data/ beside or above the checkout)"
    )
    parser.add_argument("--n", type=int, default=760, help="questions to time")
    args = parser.parse_args()
    args.data = locomo_data(args.data)
    setup_django(args.db)

    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from tqdm import tqdm

    from knowledge.actors import Actor
    from knowledge.search.fulltext import word_stats
    from knowledge.selectors import visible_projects

    bench_user = get_user_model().objects.filter(username="bench").first()
    if bench_user is None:
        raise SystemExit(f"No LoCoMo data in {args.db}; run bench/locomo.py first.")
    actor = Actor.for_user(bench_user, agent="agent:bench")
    samples = json.loads(Path(args.data).read_text())
    questions = [qa["question"] for s in samples for qa in s["qa"] if qa.get("category") != 5]
    questions = questions[: args.n]
    config = settings.CAIRN_SEARCH_CONFIG
    projects = list(visible_projects(actor).order_by("pk"))
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMP TABLE bench_legacy_lexemestat AS "
            "SELECT word, sum(ndoc)::int AS ndoc FROM knowledge_lexemestat GROUP BY word"
        )
        cursor.execute("ALTER TABLE bench_legacy_lexemestat ADD PRIMARY KEY (word)")
        cursor.execute("ANALYZE bench_legacy_lexemestat")
        cursor.execute("SELECT count(*) FROM knowledge_lexemestat")
        stat_rows = cursor.fetchone()[0]

    def legacy(q, _i):
        with connection.cursor() as cursor:
            cursor.execute(LEGACY_SQL, [config, q])
            return cursor.fetchall()

    def one_project(q, i):
        scope = visible_projects(actor).filter(pk=projects[i % len(projects)].pk)
        return word_stats([q], config, scope).terms

    def all_visible(q, _i):
        return word_stats([q], config, visible_projects(actor)).terms

    variants = {
        "old: global table": legacy,
        "new: the project searched": one_project,
        "new: every visible project": all_visible,
    }
    times: dict[str, list[float]] = {name: [] for name in variants}
    for fn in variants.values():  # warm up
        for i, q in enumerate(questions[:20]):
            fn(q, i)
    for i, q in enumerate(tqdm(questions, desc="idf lookups")):
        for name, fn in variants.items():  # interleaved, so load hits all alike
            t0 = time.perf_counter()
            fn(q, i)
            times[name].append((time.perf_counter() - t0) * 1000)

    rows = []
    base = statistics.median(times["old: global table"])
    for name, values in times.items():
        p50 = percentile(values, 50)
        rows.append(
            [
                name,
                len(values),
                p50,
                percentile(values, 90),
                percentile(values, 99),
                statistics.fmean(values),
                p50 - base,
            ]
        )
    headers = ["lookup", "n", "p50 ms", "p90 ms", "p99 ms", "mean ms", "Δp50 ms"]
    print(f"{len(projects)} visible projects, {stat_rows} statistics rows")
    print(table(headers, rows))
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    path = write_json(
        "idf_lookup",
        {
            "projects": len(projects),
            "stat_rows": stat_rows,
            "load": load,
            "rows": [dict(zip(headers, r, strict=True)) for r in rows],
        },
    )
    print(f"load average {' '.join(load)}; wrote {path}")


if __name__ == "__main__":
    main()
