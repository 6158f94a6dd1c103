"""A shared log under contention (issue 49): 16 MCP agents against `serve`, each writing its own
entries and appending to one shared entry; then, in this process, where an append's time goes
as the entry grows.

    .venv/bin/python bench/shared_log.py [--agents 16] [--each 20] [--web 2] [--sizes 30,300,1500]

Contended phase: a fresh `cairn_bench` database (bench/mcp_load.py), `manage.py serve
--web-workers N` on it (web, worker and beat, as `make run`), then `agents` MCP clients at once,
each alternating `each` upserts of its own entries with `each` appends to one shared entry (a
team log); `--spread`, the reference, appends to a log of each agent's own instead. Calls/s
over the whole phase, p50/p95 per tool, and the appends lost: every
acknowledged line must be in the shared entry afterwards, once. Where the time goes: CPU per
call of the web processes, the database, the worker and the clients (this process), read from
/proc (psutil) before and after the agents, as bench/agents_mix.py reads it.

Append cost phase: in this process, on the same database, `--n` appends to an entry of each of
`--sizes` lines (one line in five an observation), through `entry_edit` as the MCP tool calls
it. Per append: the time from the row lock's statement to the commit (what every other writer
of that entry waits for), the SQL statements and their wait, and what this process spent on
the rest (Python: the edit, the parse, building statements).
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import time
from pathlib import Path

import anyio
import httpx2
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._common import percentile, print_table, write_json  # noqa: E402
from bench.agents_mix import groups, postmaster_process, start_serve  # noqa: E402
from bench.mcp_load_servers import prepare_database  # noqa: E402
from bench.reliability_client import Agent  # noqa: E402
from bench.reliability_client import tool_text as _text  # noqa: E402


async def contended(url: str, token: str, agents: int, each: int, spread: bool) -> dict:
    latencies: dict[str, list[float]] = {"upsert": [], "append": []}
    errors: list[str] = []
    acked: list[str] = []
    logs: list[str] = []
    async with Agent(url, token) as setup:
        await setup.call("create_project", {"slug": "log", "name": "Shared log"})
        made, _ = await setup.call(
            "upsert", {"project": "log", "title": "Team log", "body": "# Team log\n"}
        )
        shared = made.structured_content["entry"]["short_id"]

    async def one(n: int) -> None:
        async with Agent(url, token) as agent:
            log = shared
            if spread:  # the reference: each agent appends to a log of its own
                made, took = await agent.call(
                    "upsert", {"project": "log", "title": f"Log {n}", "body": "# Log\n"}
                )
                latencies["upsert"].append(took)
                log = made.structured_content["entry"]["short_id"]
                logs.append(log)
            for i in range(each):
                own = f"# Own {n}-{i}\n\n- [fact] agent {n} wrote {i}\n"
                line = f"- [done] agent {n} step {i} #log"
                for tool, name, args in (
                    ("upsert", "upsert", {"project": "log", "title": f"Own {n}-{i}", "body": own}),
                    ("edit", "append", {"id": log, "operation": "append", "content": line}),
                ):
                    try:
                        res, took = await agent.call(tool, args)
                    except Exception as exc:  # a transport failure counts as an error
                        errors.append(f"{name}: {type(exc).__name__}: {exc}")
                        continue
                    if res.is_error:
                        errors.append(f"{name}: {_text(res)[:200]}")
                        continue
                    latencies[name].append(took)
                    if name == "append":
                        acked.append(args["content"])

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for n in range(agents):
            tg.start_soon(one, n)
    wall = time.perf_counter() - start
    load = os.getloadavg()[0]
    rest = url.removesuffix("/mcp") + "/api/v1"
    lines = []
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
        for ref in logs or [shared]:
            lines += (await http.get(f"{rest}/entries/{ref}")).json()["body"].split("\n")
    lost = sum(1 for line in acked if lines.count(line) != 1)
    return {"latencies": latencies, "errors": errors, "acked": len(acked), "lost": lost,
            "wall_s": wall, "load_average_1m": load}  # fmt: skip


def append_costs(sizes: list[int], n: int) -> list[dict]:
    """Per body size: n appends through entry_edit, timed from the lock statement to the commit."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from knowledge.actors import Actor
    from knowledge.services import EntryFields, ProjectFields, entry_upsert, project_create
    from knowledge.services.entries_edit import entry_edit

    user = get_user_model().objects.get(username="bench")
    actor = Actor.for_user(user, agent="agent:bench")
    project_create(actor=actor, slug="costs", fields=ProjectFields(name="Append costs"))
    marks: dict[str, float] = {}
    sql = {"n": 0, "s": 0.0}

    def watch(execute, statement, params, many, context):
        t = time.perf_counter()
        if "FOR UPDATE" in statement and "locked" not in marks:
            marks["locked"] = t
        try:
            return execute(statement, params, many, context)
        finally:
            sql["n"] += 1
            sql["s"] += time.perf_counter() - t

    commit = connection.commit

    def timed_commit():
        t = time.perf_counter()
        commit()
        marks["commit_s"], marks["committed"] = time.perf_counter() - t, time.perf_counter()

    rows = []
    connection.commit = timed_commit
    try:
        for size in sizes:
            old = [
                f"- [note] earlier line {i} #log" if i % 5 == 0 else f"Line {i} of the log."
                for i in range(size)
            ]
            entry = entry_upsert(
                actor=actor, project="costs", fields=EntryFields(title=f"Log {size}",
                                                                 body="\n".join(old))
            ).entry  # fmt: skip
            got: dict[str, list[float]] = {}
            for i in range(n + 3):  # the first three warm the shapes: not counted
                marks.clear()
                sql.update(n=0, s=0.0)
                t0, cpu = time.perf_counter(), time.process_time()
                with connection.execute_wrapper(watch):
                    entry_edit(actor=actor, ref=entry.pk, operation="append",
                               content=f"- [done] step {i} #log")  # fmt: skip
                total, cpu = time.perf_counter() - t0, time.process_time() - cpu
                if i < 3:
                    continue
                for key, value in {
                    "total_ms": total * 1000,
                    "locked_ms": (marks["committed"] - marks["locked"]) * 1000,
                    "statements": sql["n"],
                    "sql_wait_ms": sql["s"] * 1000,
                    "commit_ms": marks["commit_s"] * 1000,
                    "cpu_ms": cpu * 1000,
                }.items():
                    got.setdefault(key, []).append(value)
            rows.append({"lines": size, **{k: statistics.median(v) for k, v in got.items()}})
    finally:
        del connection.commit
    return rows


def main() -> None:
    os.environ["LOG_LEVEL"] = "WARNING"
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--each", type=int, default=20, help="upserts, and appends, per agent")
    parser.add_argument("--web", type=int, default=2, help="web processes")
    parser.add_argument("--sizes", default="30,300,1500", help="body lines for the append costs")
    parser.add_argument("--n", type=int, default=30, help="appends per size")
    parser.add_argument(
        "--spread", action="store_true", help="the reference: each agent appends to its own log"
    )
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")
    env = prepare_database()
    from memory_site import embedded

    env |= {
        "CAIRN_MIRROR_PATH": str(ROOT / "var" / "bench-shared-log-mirror.git"),
        "CAIRN_VAR_DIR": str(ROOT / "var" / "bench-shared-log"),
        "CAIRN_PG_DIR": str(embedded.PG_DIR),
        "CAIRN_BROKER_DIR": str(embedded.BROKER_DIR),
    }
    for key in ("DATABASE_URL", "DJANGO_SECRET_KEY", "CAIRN_MIRROR_PATH"):
        os.environ[key] = env[key]
    import django

    django.setup()
    print(f"{args.agents} agents x ({args.each} upserts + {args.each} appends), "
          f"{args.web} web …", flush=True)  # fmt: skip
    proc, url = start_serve(env, args.web)
    try:
        serve, postmaster, me = psutil.Process(proc.pid), postmaster_process(), psutil.Process()
        before, mine = groups(serve, postmaster), me.cpu_times()
        run = anyio.run(
            contended, url, env["CAIRN_BENCH_TOKEN"], args.agents, args.each, args.spread
        )
        after, mine_after = groups(serve, postmaster), me.cpu_times()
        run["cpu_s"] = {key: after[key] - before[key] for key in after} | {
            "clients": mine_after.user + mine_after.system - mine.user - mine.system
        }
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)
    from django.conf import settings

    settings.CAIRN_BACKGROUND_TASKS = False  # the append's own work, not queueing
    costs = append_costs([int(s) for s in args.sizes.split(",")], args.n)
    lat = run.pop("latencies")
    calls = sum(len(v) for v in lat.values())
    run |= {
        "calls": calls,
        "calls_per_s": calls / run["wall_s"],
        "per_tool": {t: {"n": len(v), "p50_ms": percentile(v, 50) * 1000,
                         "p95_ms": percentile(v, 95) * 1000} for t, v in lat.items()},
    }  # fmt: skip
    print()
    print_table(
        ["calls/s", "calls", "errors", "lost", "append p50 ms", "append p95 ms",
         "upsert p50 ms", "upsert p95 ms", "load"],
        [[round(run["calls_per_s"], 1), calls, len(run["errors"]), run["lost"],
          round(run["per_tool"]["append"]["p50_ms"], 1),
          round(run["per_tool"]["append"]["p95_ms"], 1),
          round(run["per_tool"]["upsert"]["p50_ms"], 1),
          round(run["per_tool"]["upsert"]["p95_ms"], 1), round(run["load_average_1m"], 2)]],
    )  # fmt: skip
    cpu = run["cpu_s"]
    print(
        "\nCPU during the agents, ms per call (the clients share the 2 cores; the worker runs "
        "at a lower priority and takes what the rest leave):"
    )
    print_table(
        ["web", "database", "worker", "clients", "all", "worker's share"],
        [[*(round(cpu[k] * 1000 / calls, 2) for k in ("web", "database", "worker", "clients")),
          round(sum(cpu.values()) * 1000 / calls, 2),
          f"{100 * cpu['worker'] / sum(cpu.values()):.0f} %"]],
    )  # fmt: skip
    print("\nAn append, in-process, by the entry's length (medians):")
    print_table(
        ["lines", "total ms", "locked ms", "statements", "SQL wait ms", "commit ms", "CPU ms"],
        [[c["lines"], round(c["total_ms"], 2), round(c["locked_ms"], 2), c["statements"],
          round(c["sql_wait_ms"], 2), round(c["commit_ms"], 2), round(c["cpu_ms"], 2)]
         for c in costs],
    )  # fmt: skip
    for line in run["errors"][:5]:
        print(f"  {line}")
    name = "shared_log_spread" if args.spread else "shared_log"
    write_json(name, {"method": __doc__, "contended": run, "append_costs": costs})


if __name__ == "__main__":
    main()
