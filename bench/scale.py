"""Search at scale: a synthetic corpus of 10k and 100k entries, search latency per mode with
filters, ingest rate through the services and reindex (full text + embedding) rates.

    .venv/bin/python bench/scale.py                 # 10k then 100k
    .venv/bin/python bench/scale.py --sizes 10000   # just 10k

What is real and what is not (printed with the results too):
- A sample of entries is written through the services (entry_upsert) to measure the ingest
  rate; the rest of the corpus is bulk-inserted with the same full-text expression as the
  service (no revisions), because ingesting 100k entries one by one would take most of an hour.
- Embedding throughput is measured with the configured model on a sample of real chunks and
  extrapolated to the corpus. The corpus's vectors are then synthesized from the sampled real
  vectors (mixtures of two plus noise, re-normalized) so that the HNSW index sees vectors from
  the model's own space; query vectors are real (embedded per search, included in latency).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import scale_costs
from bench._setup import percentile, setup_django, table, write_json
from bench.scale_corpus import PROJECTS, SUBTOPICS, Corpus, synthesize


def main() -> None:
    parser = argparse.ArgumentParser(description="Search latency and indexing rates at scale")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=100, help="queries per mode and filter")
    parser.add_argument("--ingest-sample", type=int, default=500)
    parser.add_argument("--embed-sample", type=int, default=64, help="entries embedded for real")
    parser.add_argument("--db", default="cairn_bench_scale")
    parser.add_argument("--modes", default="text,semantic,hybrid")
    parser.add_argument("--writes", type=int, default=100, help="timed writes per size")
    parser.add_argument(
        "--vector-writes", type=int, default=30, help="writes at 1/s, timed to their vectors"
    )
    parser.add_argument("--contexts", type=int, default=50, help="build_context calls per size")
    parser.add_argument("--no-costs", action="store_true", help="search latency only")
    parser.add_argument("--filters", default="none,project,project+subtopic,kinds+tags,after")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="keep the corpus of an earlier run and only measure search (and fill up if short)",
    )
    args = parser.parse_args()
    setup_django(args.db)

    import numpy as np
    from django.conf import settings
    from django.db import connection
    from tqdm import tqdm

    from knowledge.actors import Actor
    from knowledge.models import Entry, EntryChunk, Project, content_hash
    from knowledge.paths import entry_slug
    from knowledge.search import SearchFilters, search_entries, stages
    from knowledge.search.providers import get_provider
    from knowledge.services import (
        EntryFields,
        ProjectFields,
        entry_upsert,
        project_create,
        subtopic_ensure,
    )
    from knowledge.services.embeddings import (
        entries_embed,
        entries_reindex_text,
        lexeme_stats_refresh,
    )
    from tests.factories import UserFactory

    actor = Actor.for_user(UserFactory(username="bench"), agent="agent:bench")
    provider = get_provider()
    corpus = Corpus()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    report: dict = {"method": __doc__, "model": provider.name, "sizes": {}}

    # Start from an empty corpus so numbers belong to this run.
    if not args.reuse:
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE knowledge_entry, knowledge_historicalentry CASCADE")
    for p in range(PROJECTS):
        if not Project.objects.filter(slug=f"scale-{p}").exists():
            project_create(actor=actor, slug=f"scale-{p}", fields=ProjectFields(name=f"Scale {p}"))
    projects = {p.slug: p for p in Project.objects.filter(slug__startswith="scale-")}
    nodes = {
        (slug, path): subtopic_ensure(actor=actor, project=proj.pk, path=path)
        for slug, proj in projects.items()
        for path in SUBTOPICS
    }

    # 1. Ingest rate through the services (revisions, full text, everything a write does).
    ingest_rate = embed_rate = embed_seconds = 0.0
    next_index = Entry.objects.count() + 1
    if not args.reuse:
        start = time.perf_counter()
        for _ in tqdm(range(args.ingest_sample), desc="ingest via services"):
            data = corpus.linked_entry()
            entry_upsert(
                actor=actor,
                project=data["project"],
                subtopic=data["subtopic"],
                fields=EntryFields.pick(data),
            )
        ingest_rate = args.ingest_sample / (time.perf_counter() - start)
        next_index = args.ingest_sample

    # 2. Embedding throughput on a real sample (the reindex / worker path, one thread).
    sample_ids = list(
        Entry.objects.order_by("pk").values_list("pk", flat=True)[: args.embed_sample]
    )
    if not args.reuse:
        start = time.perf_counter()
        for i in tqdm(range(0, len(sample_ids), 32), desc="embed sample"):
            entries_embed(entry_ids=sample_ids[i : i + 32])
        embed_seconds = time.perf_counter() - start
        embed_rate = len(sample_ids) / embed_seconds
    real_vectors = np.array(
        list(EntryChunk.objects.filter(entry_id__in=sample_ids).values_list("embedding", flat=True))
    )
    sample_chunks = len(real_vectors)

    rows, stage_rows, costs_rows = [], [], []
    for size in sizes:
        # 3. Bulk-fill up to `size` entries (same full-text expression as the service).
        todo = size - Entry.objects.count()
        batch = 2000
        with tqdm(total=todo, desc=f"bulk fill to {size}") as bar:
            while todo > 0:
                made = []
                for _ in range(min(batch, todo)):
                    data = corpus.entry(next_index)
                    next_index += 1
                    made.append(
                        Entry(
                            project=projects[data["project"]],
                            subtopic=nodes[(data["project"], data["subtopic"])],
                            title=data["title"],
                            slug=entry_slug(data["title"]),
                            body=data["body"],
                            kind=data["kind"],
                            tags=data["tags"],
                            content_hash=content_hash(data["kind"], data["body"]),
                            generated_by="agent:bench",
                        )
                    )
                Entry.objects.bulk_create(made)
                ids = [e.pk for e in made]
                with connection.cursor() as cursor:
                    cursor.execute(
                        """
                        UPDATE knowledge_entry e SET search_vector =
                            setweight(to_tsvector(%s::regconfig, e.title), 'A')
                            || setweight(to_tsvector(%s::regconfig, array_to_string(e.tags, ' ')
                               || ' ' || replace(replace(coalesce(s.path, ''), '/', ' '),
                               '-', ' ')), 'B')
                            || setweight(to_tsvector(%s::regconfig, e.body), 'C')
                        FROM knowledge_entry e2 LEFT JOIN knowledge_subtopic s
                            ON s.id = e2.subtopic_id
                        WHERE e.id = e2.id AND e.id = ANY(%s)
                        """,
                        [settings.CAIRN_SEARCH_CONFIG] * 3 + [ids],
                    )
                synthesize(made, real_vectors, np.random.default_rng(next_index))
                todo -= len(made)
                bar.update(len(made))
        start = time.perf_counter()
        lexeme_stats_refresh()
        stats_seconds = time.perf_counter() - start
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE knowledge_entry")
            cursor.execute("VACUUM ANALYZE knowledge_entrychunk")
        n_chunks = EntryChunk.objects.count()

        # 4. Full-text reindex rate on a slice of the corpus.
        slice_ids = list(Entry.objects.order_by("?").values_list("pk", flat=True)[:2000])
        start = time.perf_counter()
        entries_reindex_text(entry_ids=slice_ids)
        text_rate = len(slice_ids) / (time.perf_counter() - start)

        # 5. Search latency, warm, service level (query embedding included).
        filters = {
            "none": {},
            "project": {"project": "scale-3"},
            "project+subtopic": {"project": "scale-3", "subtopic": "ops"},
            "kinds+tags": {"kinds": ["decision"], "tags": ["urgent", "infra"]},
            "after": {"after": "2000-01-01"},
        }
        level = {
            "entries": size,
            "chunks": n_chunks,
            "stats_refresh_s": round(stats_seconds, 2),
            "fulltext_reindex_per_s": round(text_rate, 1),
            "latency": {},
        }
        for _ in range(10):  # warm caches and the model
            search_entries(actor, corpus.query())
        wanted = args.filters.split(",")
        for fname, fargs in filters.items():
            if fname not in wanted:
                continue
            for mode in args.modes.split(","):
                times, empty, per_query = [], 0, []
                for _ in range(args.queries):
                    q = corpus.query()
                    start = time.perf_counter()
                    with stages.collect() as spent:
                        hits = search_entries(
                            actor, q, filters=SearchFilters.parse(**fargs), mode=mode, limit=10
                        )
                    times.append((time.perf_counter() - start) * 1000)
                    per_query.append(spent)
                    empty += not hits
                p50, p95 = percentile(times, 50), percentile(times, 95)
                names = sorted({name for spent in per_query for name in spent})
                by_stage = {
                    name: round(percentile([s.get(name, 0.0) for s in per_query], 50), 2)
                    for name in names
                }
                level["latency"][f"{fname}/{mode}"] = {
                    "p50_ms": round(p50, 1),
                    "p95_ms": round(p95, 1),
                    "empty": empty,
                    "stages_p50_ms": by_stage,
                }
                rows.append([size, fname, mode, p50, p95, empty])
                stage_rows.append(
                    [size, fname, mode, ", ".join(f"{k} {v:.1f}" for k, v in by_stage.items())]
                )
        if not args.no_costs:
            level["costs"] = scale_costs.measure(
                actor=actor,
                corpus=corpus,
                # Entries written through the services wait for vectors no worker made:
                # synthesized like the rest, so write→vectors times only its own writes.
                settle=lambda: synthesize(
                    list(Entry.objects.filter(embed_pending_since__isnull=False)),
                    real_vectors,
                    np.random.default_rng(size),  # noqa: B023 (called at once)
                ),
                size=size,
                writes=args.writes,
                vector_writes=args.vector_writes,
                contexts=args.contexts,
            )
            costs_rows.append(level["costs"] | {"latency": level["latency"]})
        report["sizes"][str(size)] = level

    chunks_per_entry = EntryChunk.objects.count() / max(1, Entry.objects.count())
    embed_100k_min = 100_000 / embed_rate / 60 if embed_rate else 0.0
    report.update(
        {
            "ingest_via_services_per_s": round(ingest_rate, 1),
            "embed_sample_entries": len(sample_ids),
            "embed_sample_chunks": sample_chunks,
            "embed_entries_per_s_one_thread": round(embed_rate, 2),
            "embed_chunks_per_s_one_thread": round(sample_chunks / embed_seconds, 2)
            if embed_seconds
            else None,
            "chunks_per_entry": round(chunks_per_entry, 2),
            "reindex_100k_estimate_min_one_worker": round(embed_100k_min, 1),
            "reindex_100k_estimate_min_two_workers": round(embed_100k_min / 2, 1),
        }
    )
    print()
    print(table(["entries", "filter", "mode", "p50 ms", "p95 ms", "empty"], rows))
    print("\nWhere the time goes (p50 ms per stage; stages overlap: the query is embedded")
    print("while the full-text SQL runs, `embed wait` is what the request waited for):")
    print(table(["entries", "filter", "mode", "stages"], stage_rows))
    print(
        f"\nIngest through the services: {ingest_rate:.1f} entries/s "
        f"(sample of {args.ingest_sample})"
    )
    print(
        f"Embedding (one thread): {embed_rate:.2f} entries/s = "
        f"{sample_chunks / embed_seconds if embed_seconds else 0:.2f} chunks/s on "
        f"{len(sample_ids)} entries; "
        f"{chunks_per_entry:.2f} chunks/entry in the corpus"
    )
    print(
        f"Reindex of 100k entries, estimated from that rate: {embed_100k_min:.0f} min on one "
        f"worker, {embed_100k_min / 2:.0f} min on two (2 cores)"
    )
    for size, level in report["sizes"].items():
        print(
            f"{size}: {level['chunks']} chunks; full-text reindex "
            f"{level['fulltext_reindex_per_s']} entries/s; word statistics refresh "
            f"{level['stats_refresh_s']} s"
        )
    if costs_rows:
        print("\nThe cost of growth (service level; search p50 / p95 ms, hybrid, query embedding")
        print("included; memory is PSS of the process tree):")
        print(scale_costs.table_of(costs_rows, table))
    print(f"JSON: {write_json('scale', report)}")


if __name__ == "__main__":
    main()
