"""One MCP client's writes against `serve`: latency with a kept-alive connection, CPU and SQL
statements per write.

    .venv/bin/python bench/write_probe.py [--n 300] [--web 2] [--statements]

A fresh `cairn_bench` database (bench/mcp_load.py), `manage.py serve --web-workers N` on it (web,
worker and beat, as `make run`), then one MCP client (one HTTP connection, kept alive) calls, in
turn and one at a time:

- upsert new: a new title each call (the create path, with its similar-entries lookup);
- upsert update: one of 20 entries again with a new body (the replace path, with its diff);
- append: `edit` append to one entry that keeps growing (the edit path).

Per phase: p50/p95 end to end as the client sees it, and the CPU the web processes and the
database (every backend, reaped ones included) spent per call, read from /proc (psutil) before
and after the phase. The worker (embedding, git mirror) runs meanwhile; its CPU is printed apart,
up to the end of the phase, not counting its catch-up afterwards.

Statements per write are counted in this process, apart from the timed calls: the same tool
calls through `mcp_api.tools.answer` (the handler the server runs) on the same database under
Django's CaptureQueriesContext, plus the token check each request makes. `--statements` prints
each statement of one call of each kind (shortened) to see what repeats.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._common import percentile, print_table, write_json  # noqa: E402
from bench.agents_mix import (  # noqa: E402
    groups,
    postmaster_process,
    profile_table,
    start_profile,
    start_serve,
)
from bench.mcp_load_servers import prepare_database  # noqa: E402
from bench.reliability_client import Agent  # noqa: E402

BODY = (
    "# {title}\n\nWhat we learned in call {i}.\n\n"
    "- [fact] probe {i} ran #bench\n- relates_to [[Probe 0]]\n"
)


def calls(phase: str, i: int, shared: str) -> tuple[str, dict]:
    if phase == "upsert new":
        title = f"Probe {i}"
        return "upsert", {"project": "probe", "title": title, "body": BODY.format(title=title, i=i)}
    if phase == "upsert update":
        title = f"Probe {i % 20}"
        return "upsert", {
            "project": "probe",
            "title": title,
            "body": BODY.format(title=title, i=i) + f"\nRevised in call {i}.\n",
        }
    return "edit", {"id": shared, "operation": "append", "content": f"- [note] line {i}"}


PHASES = ("upsert new", "upsert update", "append")


async def client_phases(url: str, token: str, n: int, serve, postmaster) -> dict:
    out = {}
    async with Agent(url, token) as agent:
        await agent.call("create_project", {"slug": "probe", "name": "Write probe"})
        made, _ = await agent.call(
            "upsert", {"project": "probe", "title": "Log", "body": "# Log\n"}
        )
        shared = made.structured_content["entry"]["short_id"]
        offset = 0
        for phase in PHASES:
            for i in range(10):  # warm both web processes' paths (not counted)
                await agent.call(*calls(phase, 100_000 + offset + i, shared))
            before, since = groups(serve, postmaster), datetime.now(UTC)
            took, errors = [], 0
            for i in range(n):
                res, seconds = await agent.call(*calls(phase, offset + i, shared))
                took.append(seconds)
                errors += bool(res.is_error)
            after = groups(serve, postmaster)
            offset += n
            cpu = {k: (after[k] - before[k]) * 1000 / n for k in after}
            out[phase] = {
                "n": n,
                "errors": errors,
                "p50_ms": percentile(took, 50) * 1000,
                "p95_ms": percentile(took, 95) * 1000,
                "cpu_ms_per_call": cpu,
                "window": (since, datetime.now(UTC)),
            }
    return out, shared


def server_times(phases: dict) -> None:
    """The server's own timing of each phase's calls (ops.timing rows, written at exit)."""
    from ops.models import OperationTiming

    for phase, r in phases.items():
        since, until = r.pop("window")
        rows = OperationTiming.objects.filter(
            surface="mcp", operation=calls(phase, 0, "")[0], at__gte=since, at__lte=until
        ).values_list("total_ms", "db_ms")
        r["server_p50_ms"] = percentile([t for t, _ in rows], 50)
        r["server_db_p50_ms"] = percentile([d or 0.0 for _, d in rows], 50)


def count_statements(token: str, shared: str, show: bool) -> dict:
    """Statements per call of each kind, in this process, on the bench database."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from knowledge.services.tokens import token_authenticate
    from mcp_api import tools

    actor = token_authenticate(token)
    counts = {}
    with CaptureQueriesContext(connection) as auth:
        token_authenticate(token)
    counts["token check"] = len(auth.captured_queries)
    for phase in PHASES:
        tool, args = calls(phase, 900_000 + len(counts), shared)
        tools.answer(tool, actor, args)  # a first call warms caches (note types, settings)
        tool, args = calls(phase, 900_100 + len(counts), shared)
        with CaptureQueriesContext(connection) as captured:
            result = tools.answer(tool, actor, args)
        assert not result.is_error, result
        counts[phase] = len(captured.captured_queries)
        if show:
            print(f"\n{phase}: {counts[phase]} statements")
            for q in captured.captured_queries:
                print("   ", " ".join(q["sql"].split())[:160])
    return counts


def main() -> None:
    os.environ["LOG_LEVEL"] = "WARNING"
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=300, help="calls per phase")
    parser.add_argument("--web", type=int, default=2, help="web processes")
    parser.add_argument("--statements", action="store_true", help="print each statement")
    parser.add_argument(
        "--profile", type=int, default=0, metavar="N", help="sample with py-spy; print top N"
    )
    parser.add_argument("--label", default="", help="a name for this run in the JSON file")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")
    env = prepare_database()
    from memory_site import embedded

    env["CAIRN_MIRROR_PATH"] = str(ROOT / "var" / "bench-write-probe-mirror.git")
    env |= {
        "CAIRN_VAR_DIR": str(ROOT / "var" / "bench-write-probe"),
        "CAIRN_PG_DIR": str(embedded.PG_DIR),
        "CAIRN_BROKER_DIR": str(embedded.BROKER_DIR),
    }
    os.system(f"rm -rf {env['CAIRN_MIRROR_PATH']}")
    for key in ("DATABASE_URL", "DJANGO_SECRET_KEY", "CAIRN_MIRROR_PATH"):
        os.environ[key] = env[key]
    import django

    django.setup()
    proc, url = start_serve(env, args.web)
    try:
        serve, postmaster = psutil.Process(proc.pid), postmaster_process()
        raw = ROOT / "var" / "bench-write-probe-profile.txt"
        # Long enough for every phase; stopped with the server.
        spy = start_profile(proc.pid, 3600, raw) if args.profile else None
        phases, shared = anyio.run(
            client_phases, url, env["CAIRN_BENCH_TOKEN"], args.n, serve, postmaster
        )
        load = os.getloadavg()
        if spy:
            spy.send_signal(signal.SIGINT)  # py-spy writes what it has on SIGINT
            spy.wait(60)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)
    server_times(phases)
    statements = count_statements(env["CAIRN_BENCH_TOKEN"], shared, args.statements)
    print(f"\n{args.web} web process(es), one client, {args.n} calls per phase, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}\n")  # fmt: skip
    print_table(
        ["call", "p50 ms", "p95 ms", "server p50", "db p50", "errors", "CPU ms/call web",
         "database", "web+db", "worker", "statements"],
        [
            [phase, round(r["p50_ms"], 1), round(r["p95_ms"], 1), round(r["server_p50_ms"], 1),
             round(r["server_db_p50_ms"], 1), r["errors"],
             round(r["cpu_ms_per_call"]["web"], 2), round(r["cpu_ms_per_call"]["database"], 2),
             round(r["cpu_ms_per_call"]["web"] + r["cpu_ms_per_call"]["database"], 2),
             round(r["cpu_ms_per_call"]["worker"], 2), statements[phase]]
            for phase, r in phases.items()
        ],
    )  # fmt: skip
    print(f"\ntoken check: {statements['token check']} statement(s) per request")
    profile = profile_table(raw, args.profile) if args.profile else {}
    for group, rows in profile.items():
        print(f"\nWhere the {group} CPU goes (share of samples, all phases):")
        print_table(["function", "share"], [[name, f"{share:.1%}"] for name, share in rows])
    write_json(
        "write_probe" + (f"-{args.label}" if args.label else ""),
        {
            "method": __doc__,
            "web_processes": args.web,
            "load_average": load,
            "phases": phases,
            "statements": statements,
            "profile": profile,
            "wall_time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        },
    )


if __name__ == "__main__":
    main()
