"""Reliability: concurrent MCP agents lose nothing, and hostile input cannot freeze the server.

    .venv/bin/python bench/reliability.py [--agents 16] [--seconds 60]

Starts what it measures (like bench/mcp_load.py): a fresh `cairn_bench` database, a token and
uvicorn serving memory_site.asgi. Phase 1: `--agents` MCP agents for `--seconds` each mix reads
(search, get, browse), upserts and appends on their own entry and on one shared entry; every
acknowledged append leaves a marker, and at the end every marker must be in its entry (0 lost
acknowledged writes), then `mirror drain` must leave 0 pending revisions (every revision in git).
Phase 2: the hostile inputs of issue 12, each timed, while a canary client keeps calling `browse`
(the web process must keep answering). Then the fault phases, each with a real Celery worker on
the same database and the same embedded servers (var/ of this checkout):

- kill-worker: writes pile up with no worker; a worker starts and is SIGKILLed mid-drain, restarted,
  SIGKILLed mid-embedding, restarted; every revision must then be in git exactly once (its
  HistoricalEntry.git_commit equal to the mirror commit carrying its revision trailer) and every
  entry embedded.
- broker-down: writes go on while the embedded broker is stopped for `--outage` seconds (default
  30); 0 failed writes expected; catch-up = from the broker's return until all is mirrored and
  embedded.
- pg-restart: the embedded PostgreSQL is stopped (fast: connections cut) and started again under
  load; the same uvicorn process must answer again; failed calls in the gap, time to recover.

`--only PHASE` (repeatable) selects phases: agents, hostile, kill-worker, broker-down, pg-restart.
Each catch-up is bounded by FAULT_TIMEOUT_S. Prints a table and writes JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import traceback
from datetime import UTC, datetime
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.mcp_load_servers import prepare_database, start_server  # noqa: E402
from bench.reliability_agents import agents_phase, mirror_pending  # noqa: E402
from bench.reliability_client import ensure_project as _ensure_project  # noqa: E402
from bench.reliability_client import pct as _pct  # noqa: E402
from bench.reliability_faults import (  # noqa: E402
    FAULT_TIMEOUT_S,
    broker_down_phase,
    kill_worker_phase,
    pg_restart_phase,
)
from bench.reliability_hostile import HOSTILE_LIMIT_S, hostile_phase  # noqa: E402

PHASES = ("agents", "hostile", "kill-worker", "broker-down", "pg-restart")


def _print_fault_rows(faults: dict) -> None:
    heads = [("fault phase", 13), ("calls", 7), ("failed", 8), ("p50 ms", 8), ("p95 ms", 8)]
    heads += [("p99 ms", 8), ("lost", 6), ("revs", 6), ("once", 6), ("dup", 5), ("miss", 6)]
    heads += [("embedded", 10), ("catch-up s", 12)]
    print("\n" + "".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(heads)))
    for name, r in faults.items():
        if "crashed" in r:
            print(f"{name:<13}CRASHED: {r['crashed'].strip().splitlines()[-1]}")
            continue
        w, f = r["writes"], r.get("final")
        mirror_cols = (
            f"{f['revisions']:>6}{f['in_mirror_once']:>6}{f['duplicated']:>5}{f['missing']:>6}"
            f"{f['embedded']:>5}/{f['entries']:<4}{r['catch_up_s']:>12.1f}"
            if f
            else f"{'-':>6}{'-':>6}{'-':>5}{'-':>6}{'-':>10}{'-':>12}"
        )
        print(
            f"{name:<13}{w['calls']:>7}{w['failed']:>8}{w['p50_ms']:>8.0f}{w['p95_ms']:>8.0f}"
            f"{w['p99_ms']:>8.0f}{r['lost_acked_appends']:>6}{mirror_cols}"
        )
    faults = {k: v for k, v in faults.items() if "crashed" not in v}
    if "kill-worker" in faults:
        for k in faults["kill-worker"]["kills"]:
            print(
                f"  SIGKILL {k['when']} at {k['after_s']} s: {k['committed']}/{k['revisions']} "
                f"committed, {k['embedded']}/{k['entries']} embedded"
                f"{'' if k['in_progress'] else ' (NOT in progress at the kill)'}"
            )
    if "broker-down" in faults:
        r = faults["broker-down"]
        print(
            f"  broker down {r['outage_s']:.0f} s: {r['calls_during_outage']} calls meanwhile, "
            f"{r['writes']['failed_in_window']} failed; at the end of the load "
            f"{r['pending_when_load_ended']} revisions pending, {r['unembedded_when_load_ended']}"
            f" entries unembedded; worker survived: {r['worker_survived_outage']}"
        )
    if "pg-restart" in faults:
        r = faults["pg-restart"]
        print(
            f"  PostgreSQL down {r['server_down_for_s']} s: {r['writes']['failed_in_window']} "
            f"failed during the gap, {r['writes']['failed_after_window']} after; first success "
            f"{r['first_success_after_up_s']} s after it was up, last failure "
            f"{r['last_failure_after_up_s']} s after; answers at the end: {r['answers_at_the_end']}"
        )
    for name, r in faults.items():
        for line in r["writes"]["errors_sample"]:
            print(f"  {name} error: {line}")
        f = r.get("final")
        if f and not f["complete"]:
            print(f"  {name}: NOT COMPLETE after {FAULT_TIMEOUT_S:.0f} s: {f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument(
        "--only",
        action="append",
        choices=PHASES,
        help="run only this phase (repeatable); default: all of them, in this order",
    )
    parser.add_argument(
        "--outage", type=float, default=30, help="seconds the broker stays down (broker-down)"
    )
    args = parser.parse_args()
    if args.agents < 1 or not 1 <= args.seconds <= 3600 or not 1 <= args.outage <= 600:
        parser.error("--agents ≥ 1, --seconds between 1 and 3600, --outage between 1 and 600")
    only = [p for p in PHASES if p in (args.only or PHASES)]
    print("Preparing a fresh database and the server …", file=sys.stderr)
    env = prepare_database()
    env["CAIRN_MIRROR_PATH"] = str(ROOT / "var" / "bench-reliability-mirror.git")
    subprocess.run(["rm", "-rf", env["CAIRN_MIRROR_PATH"]], check=True)
    # The bench process reads the same database and mirror to check them (Django, no writes).
    for key in ("DATABASE_URL", "DJANGO_SECRET_KEY", "CAIRN_MIRROR_PATH", "LOG_LEVEL"):
        os.environ[key] = env[key]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")
    import django

    django.setup()
    proc, url = start_server(env, 1)
    token = env["CAIRN_BENCH_TOKEN"]
    load_before = os.getloadavg()
    agents = hostile = None
    pending = drain_s = None
    faults: dict[str, dict] = {}
    try:
        if "agents" in only:
            agents = anyio.run(agents_phase, url, token, args.agents, args.seconds)
        if "hostile" in only:
            if agents is None:
                _ensure_project(url, token)
            hostile = anyio.run(hostile_phase, url, token)
        if agents is not None:
            pending, drain_s, _ = mirror_pending(env)
        fault_phases = {
            "kill-worker": lambda: kill_worker_phase(url, token, env, args.agents, args.seconds),
            "broker-down": lambda: broker_down_phase(url, token, env, args.agents, args.outage),
            "pg-restart": lambda: pg_restart_phase(url, token, env, args.agents, args.seconds),
        }
        for name, run in fault_phases.items():
            if name not in only:
                continue
            print(f"Fault phase {name} …", file=sys.stderr)
            try:
                faults[name] = run()
            except Exception:  # report it and go on: one broken phase must not hide the others
                faults[name] = {"crashed": traceback.format_exc()}
                print(faults[name]["crashed"], file=sys.stderr)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    load_after = os.getloadavg()

    if agents is not None:
        print(
            f"\nPhase 1: {args.agents} MCP agents x {args.seconds:.0f} s "
            f"(load {load_before[0]:.2f})"
        )
        print(f"{'tool':<10}{'calls':>8}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}")
        for tool, values in sorted(agents["latencies"].items()):
            ms = [v * 1000 for v in values]
            print(
                f"{tool:<10}{len(ms):>8}{statistics.median(ms):>9.0f}{_pct(ms, 95):>9.0f}"
                f"{_pct(ms, 99):>9.0f}"
            )
        print(
            f"errors: {len(agents['errors'])}   acknowledged appends: {agents['acked_writes']}   "
            f"lost: {agents['lost_acked_writes']}   revisions pending after one drain "
            f"({drain_s:.1f} s): {pending}"
        )
        for line in agents["errors"][:5]:
            print(f"  {line}")
    if hostile is not None:
        print(f"\nPhase 2: hostile inputs (each must answer within {HOSTILE_LIMIT_S:.0f} s)")
        print(f"{'input':<44}{'answer':>12}{'s':>8}{'ok':>5}{'canary':>8}")
        for row in hostile:
            print(
                f"{row['input']:<44}{row['answer'][:12]:>12}{row['seconds']:>8.2f}"
                f"{'yes' if row['within_limit'] else 'NO':>5}{row['canary_calls_meanwhile']:>8}"
            )
    if faults:
        _print_fault_rows(faults)
    print(f"\nload average before/after: {load_before[0]:.2f} / {load_after[0]:.2f}")
    out = ROOT / "bench/results"
    out.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = out / f"reliability-{stamp}.json"
    payload = {
        "phases": only,
        "agents": args.agents,
        "seconds": args.seconds,
        "outage": args.outage,
        "load": {"before": load_before, "after": load_after},
        "faults": faults,
    }
    if agents is not None:
        payload |= {
            "latencies_ms": {
                tool: {
                    "calls": len(v),
                    "p50": statistics.median(v) * 1000,
                    "p95": _pct(v, 95) * 1000,
                    "p99": _pct(v, 99) * 1000,
                }
                for tool, v in agents["latencies"].items()
            },
            "errors": agents["errors"],
            "acked_writes": agents["acked_writes"],
            "lost_acked_writes": agents["lost_acked_writes"],
            "pending_after_drain": pending,
        }
    if hostile is not None:
        payload["hostile"] = hostile
    target.write_text(json.dumps(payload, indent=2, default=str))
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
