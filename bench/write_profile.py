"""Where a write's CPU goes in the web process: the MCP write tools in-process under cProfile.

    .venv/bin/python bench/write_profile.py [--n 200] [--top 30] [--sort tottime]

A fresh `cairn_bench` database (bench/mcp_load.py), then the calls bench/write_probe.py makes
(upsert new, upsert update, edit append), each through the tool's own choke point as the server
runs it (argument model, timing row, handler, report, rendering; not the MCP SDK's transport).
Per kind: statements per call, CPU per call in this process (time.process_time, so other
processes on a shared machine count less than in wall time) and the top functions.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.mcp_load_servers import prepare_database  # noqa: E402
from bench.write_probe import PHASES, calls  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200, help="calls per kind")
    parser.add_argument("--top", type=int, default=30, help="functions shown per kind")
    parser.add_argument(
        "--sort", default="tottime,cumulative", help="pstats sort keys, comma-separated"
    )
    parser.add_argument("--statements", action="store_true", help="print each statement")
    parser.add_argument("--phases", default=",".join(PHASES), help="which kinds, comma-separated")
    parser.add_argument(
        "--no-cprofile", action="store_true", help="no profiler (to sample with py-spy instead)"
    )
    args = parser.parse_args()
    os.environ["LOG_LEVEL"] = "WARNING"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")
    env = prepare_database()
    for key in ("DATABASE_URL", "DJANGO_SECRET_KEY"):
        os.environ[key] = env[key]
    os.environ["CAIRN_MIRROR_PATH"] = str(ROOT / "var" / "bench-write-profile-mirror.git")
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from knowledge.services.tokens import token_authenticate
    from mcp_api import tools

    actor = token_authenticate(env["CAIRN_BENCH_TOKEN"])
    tools.answer("create_project", actor, {"slug": "probe", "name": "Write probe"})
    made = tools.answer("upsert", actor, {"project": "probe", "title": "Log", "body": "# Log\n"})
    shared = made.structured_content["entry"]["short_id"]

    def call(phase: str, i: int):
        name, raw = calls(phase, i, shared)
        tool = tools.BY_NAME[name]
        result = tool._timed(actor, tool.arguments.model_validate(raw))
        assert not result.is_error, result
        return result

    offset = 0
    for phase in args.phases.split(","):
        for i in range(20):
            call(phase, 100_000 + offset + i)
        with CaptureQueriesContext(connection) as captured:
            call(phase, 200_000 + offset)
        # CPU time, not wall time: waiting for the database or a shared core is not cost here
        profile = cProfile.Profile(time.process_time)
        cpu, wall = time.process_time(), time.perf_counter()
        if not args.no_cprofile:
            profile.enable()
        for i in range(args.n):
            call(phase, offset + i)
        profile.disable()
        if args.statements:
            for q in captured.captured_queries:
                print("   ", " ".join(q["sql"].split())[:150])
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        offset += args.n
        out = io.StringIO()
        if not args.no_cprofile:
            profile.dump_stats(ROOT / "var" / f"write_profile-{phase.replace(' ', '_')}.prof")
        for key in args.sort.split(",") if not args.no_cprofile else ():
            pstats.Stats(profile, stream=out).sort_stats(key).print_stats(args.top)
        print(f"\n=== {phase}: {len(captured.captured_queries)} statements, "
              f"{cpu * 1000 / args.n:.2f} ms CPU per call in this process "
              f"({wall * 1000 / args.n:.2f} ms wall"
              f"{'' if args.no_cprofile else ', under the profiler'})")  # fmt: skip
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip()))
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
