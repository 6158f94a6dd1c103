"""The 16-agent mix against `serve` (web + worker + beat, as `make run`), with 1 and 2 web
processes in one sitting: calls/s, latency per tool, and CPU per call by process group.

    .venv/bin/python bench/agents_mix.py [--agents 16] [--seconds 60] [--web 1,2]

Per web-process count: a fresh `cairn_bench` database (bench/mcp_load.py), `manage.py serve
--web-workers N` on it, then bench/reliability.py's agents phase (searches, gets, browses,
upserts, appends to each agent's own entry and to one shared entry; every acknowledged append
must be found afterwards). CPU is read from /proc (psutil) for three groups, before the agents
start and after the worker has caught up (every entry embedded, every revision in the mirror),
so the worker's share of each write is counted too:

- web: the uvicorn processes;
- worker: the Celery worker, its pool and beat;
- database: the embedded PostgreSQL (every backend, reaped ones included).

CPU ms per call = that group's CPU seconds / calls. The clients run in this process; their CPU
is printed apart (on 2 cores they compete with the server: a real deployment's agents don't).

`--profile` samples the server's processes with py-spy during the agents phase (stacks of the
thread holding the GIL: Python's own CPU; the model and libpq run without it) and prints, per
process group, the functions holding the most samples, inclusive: where
each call's CPU goes. Sampling costs a little CPU itself; compare runs with the same flags.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._common import free_port, percentile, print_table, wait_for_port, write_json  # noqa: E402
from bench.mcp_load_servers import PY, prepare_database  # noqa: E402
from bench.reliability_agents import agents_phase  # noqa: E402
from bench.reliability_faults import wait_complete  # noqa: E402


def tree_cpu(root: psutil.Process) -> float:
    """CPU seconds of a process tree: every live process's own time plus what it reaped."""
    total = 0.0
    for proc in [root, *root.children(recursive=True)]:
        try:
            t = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def groups(serve: psutil.Process, postmaster: psutil.Process) -> dict[str, float]:
    out = {"web": 0.0, "worker": 0.0, "database": tree_cpu(postmaster)}
    for child in serve.children():
        cmd = " ".join(child.cmdline())
        web = "uvicorn" in cmd or "memory_site.webserver" in cmd
        out["web" if web else "worker"] += tree_cpu(child)
    return out


def postmaster_process() -> psutil.Process:
    from memory_site import embedded

    pid = int((Path(embedded.PG_DIR) / "postmaster.pid").read_text().split()[0])
    return psutil.Process(pid)


def start_serve(env: dict, web: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    log = open(ROOT / "var" / f"bench-agents-mix-serve-{web}.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(
        [PY, "manage.py", "serve", "--port", str(port), "--web-workers", str(web)],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    wait_for_port(proc, port, timeout=120, what=f"serve (see {log.name})")
    # The worker's model loads on its first task; wait until it is up (not counted).
    time.sleep(5)
    return proc, f"http://127.0.0.1:{port}/mcp"


def start_profile(pid: int, seconds: float, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [str(Path(PY).parent / "py-spy"), "record", "--pid", str(pid), "--subprocesses",
         "--nonblocking", "--gil", "--rate", "50", "--format", "raw",
         "--duration", str(int(seconds)), "--output", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


FRAME = re.compile(r"^(?P<name>.*) \((?P<file>[^()]*?)(?::\d+)?\)$")


def profile_table(path: Path, top: int) -> dict[str, list[tuple[str, float]]]:
    """Folded stacks → per group (web/worker), the functions in most samples (inclusive)."""
    samples: dict[str, int] = collections.Counter()
    inclusive: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        frames = stack.split(";")
        procs = [f for f in frames if f.startswith("process ")]
        group = "web" if any("uvicorn" in f or "webserver" in f for f in procs) else "worker"
        samples[group] += int(count)
        seen = set()
        for frame in frames[len(procs) :]:
            m = FRAME.match(frame.strip())
            if not m:
                continue
            where = m["file"].split("site-packages/")[-1].removeprefix(f"{ROOT}/")
            name = f"{m['name']} ({where})"
            if name not in seen:
                seen.add(name)
                inclusive[group][name] += int(count)
    return {
        group: [(name, n / samples[group]) for name, n in counter.most_common(top)]
        for group, counter in inclusive.items()
    }


def run(web: int, agents: int, seconds: float, profile: int = 0, writes_only: bool = False) -> dict:
    env = prepare_database()
    from memory_site import embedded

    env["CAIRN_MIRROR_PATH"] = str(ROOT / "var" / "bench-agents-mix-mirror.git")
    # The server's own var/ (admin password, beat schedule): the installation's is not touched.
    env |= {
        "CAIRN_VAR_DIR": str(ROOT / "var" / "bench-agents-mix"),
        "CAIRN_PG_DIR": str(embedded.PG_DIR),
        "CAIRN_BROKER_DIR": str(embedded.BROKER_DIR),
    }
    subprocess.run(["rm", "-rf", env["CAIRN_MIRROR_PATH"]], check=True)
    for key in ("DATABASE_URL", "DJANGO_SECRET_KEY", "CAIRN_MIRROR_PATH"):
        os.environ[key] = env[key]
    import django

    django.setup()  # after DATABASE_URL: the bench process reads the ledger from cairn_bench
    proc, url = start_serve(env, web)
    try:
        serve, postmaster = psutil.Process(proc.pid), postmaster_process()
        me = psutil.Process()
        before, mine = groups(serve, postmaster), me.cpu_times()
        started = time.monotonic()
        raw = ROOT / "var" / f"bench-agents-mix-profile-{web}.txt"
        spy = start_profile(proc.pid, seconds, raw) if profile else None
        result = anyio.run(
            agents_phase, url, env["CAIRN_BENCH_TOKEN"], agents, seconds, writes_only
        )
        if spy:
            spy.wait(60)
        load = os.getloadavg()[0]
        mine_after = me.cpu_times()
        state, caught_up = wait_complete()
        after = groups(serve, postmaster)
        elapsed = time.monotonic() - started
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)
    lat = result["latencies"]
    calls = sum(len(v) for v in lat.values())
    every = [t for v in lat.values() for t in v]
    cpu = {k: after[k] - before[k] for k in after}
    return {
        "web_processes": web,
        "mix": "writes only" if writes_only else "reads and writes",
        "agents": agents,
        "seconds": seconds,
        "calls": calls,
        "calls_per_s": calls / result["wall_s"],
        "p50_ms": percentile(every, 50) * 1000,
        "p95_ms": percentile(every, 95) * 1000,
        "per_tool": {
            tool: {
                "n": len(v),
                "p50_ms": percentile(v, 50) * 1000,
                "p95_ms": percentile(v, 95) * 1000,
            }
            for tool, v in sorted(lat.items())
        },
        "errors": len(result["errors"]),
        "errors_sample": result["errors"][:5],
        "lost_acked_writes": result["lost_acked_writes"],
        "catch_up_s": caught_up,
        "complete": state["complete"],
        "cpu_s": cpu,
        "cpu_ms_per_call": {k: v * 1000 / calls for k, v in cpu.items()},
        "clients_cpu_ms_per_call": (
            (mine_after.user + mine_after.system - mine.user - mine.system) * 1000 / calls
        ),
        "elapsed_s": elapsed,
        "load_average_1m": load,
        "profile": profile_table(raw, profile) if profile else {},
    }


def main() -> None:
    os.environ["LOG_LEVEL"] = "WARNING"  # this process's clients: no line per HTTP request
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--web", default="1,2", help="web process counts, e.g. 1,2")
    parser.add_argument(
        "--profile", type=int, default=0, metavar="N", help="sample with py-spy; print top N"
    )
    parser.add_argument(
        "--writes-only", action="store_true", help="upserts and appends only (issue 23's mix)"
    )
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")
    runs = []
    for web in [int(w) for w in args.web.split(",")]:
        print(f"{web} web process(es), {args.agents} agents, {args.seconds:.0f} s …", flush=True)
        runs.append(run(web, args.agents, args.seconds, args.profile, args.writes_only))
    print()
    print_table(
        ["web", "calls/s", "p50 ms", "p95 ms", "errors", "lost", "catch-up s",
         "CPU ms/call web", "worker", "database", "total", "clients", "load"],
        [
            [r["web_processes"], round(r["calls_per_s"], 1), round(r["p50_ms"], 1),
             round(r["p95_ms"], 1), r["errors"], r["lost_acked_writes"], round(r["catch_up_s"], 1),
             round(r["cpu_ms_per_call"]["web"], 2), round(r["cpu_ms_per_call"]["worker"], 2),
             round(r["cpu_ms_per_call"]["database"], 2),
             round(sum(r["cpu_ms_per_call"].values()), 2),
             round(r["clients_cpu_ms_per_call"], 2), round(r["load_average_1m"], 2)]
            for r in runs
        ],
    )  # fmt: skip
    print()
    print_table(
        ["web", "tool", "n", "p50 ms", "p95 ms"],
        [
            [r["web_processes"], tool, t["n"], round(t["p50_ms"], 1), round(t["p95_ms"], 1)]
            for r in runs
            for tool, t in r["per_tool"].items()
        ],
    )
    for r in runs:
        for group, rows in r["profile"].items():
            print(f"\nWhere the {group} CPU goes, {r['web_processes']} web (share of samples):")
            print_table(["function", "share"], [[name, f"{share:.1%}"] for name, share in rows])
    for r in runs:
        for line in r["errors_sample"]:
            print(f"  {r['web_processes']} web: {line}")
    write_json("agents_mix", {"method": __doc__, "runs": runs})


if __name__ == "__main__":
    main()
