"""Knowledge-graph benchmark: build_context (service and over MCP), what graph indexing adds to a
write, and `reindex --graph` throughput, on a synthetic vault.

    .venv/bin/python bench/graph.py [--entries 10000] [--queries 200] [--writes 300] [--reuse]

The vault: `--entries` entries in 20 subtopics, each with 5 observations and 3 relations (one to
the next entry in its subtopic, one to an entry of another subtopic by path, and, for one entry
in five, a link that stays unresolved; the others link a third entry by title), written
through the services. Uses its own database `cairn_bench_graph` on the embedded server
(`--reuse` keeps a vault of the same size from an earlier run). Prints a table, where the time
goes (SQL share, queries per call) and the machine load, and writes JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import secrets
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from _setup import ROOT, percentile, setup_django, table, write_json
from django.conf import settings as django_settings
from tqdm import tqdm

DB = "cairn_bench_graph"
SUBTOPICS = 20


def body_of(i: int, n: int) -> str:
    nxt = (i + SUBTOPICS) % n  # the next entry of the same subtopic (often not written yet)
    other = (i * 7 + 3) % n
    third = (i * 13 + 5) % n
    lines = [f"# Note {i}", "", f"Some prose about topic {i} and what the team learned.", ""]
    lines += [
        f"- [{('fact', 'decision', 'risk', 'idea', 'tip')[k]}] point {k} about note {i} "
        f"#t{(i + k) % 50} (context {k})"
        for k in range(5)
    ]
    lines += [
        f"- relates_to [[Note {nxt}]]",
        f"- depends_on [[area-{other % SUBTOPICS}/Note {other}]]",
        f"- mentions [[Missing {i}]]" if i % 5 == 0 else f"- mentions [[Note {third}]]",
    ]
    return "\n".join(lines) + "\n"


@contextmanager
def sql_timer(box: dict):
    """Sum the time spent in SQL and the number of queries (connection.execute_wrapper)."""
    from django.db import connection

    def wrapper(execute, sql, params, many, context):
        t0 = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            box["sql"] += time.perf_counter() - t0
            box["queries"] += 1

    with connection.execute_wrapper(wrapper):
        yield


def stats(timings: list[float]) -> dict:
    return {
        "n": len(timings),
        "p50_ms": percentile(timings, 50),
        "p95_ms": percentile(timings, 95),
        "max_ms": max(timings) if timings else 0.0,
    }


def build_vault(actor, slug: str, n: int) -> float:
    from knowledge.services import EntryFields, entry_upsert

    started = time.perf_counter()
    for i in tqdm(range(n), desc="vault", unit="entry"):
        entry_upsert(
            actor=actor,
            project=slug,
            subtopic=f"area-{i % SUBTOPICS}",
            fields=EntryFields(title=f"Note {i}", body=body_of(i, n)),
            reason="bench",
        )
    return time.perf_counter() - started


def bench_writes(actor, slug: str, n: int, writes: int) -> dict:
    """Updates that change one observation and one link, alternating graph indexing on and off."""
    from knowledge.services import EntryFields, entry_upsert

    rng = random.Random(7)
    stamp = int(time.time())  # every run writes new text: no write is "unchanged"
    timings = {True: [], False: []}
    for w in tqdm(range(writes * 2), desc="writes", unit="write"):
        on = w % 2 == 0
        i = rng.randrange(n)
        body = (
            body_of(i, n).replace("point 0", f"point 0 rev {stamp}-{w}")
            + f"- see [[Note {w % n}]]\n"
        )
        django_settings.CAIRN_GRAPH_ON_SAVE = on
        try:
            t0 = time.perf_counter()
            entry_upsert(
                actor=actor,
                project=slug,
                subtopic=f"area-{i % SUBTOPICS}",
                fields=EntryFields(title=f"Note {i}", body=body),
                reason="bench",
            )
            timings[on].append((time.perf_counter() - t0) * 1000)
        finally:
            django_settings.CAIRN_GRAPH_ON_SAVE = True
    return {"with_graph": stats(timings[True]), "without_graph": stats(timings[False])}


def bench_context(actor, refs: list[str], depth: int) -> dict:
    from knowledge.reads.context import build_context

    timings, box, related = [], {"sql": 0.0, "queries": 0}, []
    with sql_timer(box):
        for ref in refs:
            t0 = time.perf_counter()
            ctx = build_context(actor, ref, depth=depth, max_related=10)
            timings.append((time.perf_counter() - t0) * 1000)
            related.append(ctx["total_related"])
    out = stats(timings)
    out["sql_share"] = box["sql"] * 1000 / sum(timings) if timings else 0.0
    out["queries_per_call"] = box["queries"] / len(refs)
    out["reached_p50"] = percentile([float(r) for r in related], 50)
    return out


def bench_mcp(secret: str, refs: list[str], depths: tuple[int, ...]) -> dict:
    import anyio
    import httpx2
    from django.conf import settings
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp_load_servers import start_server

    db = settings.DATABASES["default"]
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@:{db['PORT']}/{DB}?host={db['HOST']}",
        "LOG_LEVEL": "WARNING",
        # DATABASE_URL means team mode, which needs a real key: one per run.
        "DJANGO_SECRET_KEY": os.environ.get("DJANGO_SECRET_KEY") or secrets.token_urlsafe(50),
    }
    proc, url = start_server(env, workers=1)
    results = {}
    try:

        async def run() -> None:
            headers = {"Authorization": f"Bearer {secret}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=60) as http,
                streamable_http_client(url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                for depth in depths:
                    for ref in refs[:10]:  # warm-up
                        await session.call_tool("build_context", {"url": ref, "depth": depth})
                    timings = []
                    for ref in refs:
                        t0 = time.perf_counter()
                        res = await session.call_tool("build_context", {"url": ref, "depth": depth})
                        timings.append((time.perf_counter() - t0) * 1000)
                        assert not res.is_error, res.content[0].text
                    results[depth] = stats(timings)

        anyio.run(run)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    return results


def bench_reindex(actor, ids: list[int]) -> dict:
    """Drop the graph (benchmark clean-up) and rebuild it the way `reindex --graph` does."""
    from knowledge.models import Observation, Relation
    from knowledge.services import entries_reindex_graph

    Relation.objects.all().delete()
    Observation.objects.all().delete()
    started = time.perf_counter()
    for k in tqdm(range(0, len(ids), 256), desc="reindex --graph", unit="batch"):
        entries_reindex_graph(actor=actor, entry_ids=ids[k : k + 256])
    seconds = time.perf_counter() - started
    return {"entries": len(ids), "seconds": seconds, "entries_per_s": len(ids) / seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200, help="build_context calls per row")
    parser.add_argument("--writes", type=int, default=300, help="writes with and without graph")
    parser.add_argument("--reuse", action="store_true", help="keep a vault of this size")
    parser.add_argument("--skip-mcp", action="store_true")
    parser.add_argument("--skip-reindex", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    setup_django(DB)
    logging.getLogger("httpx2").setLevel(logging.WARNING)

    from django.contrib.auth import get_user_model

    from knowledge.actors import Actor
    from knowledge.models import Entry, Observation, Project, Relation
    from knowledge.services import ProjectFields, project_create
    from knowledge.services.tokens import token_create

    user, _ = get_user_model().objects.get_or_create(username="bench", is_superuser=True)
    actor = Actor.for_user(user, agent="agent:bench")
    slug = f"vault-{args.entries}"
    project = Project.objects.filter(slug=slug).first()
    build_s = None
    if project is None or not args.reuse or project.entries.count() != args.entries:
        if project is not None:  # benchmark clean-up of an earlier vault
            Entry.objects.filter(project=project).delete()
            project.delete()
        project_create(actor=actor, slug=slug, fields=ProjectFields(name=slug))
        build_s = build_vault(actor, slug, args.entries)
    n = args.entries
    load_before = os.getloadavg()
    rng = random.Random(42)
    sample = [rng.randrange(n) for _ in range(args.queries)]
    refs = [f"memory://{slug}/area-{i % SUBTOPICS}/note-{i}" for i in sample]

    rows, payload = [], {"entries": n, "build_seconds": build_s}
    payload["graph_rows"] = {
        "observations": Observation.objects.filter(valid_to__isnull=True).count(),
        "relations": Relation.objects.filter(valid_to__isnull=True).count(),
        "unresolved": Relation.objects.filter(valid_to__isnull=True, target__isnull=True).count(),
    }
    for depth in (1, 2):
        result = bench_context(actor, refs, depth)
        payload[f"context_service_d{depth}"] = result
        where = (
            f"{result['sql_share']:.0%} SQL, {result['queries_per_call']:.0f} queries, "
            f"reached {result['reached_p50']:.0f}"
        )
        rows.append([f"build_context d{depth} (service)", result["n"], result["p50_ms"],
                     result["p95_ms"], where])  # fmt: skip
    if not args.skip_mcp:
        secret = token_create(actor=actor, user=user, name=f"bench {time.time()}").secret
        over = bench_mcp(secret, refs, (1, 2))
        for depth, result in over.items():
            payload[f"context_mcp_d{depth}"] = result
            rows.append([f"build_context d{depth} (MCP)", result["n"], result["p50_ms"],
                         result["p95_ms"], "official client, HTTP, 1 uvicorn worker"])  # fmt: skip
    writes = bench_writes(actor, slug, n, args.writes)
    payload["writes"] = writes
    added = writes["with_graph"]["p50_ms"] - writes["without_graph"]["p50_ms"]
    for key, label in (("with_graph", "write (graph on)"), ("without_graph", "write (graph off)")):
        w = writes[key]
        note = f"graph adds {added:.2f} ms at p50" if key == "with_graph" else ""
        rows.append([label, w["n"], w["p50_ms"], w["p95_ms"], note])
    if not args.skip_reindex:
        ids = list(
            Entry.objects.filter(project__slug=slug).order_by("pk").values_list("pk", flat=True)
        )
        reindex = bench_reindex(actor, ids)
        payload["reindex_graph"] = reindex
        rate = f"{reindex['entries_per_s']:.0f} entries/s ({reindex['seconds']:.1f} s)"
        rows.append(["reindex --graph", reindex["entries"], "", "", rate])
    load_after = os.getloadavg()
    payload["load"] = {"before": load_before, "after": load_after}
    payload["uptime"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"\nvault: {n} entries, {payload['graph_rows']}; built in "
          f"{build_s:.0f} s" if build_s else f"\nvault: {n} entries (reused)")  # fmt: skip
    print(table(["what", "n", "p50 ms", "p95 ms", "notes"], rows))
    print(f"load average before {load_before}, after {load_after} ({os.cpu_count()} CPUs)")
    path = write_json(f"graph-{n}", payload)
    print(f"wrote {Path(path).relative_to(ROOT)}")


if __name__ == "__main__":
    main()
