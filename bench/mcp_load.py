"""MCP load: upsert and search round trips through the official MCP client, 1 and 8 clients.

    .venv/bin/python bench/mcp_load.py [--data ../shared/bench-data/locomo-dev.json]
                                       [--searches 200] [--workers 1]

Starts what it measures: the embedded PostgreSQL and broker (when not running), a fresh
`cairn_bench` database on that server (migrated; the dev database is not touched), a user with a
token, and uvicorn serving memory_site.asgi. Ingests the LoCoMo conversations one entry per
session (each concurrency level into its own projects, so every upsert is a real write), then
searches with the questions. Prints a table and writes JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._common import locomo_data  # noqa: E402
from bench.mcp_load_direct import direct, embed_projects  # noqa: E402
from bench.mcp_load_servers import (  # noqa: E402
    BEFORE,
    BENCH_DB,
    PY,
    group_cpu_seconds,
    prepare_database,
    start_server,
    stop_what_we_started,
)
from bench.mcp_load_stages import (  # noqa: E402
    load_sessions,
    pick_questions,
    server_breakdown,
    summarize,
)


class Client:
    def __init__(self, url: str, token: str):
        self.url, self.token = url, token

    async def __aenter__(self):
        self._http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {self.token}"}, timeout=60
        )
        self._stream = streamable_http_client(self.url, http_client=self._http)
        read, write = await self._stream.__aenter__()
        self._session = ClientSession(read, write)
        await self._session.__aenter__()
        await self._session.initialize()
        return self

    async def __aexit__(self, *exc):
        await self._session.__aexit__(*exc)
        await self._stream.__aexit__(*exc)
        await self._http.aclose()

    async def call(self, tool: str, args: dict) -> float:
        start = time.perf_counter()
        result = await self._session.call_tool(tool, args)
        elapsed = time.perf_counter() - start
        if result.is_error:
            raise RuntimeError(f"{tool} failed: {result.content[0].text}")
        return elapsed


SERVER_PGID = 0


async def run_phase(url, token, clients: int, jobs: list[tuple[str, dict]], label: str):
    """Run the jobs spread over `clients` concurrent MCP sessions; latencies in seconds."""
    latencies: list[float] = []
    queue = list(reversed(jobs))
    bar = tqdm(total=len(jobs), desc=label, leave=False)

    async def worker():
        async with Client(url, token) as client:
            while queue:
                tool, args = queue.pop()
                latencies.append(await client.call(tool, args))
                bar.update()

    cpu = group_cpu_seconds(SERVER_PGID)
    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(clients):
            tg.start_soon(worker)
    wall = time.perf_counter() - start
    bar.close()
    server_cpu_ms = (group_cpu_seconds(SERVER_PGID) - cpu) * 1000 / max(1, len(latencies))
    return latencies, wall, server_cpu_ms


async def bench_writes(url: str, token: str, sessions, levels=(1, 8)) -> list[dict]:
    rows = []
    convs = sorted({s["conv"] for s in sessions})
    async with Client(url, token) as admin:
        for level in levels:
            for conv in convs:
                await admin.call("create_project", {"slug": f"c{level}-{conv}"})
    for level in levels:
        jobs = [
            (
                "upsert",
                {
                    "project": f"c{level}-{s['conv']}",
                    "title": s["title"],
                    "body": s["body"],
                    "subtopic": "sessions",
                    "kind": "session",
                },
            )
            for s in sessions
        ]
        lat, wall, cpu = await run_phase(url, token, level, jobs, f"upsert x{level}")
        rows.append(summarize("upsert", level, lat, wall, cpu))
    return rows


async def bench_searches(url: str, token: str, questions, searches: int, profile: Path, levels):
    rows, breakdown = [], {}
    for level, part in ((1, 0), (8, 1))[: len(levels)]:
        picked = pick_questions(questions, searches, part)
        jobs = [
            ("search", {"query": q["q"], "project": f"c1-{q['conv']}", "limit": 10}) for q in picked
        ]
        profile.write_text("")
        lat, wall, cpu = await run_phase(url, token, level, jobs, f"search x{level}")
        rows.append(summarize("search", level, lat, wall, cpu))
        if level == 1:
            breakdown = server_breakdown(profile, lat)
    return rows, breakdown


async def ab_searches(urls: dict, token: str, questions, searches: int, profiles: dict):
    """The same cold questions against two servers (before / after), alternating which one is
    asked first, so both see the same machine load; then the same questions again (repeated:
    their query vectors are cached). Returns rows and breakdowns per server and pass."""
    picked = pick_questions(questions, searches, 2)
    rows, breakdowns = [], {}
    async with Client(urls["before"], token) as before, Client(urls["after"], token) as after:
        clients = {"before": before, "after": after}
        for phase in ("cold", "repeated"):
            latencies: dict[str, list[float]] = {name: [] for name in urls}
            for path in profiles.values():
                path.write_text("")
            for i, q in enumerate(tqdm(picked, desc=f"search before/after {phase}", leave=False)):
                args = {"query": q["q"], "project": f"c1-{q['conv']}", "limit": 10}
                order = ("before", "after") if i % 2 == 0 else ("after", "before")
                for name in order:
                    latencies[name].append(await clients[name].call("search", args))
            for name in urls:
                label = name if phase == "cold" else f"{name}, {phase}"
                rows.append(summarize(f"search ({label})", 1, latencies[name], 1.0))
                breakdowns[label] = server_breakdown(profiles[name], latencies[name])
    return rows, breakdowns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data", help="LoCoMo dev JSON (default: shared/bench-data/ beside or above the checkout)"
    )
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    parser.add_argument("--direct", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--embed", default="", help=argparse.SUPPRESS)
    parser.add_argument(
        "--ab",
        action="store_true",
        help="also run a second server with this branch's speed-ups off and alternate the same "
        "questions between both (before/after in one sitting)",
    )
    parser.add_argument(
        "--baseline",
        default="",
        help="with --ab: the 'before' server serves this checkout (e.g. an export of the commit "
        "before a change) with the same settings, instead of this one with speed-ups off",
    )
    parser.add_argument(
        "--before-set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="with --ab: the 'before' server is this checkout with only these settings changed "
        "(e.g. CAIRN_SEARCH_RERANK=off), instead of the speed-ups off",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="one client only: skip the 8-client phases and the in-process run (and, with "
        "--ab, the searches outside the before/after pairs)",
    )
    args = parser.parse_args()
    args.data = str(locomo_data(args.data))
    sessions, questions = load_sessions(Path(args.data))
    if args.direct:  # child mode: print the in-process rows as JSON
        print(json.dumps(direct(sessions, questions, args.searches)))
        return
    if args.embed:  # child mode: embed the projects named <prefix>*
        import django

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")
        django.setup()
        print(round(embed_projects(args.embed), 1))
        return
    print(f"Preparing a fresh {BENCH_DB} database and the server …", file=sys.stderr)
    env = prepare_database()
    profile = ROOT / "var" / "mcp_load-profile.jsonl"
    profile.parent.mkdir(parents=True, exist_ok=True)
    env["CAIRN_SEARCH_PROFILE"] = str(profile)
    proc, url = start_server(env, args.workers)
    before_proc = before_url = None
    if args.ab:
        before_profile = ROOT / "var" / "mcp_load-profile-before.jsonl"
        before_env = {**env, "CAIRN_SEARCH_PROFILE": str(before_profile)}
        if args.baseline:
            before_env["CAIRN_VAR_DIR"] = str(ROOT / "var")
            before_root = Path(args.baseline).resolve()
        elif args.before_set:  # one setting apart, e.g. CAIRN_SEARCH_RERANK=off
            before_env.update(kv.split("=", 1) for kv in args.before_set)
            before_root = ROOT
        else:
            before_env.update(BEFORE)
            before_root = ROOT
        before_proc, before_url = start_server(before_env, args.workers, before_root)
    ab_rows, ab_breakdowns = [], {}
    global SERVER_PGID
    SERVER_PGID = proc.pid  # started with start_new_session: its own process group
    load_before = os.getloadavg()
    try:
        token = env["CAIRN_BENCH_TOKEN"]
        levels = (1,) if args.quick else (1, 8)
        rows = anyio.run(bench_writes, url, token, sessions, levels)
        subprocess.run(
            [PY, __file__, "--embed", "c1-", "--data", args.data], env=env, cwd=ROOT, check=True
        )
        breakdown = {}
        if not (args.quick and args.ab):  # --ab asks its own questions
            found, breakdown = anyio.run(
                bench_searches, url, token, questions, args.searches, profile, levels
            )
            rows += found
        if args.ab:
            ab_rows, ab_breakdowns = anyio.run(
                ab_searches,
                {"before": before_url, "after": url},
                token,
                questions,
                args.searches,
                {"before": before_profile, "after": profile},
            )
    finally:
        for p in (proc, before_proc):
            if p is not None:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(timeout=20)
    if not args.quick:
        child = subprocess.run(
            [PY, __file__, "--direct", "--data", args.data, "--searches", str(args.searches)],
            env=env,
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        )
        rows += json.loads(child.stdout.strip().splitlines()[-1])
    load_after = os.getloadavg()
    stop_what_we_started()
    direct_stages = next((r.pop("stages_p50_ms") for r in rows if "stages_p50_ms" in r), {})
    header = (
        f"{'operation':<27}{'clients':>8}{'calls':>7}{'p50 ms':>9}{'p95 ms':>9}{'per s':>8}"
        f"{'web CPU ms/call':>17}"
    )
    print(header)
    for r in rows:
        print(
            f"{r['operation']:<27}{r['clients']:>8}{r['calls']:>7}{r['p50_ms']:>9}"
            f"{r['p95_ms']:>9}{r['per_second']:>8}{r['server_cpu_ms_per_call'] or '-':>17}"
        )
    out = ROOT / "bench/results"
    out.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = out / f"mcp_load-{stamp}.json"
    target.write_text(
        json.dumps(
            {
                "benchmark": "mcp_load",
                "when": stamp,
                "machine": {
                    "cpus": os.cpu_count(),
                    "python": platform.python_version(),
                    "loadavg_1m_before": round(load_before[0], 2),
                    "loadavg_1m_after": round(load_after[0], 2),
                },
                "server": {
                    "uvicorn_workers": args.workers,
                    "transport": "streamable-http, stateless, json",
                },
                "corpus": {
                    "sessions": len(sessions),
                    "questions_searched": min(args.searches, len(questions)),
                },
                "results": rows,
                "stages_p50_ms": {"mcp": breakdown, "in_process": direct_stages},
                "before_after": {
                    "rows": ab_rows,
                    "stages_p50_ms": ab_breakdowns,
                    "before": args.baseline or BEFORE,
                },
                "settings": {
                    k: os.environ.get(k, "default")
                    for k in ("CAIRN_SEARCH_EMBED_AHEAD", "CAIRN_SEARCH_QUERY_CACHE_BYTES")
                },
            },
            indent=2,
        )
    )
    print("\nWhere a search's time goes, p50 ms per stage (one client, cold query vectors):")
    print(f"{'stage':<28}{'over MCP':>10}{'in-process':>12}")
    for name in [*breakdown, *(n for n in direct_stages if n not in breakdown)]:
        mcp = f"{breakdown[name]:.2f}" if name in breakdown else "-"
        here = f"{direct_stages[name]:.2f}" if name in direct_stages else "-"
        print(f"{name:<28}{mcp:>10}{here:>12}")
    if ab_rows:
        print("\nBefore/after in one sitting (same cold questions, alternating servers):")
        for r in ab_rows:
            print(f"{r['operation']:<27} p50 {r['p50_ms']:>7} ms   p95 {r['p95_ms']:>7} ms")
        print(f"{'stage':<28}{'before':>10}{'after':>10}{'before rep':>12}{'after rep':>11}")
        names = list(ab_breakdowns["before"])
        names += [n for n in ab_breakdowns["after"] if n not in names]
        for name in names:
            cells = [
                ab_breakdowns[label].get(name, 0.0)
                for label in ("before", "after", "before, repeated", "after, repeated")
            ]
            print(
                f"{name:<28}"
                + "".join(f"{c:>{w}.2f}" for c, w in zip(cells, (10, 10, 12, 11), strict=True))
            )
        if args.baseline:
            print(f"before = the checkout at {args.baseline}, same settings")
        elif args.before_set:
            print("before = this checkout with " + ", ".join(args.before_set))
        else:
            print("before = " + ", ".join(f"{k}={v}" for k, v in BEFORE.items()))
    print(
        "(stages overlap: the query embedding runs while the parse, idf and text SQL do; "
        "'embed wait' is what the request waited for it)"
    )
    print(
        f"Load average (1 min) before/after: {load_before[0]:.1f} / {load_after[0]:.1f} "
        f"on {os.cpu_count()} CPUs"
    )
    print(f"Wrote {target.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
