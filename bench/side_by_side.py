"""Cairn and Basic Memory side by side: the same LoCoMo conversations, written and searched over
MCP as agents call them, in one sitting.

    .venv/bin/python bench/side_by_side.py [--data PATH/locomo-dev.json] [--questions 0]
        [--repeats 100] [--conversations 0] [--sessions 0] [--baseline DIR]

Cairn runs as `manage.py serve` (web, worker, embedded PostgreSQL and broker) on a fresh var
directory under var/bench/side_by_side/, so it never touches an installation; the bench talks to
it over streamable HTTP with one kept-alive MCP client. Basic Memory (the released package,
installed by this bench into its own virtual environment under var/bench/) runs over stdio with
its config and notes under the same directory. Both get one note per session of each
conversation (a project per conversation), then every non-adversarial question with its
project, one client each, alternating which system is asked first. Prints search p50/p95,
write p50 and session-level R@1/R@5/MRR of both with their ratios, and GET /healthz on a
kept-alive and on a new connection; writes JSON to bench/results/side_by_side-<time>.json, and
keeps that file current while the sitting runs (`"complete": false` until the end), so a run
that is killed or fails still leaves what it measured.

Both clients live in one AsyncExitStack, closed in the task that opened them with a deadline;
whatever happens, Basic Memory's server process is then terminated (killed after a timeout) and
every `serve` stopped, and the results are printed before that.

--baseline DIR also serves the Cairn checkout in DIR (e.g. `git worktree add /tmp/before main`)
on its own var directory and asks it the same questions in the same sitting: before/after.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path

import anyio
import httpx2
import psutil
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._common import free_port, locomo_data  # noqa: E402
from bench.locomo_data import parse_evidence, unit_of  # noqa: E402
from bench.locomo_scoring import score  # noqa: E402
from bench.mcp_load import load_sessions  # noqa: E402

BM_VERSION = "0.24.1"
WORK = ROOT / "var" / "bench" / "side_by_side"
SESSION = re.compile(r"Session (\d+)\b")
# Once the sitting's work is done the clients get this long to close; then the close is
# cancelled (Basic Memory's transport still stops its server, shielded, within ~7 s).
CLOSE_TIMEOUT = 30.0
# If the event loop still has not returned this long after closing began, a watchdog thread
# kills Basic Memory, prints and writes the results, stops serve and exits.
WATCHDOG_GRACE = CLOSE_TIMEOUT + 45.0


def bm_python(python: str) -> Path:
    """Basic Memory's own virtual environment, created (once) by this bench."""
    venv = ROOT / "var" / "bench" / f"basic-memory-{BM_VERSION}"
    exe = venv / "bin" / "basic-memory"
    if not exe.exists():
        print(f"Installing basic-memory=={BM_VERSION} into {venv} …", file=sys.stderr)
        subprocess.run([python, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run(
            [venv / "bin" / "python", "-m", "pip", "install", "-q", f"basic-memory=={BM_VERSION}"],
            check=True,
        )
    return exe


class Cairn:
    """`manage.py serve` of one checkout on its own var directory, with an admin's token."""

    def __init__(self, label: str, root: Path, web_workers: int | None, worker: bool) -> None:
        self.label, self.root = label, root
        self.var = WORK / re.sub(r"\W+", "-", label.lower()).strip("-")
        shutil.rmtree(self.var, ignore_errors=True)
        self.var.mkdir(parents=True)
        self.port = free_port()
        self.env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")
        }
        self.env.update(CAIRN_VAR_DIR=str(self.var), LOG_LEVEL="WARNING")
        self.profile = self.var / "search-profile.jsonl"
        self.env["CAIRN_SEARCH_PROFILE"] = str(self.profile)
        args = ["--web-workers", str(web_workers)] if web_workers else []
        if not worker:  # the bench embeds with the passage cache instead (embed())
            args.append("--no-worker")
        self.log = open(self.var / "serve.log", "w")  # noqa: SIM115 (closed in stop())
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--migrate", "--port", str(self.port), *args],
            cwd=root,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def wait_ready(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.label}: serve exited; see {self.var / 'serve.log'}")
            if "Cairn is running" in (self.var / "serve.log").read_text():
                break
            time.sleep(0.5)
        else:
            raise RuntimeError(f"{self.label}: serve did not start; see {self.var / 'serve.log'}")
        self.token = subprocess.run(
            [sys.executable, "manage.py", "create_token", "admin", "--name", "bench",
             "--agent", "agent:bench"],
            cwd=self.root, env=self.env, check=True, capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip
        self.profile.write_text("")

    def embed(self, data: str) -> float:
        """Embed every entry as the worker would (its code), with bench/locomo.py's passage
        cache: a re-run embeds nothing again. Returns seconds."""
        command = [sys.executable, str(ROOT / "bench" / "mcp_load.py"), "--data", data]
        out = subprocess.run(
            [*command, "--embed", "conv-"],
            cwd=ROOT, env=self.env, check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
        return float(out.strip().splitlines()[-1])

    def stop(self) -> None:
        """SIGTERM to serve's process group (serve stops its children in order), SIGKILL to the
        group after 60 s. Safe to call twice."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.log.close()


class CairnClient:
    """One kept-alive streamable-HTTP MCP session with Cairn."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token

    async def open(self, stack: AsyncExitStack) -> CairnClient:
        headers = {"Authorization": f"Bearer {self.token}"}
        http = await stack.enter_async_context(httpx2.AsyncClient(headers=headers, timeout=60))
        read, write = await stack.enter_async_context(
            streamable_http_client(self.url, http_client=http)
        )
        self._session = await stack.enter_async_context(ClientSession(read, write))
        await self._session.initialize()
        return self

    async def tool(self, name: str, args: dict) -> tuple[float, dict]:
        start = time.perf_counter()
        result = await self._session.call_tool(name, args)
        elapsed = time.perf_counter() - start
        if result.is_error:
            raise RuntimeError(f"Cairn {name} failed: {result.content[0].text}")
        return elapsed, result.structured_content or {}

    async def create_project(self, conv: str) -> None:
        await self.tool("create_project", {"slug": conv})

    async def write(self, conv: str, session: dict) -> float:
        args = {"project": conv, "title": session["title"], "body": session["body"]}
        return (await self.tool("upsert", {**args, "subtopic": "sessions", "kind": "session"}))[0]

    async def search(self, conv: str, query: str) -> tuple[float, list[str]]:
        elapsed, data = await self.tool("search", {"query": query, "project": conv, "limit": 10})
        return elapsed, [hit["title"] for hit in data.get("results", [])]


class BasicMemory:
    """Basic Memory's MCP server over stdio, its config and notes under `home`."""

    def __init__(self, exe: Path, home: Path) -> None:
        shutil.rmtree(home, ignore_errors=True)
        (home / "projects").mkdir(parents=True)
        self.home = home
        env = {
            **os.environ,
            "BASIC_MEMORY_CONFIG_DIR": str(home / "config"),
            "BASIC_MEMORY_HOME": str(home / "main"),
            "BASIC_MEMORY_LOG_LEVEL": "WARNING",
        }
        self.params = StdioServerParameters(
            command=str(exe), args=["mcp", "--transport", "stdio"], env=env
        )
        self.search_type: str | None = None  # its default (hybrid where vectors can run)
        self.proc: psutil.Process | None = None

    async def open(self, stack: AsyncExitStack) -> BasicMemory:
        before = {child.pid for child in psutil.Process().children()}
        log = stack.enter_context(open(self.home / "server.log", "w"))  # noqa: SIM115
        read, write = await stack.enter_async_context(stdio_client(self.params, errlog=log))
        # The server process, so that kill() can end it whatever becomes of the transport.
        self.proc = next(
            (child for child in psutil.Process().children() if child.pid not in before), None
        )
        self._session = await stack.enter_async_context(ClientSession(read, write))
        await self._session.initialize()
        return self

    def kill(self, timeout: float = 10) -> str:
        """Terminate the server's process group (stdio_client starts it in a session of its
        own), kill it after `timeout`; says what it took."""
        proc = self.proc
        if proc is None or not proc.is_running():  # is_running() also rules out a reused pid
            return "exited"
        for sig, outcome in ((signal.SIGTERM, "terminated"), (signal.SIGKILL, "killed")):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, sig)
            try:
                proc.wait(timeout)
                return outcome
            except psutil.TimeoutExpired:
                continue
        return f"still running (pid {proc.pid})"

    async def tool(self, name: str, args: dict) -> tuple[float, str]:
        start = time.perf_counter()
        result = await self._session.call_tool(name, args)
        elapsed = time.perf_counter() - start
        text = result.content[0].text if result.content else ""
        if result.is_error:
            raise RuntimeError(f"Basic Memory {name} failed: {text[:500]}")
        return elapsed, text

    async def create_project(self, conv: str) -> None:
        path = str(self.home / "projects" / conv)
        await self.tool("create_memory_project", {"project_name": conv, "project_path": path})

    async def write(self, conv: str, session: dict) -> float:
        args = {"title": session["title"], "content": session["body"], "directory": "sessions"}
        return (await self.tool("write_note", {**args, "project": conv}))[0]

    async def search(self, conv: str, query: str) -> tuple[float, list[str]]:
        args = {"query": query, "project": conv, "page_size": 10, "output_format": "json"}
        if self.search_type:
            args["search_type"] = self.search_type
        elapsed, text = await self.tool("search_notes", args)
        try:
            results = json.loads(text)["results"]
        except (ValueError, KeyError, TypeError):
            raise RuntimeError(f"Basic Memory search_notes answered: {text[:500]}") from None
        return elapsed, [r.get("title", "") for r in results]

    async def pick_search_type(self, conv: str, query: str) -> str:
        """Its default search when that works here, else full text: hybrid needs SQLite
        extension loading, which not every Python build has (then it answers an error text)."""
        try:
            await self.search(conv, query)
            return "default"
        except RuntimeError:
            self.search_type = "text"
            await self.search(conv, query)
            return "text (its default, hybrid, needs SQLite extension loading)"


class Run:
    """What the sitting has measured so far. The JSON file is rewritten as it grows (at most
    every few seconds), so a run that is killed still leaves its data; finish() prints the
    table and writes the file once, from whichever thread gets there first."""

    def __init__(self, names: list[str], meta: dict) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        self.target = ROOT / "bench" / "results" / f"side_by_side-{stamp}.json"
        self.target.parent.mkdir(parents=True, exist_ok=True)
        self.raw = {n: {"write": [], "search": [], "repeat": [], "scores": []} for n in names}
        self.meta = {"benchmark": "side_by_side", "when": stamp, **meta}
        self.phase = "starting"
        self.closing, self.done = threading.Event(), threading.Event()
        self._lock = threading.Lock()
        self._finished = False
        self._saved_at = 0.0
        self._started = time.monotonic()
        self.phases: dict[str, float] = {}  # seconds from the start to each phase's start
        self.step("starting")

    def step(self, phase: str) -> None:
        if phase == "closing" and self.phase != "measured":
            self.meta["stopped_during"] = self.phase
        self.phase = phase
        self.phases[phase] = round(time.monotonic() - self._started, 1)
        self.save(force=True)

    def payload(self, complete: bool) -> dict:
        results = {name: summary(raw) for name, raw in self.raw.items()}
        elapsed = round(time.monotonic() - self._started, 1)
        return {**self.meta, "phase": self.phase, "complete": complete, "elapsed_s": elapsed,
                "phases_started_s": self.phases, "results": results}  # fmt: skip

    def save(self, *, force: bool = False, complete: bool = False) -> None:
        if not force and time.monotonic() - self._saved_at < 5:
            return
        self._saved_at = time.monotonic()
        partial = self.target.with_suffix(".tmp")
        partial.write_text(json.dumps(self.payload(complete), indent=2))
        partial.replace(self.target)  # a reader never sees half a file

    def finish(self, complete: bool) -> None:
        with self._lock:
            if self._finished:
                return
            self._finished = True
        self.meta["machine"]["loadavg_1m_before_after"].append(os.getloadavg()[0])
        if complete:
            self.phase = "done"
        self.save(force=True, complete=complete)
        payload = self.payload(complete)
        report(payload["results"], self.meta.get("healthz", {}), payload)
        print(f"Wrote {self.target.relative_to(ROOT)}", flush=True)


def ranked_units(titles: list[str]) -> list[str]:
    units: list[str] = []
    for title in titles:
        m = SESSION.match(title)
        unit = f"S{m.group(1)}" if m else "?"
        if unit not in units:
            units.append(unit)
    return units


def pick(data: list[dict], sessions: list[dict], args) -> tuple[list[dict], list[dict]]:
    """The sessions and questions of this sitting: the first `--conversations`, the first
    `--sessions` of each, the questions whose evidence lies in those sessions (capped at
    `--questions`)."""
    convs = [sample["sample_id"] for sample in data]
    convs = convs[: args.conversations] if args.conversations else convs
    kept: list[dict] = []
    for conv in convs:
        own = [s for s in sessions if s["conv"] == conv]
        kept += own[: args.sessions] if args.sessions else own
    written = {(s["conv"], f"S{SESSION.match(s['title']).group(1)}") for s in kept}
    out = []
    for sample in data:
        for qa in sample["qa"]:
            gold = {unit_of(e, "session") for e in parse_evidence(qa.get("evidence", []))}
            conv = sample["sample_id"]
            if qa.get("category") == 5 or not gold:
                continue
            if all((conv, unit) in written for unit in gold):
                out.append({"conv": conv, "q": str(qa["question"]), "gold": gold})
    return kept, out[: args.questions] if args.questions else out


async def wait_for_vectors(cairn: CairnClient, convs: list[str], timeout: float) -> float:
    """Until no project's search says entries wait for their vectors (the worker embeds)."""
    start = time.perf_counter()
    waiting = list(convs)
    while waiting and time.perf_counter() - start < timeout:
        _, data = await cairn.tool("search", {"query": "session", "project": waiting[0]})
        if data.get("note"):
            await anyio.sleep(2)
        else:
            waiting.pop(0)
    if waiting:
        raise RuntimeError(f"Cairn's worker did not embed {waiting} within {timeout:.0f} s")
    return time.perf_counter() - start


def healthz(port: int, n: int) -> dict[str, float]:
    """GET /healthz p50 in ms: one kept-alive connection, and a new connection per request."""
    kept, new = [], []
    conn = http.client.HTTPConnection("127.0.0.1", port)
    for _ in range(n):
        start = time.perf_counter()
        conn.request("GET", "/healthz")
        conn.getresponse().read()
        kept.append(time.perf_counter() - start)
        one = http.client.HTTPConnection("127.0.0.1", port)
        start = time.perf_counter()
        one.request("GET", "/healthz")
        one.getresponse().read()
        new.append(time.perf_counter() - start)
        one.close()
    conn.close()
    return {"kept_alive_p50_ms": p50(kept), "new_connection_p50_ms": p50(new)}


def p50(seconds: list[float]) -> float | None:
    return round(statistics.median(seconds) * 1000, 1) if seconds else None


def p95(seconds: list[float]) -> float | None:
    ordered = sorted(seconds)
    return round(ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000, 1) if ordered else None


async def sitting(cairns: list[Cairn], bm: BasicMemory, sessions, questions, args, run: Run):
    """Open every client in one stack, measure, then close them all within CLOSE_TIMEOUT."""
    with anyio.CancelScope() as closing:
        async with AsyncExitStack() as stack:
            try:  # the deadline also bounds closing what opened when a later open fails
                await bm.open(stack)
                clients = [await CairnClient(c.url, c.token).open(stack) for c in cairns]
                await measure(cairns, clients, bm, sessions, questions, args, run)
            finally:
                run.step("closing")
                run.closing.set()
                closing.deadline = anyio.current_time() + CLOSE_TIMEOUT
    if closing.cancelled_caught:
        run.meta["close"] = f"the clients did not close within {CLOSE_TIMEOUT:.0f} s"


async def measure(cairns, clients, bm, sessions, questions, args, run: Run) -> None:
    convs = sorted({s["conv"] for s in sessions})
    systems = dict(zip(run.raw, [*clients, bm], strict=True))
    names = list(systems)
    out = run.raw
    run.step("writing")
    for conv in convs:
        for system in systems.values():
            await system.create_project(conv)
    for i, s in enumerate(sessions):
        for name in rotate(names, i):
            out[name]["write"].append(await systems[name].write(s["conv"], s))
        run.save()
    if not args.worker:
        run.step("embedding")
        for c in cairns:
            await anyio.to_thread.run_sync(c.embed, str(args.data))
    run.step("waiting for vectors")
    vectors = [await wait_for_vectors(c, convs, 1800) for c in clients]
    ready = zip(cairns, vectors, strict=True)
    run.meta["cairn_vectors_ready_s"] = {c.label: round(s, 1) for c, s in ready}
    run.meta["basic_memory"]["search_type"] = await bm.pick_search_type(convs[0], "warm up")
    for c in clients:  # the first search of each web process loads its query model
        for _ in range(4):
            await c.search(convs[0], "warm up")
    for c in cairns:
        c.profile.write_text("")
    run.step("searching")
    seen: set[str] = set()
    for i, q in enumerate(questions):
        cold = q["q"] not in seen
        seen.add(q["q"])
        for name in rotate(names, i):
            elapsed, titles = await systems[name].search(q["conv"], q["q"])
            if cold:
                out[name]["search"].append(elapsed)
            out[name]["scores"].append(score(ranked_units(titles), q["gold"]))
        run.save()
    run.step("repeating")
    again = list({q["q"]: q for q in questions}.values())  # each question once, first asking
    for i, q in enumerate(again[: args.repeats]):
        for name in rotate(names, i):
            out[name]["repeat"].append((await systems[name].search(q["conv"], q["q"]))[0])
        run.save()
    run.step("measured")


def rotate(names: list[str], i: int) -> list[str]:
    k = i % len(names)
    return names[k:] + names[:k]


def summary(raw: dict) -> dict:
    scores = list(raw["scores"])
    mean = {
        k: round(statistics.fmean(s[k] for s in scores), 3) if scores else None
        for k in ("recall@1", "recall@5", "mrr")
    }
    return {
        "search_p50_ms": p50(raw["search"]),
        "search_p95_ms": p95(raw["search"]),
        "repeated_search_p50_ms": p50(raw["repeat"]),
        "write_p50_ms": p50(raw["write"]),
        "searches": len(raw["search"]),
        "writes": len(raw["write"]),
        **{k.replace("recall", "R"): v for k, v in mean.items()},
    }


def watchdog(run: Run, bm: BasicMemory, cairns: list[Cairn]) -> None:
    """The last resort if closing hangs the event loop anyway: results out, processes down."""
    run.closing.wait()
    if run.done.wait(WATCHDOG_GRACE):
        return
    print(f"Closing still hangs after {WATCHDOG_GRACE:.0f} s: ending Basic Memory's server, "
          "reporting, stopping serve", file=sys.stderr)  # fmt: skip
    run.meta["close"] = f"hung; Basic Memory's server {bm.kill()} by the watchdog"
    if run.done.wait(15):
        return
    run.finish(complete=run.phase == "closing")
    for c in cairns:
        c.stop()
    os._exit(3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data", help="LoCoMo dev JSON (default: shared/bench-data/ beside or above the checkout)"
    )
    parser.add_argument("--questions", type=int, default=0, help="0 = every usable question")
    parser.add_argument("--repeats", type=int, default=100, help="questions asked a second time")
    parser.add_argument("--conversations", type=int, default=0, help="the first N (0 = all 5)")
    parser.add_argument(
        "--sessions", type=int, default=0, help="the first N sessions of each (0 = all)"
    )
    parser.add_argument("--baseline", type=Path, help="another Cairn checkout to serve alongside")
    parser.add_argument("--web-workers", type=int, help="serve's --web-workers (default: its own)")
    parser.add_argument(
        "--worker",
        action="store_true",
        help="let serve's worker embed the notes (slow on a busy machine) instead of the bench "
        "embedding them with the passage cache of bench/locomo.py",
    )
    parser.add_argument(
        "--python", default=sys.executable, help="the Python that creates Basic Memory's venv"
    )
    args = parser.parse_args()
    args.data = locomo_data(args.data)
    data = json.loads(args.data.read_text())
    sessions, questions = pick(data, load_sessions(args.data)[0], args)
    exe = bm_python(args.python)
    WORK.mkdir(parents=True, exist_ok=True)
    labels = ["Cairn", *(["Cairn (baseline)"] if args.baseline else [])]
    run = Run(
        [*labels, "Basic Memory"],
        {
            "machine": {"cpus": os.cpu_count(), "loadavg_1m_before_after": [os.getloadavg()[0]]},
            "corpus": {"sessions": len(sessions), "questions": len(questions), "level": "session"},
            "basic_memory": {"version": BM_VERSION},
        },
    )
    bm = BasicMemory(exe, WORK / "basic-memory")
    cairns: list[Cairn] = []

    def terminate(signum, frame):
        # Unwind like Ctrl-C, so the finally below still reports and stops the servers; the
        # watchdog is armed in case cancelling the clients hangs.
        run.closing.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminate)
    threading.Thread(target=watchdog, args=(run, bm, cairns), daemon=True).start()
    complete = False
    try:
        cairns.append(Cairn("Cairn", ROOT, args.web_workers, args.worker))
        if args.baseline:
            root = args.baseline.resolve()
            cairns.append(Cairn("Cairn (baseline)", root, args.web_workers, args.worker))
        for c in cairns:
            c.wait_ready()
        anyio.run(sitting, cairns, bm, sessions, questions, args, run)
        run.meta["healthz"] = {c.label: healthz(c.port, 200) for c in cairns}
        complete = True
    except BaseException as exc:
        run.meta["error"] = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        run.done.set()
        run.meta["basic_memory"]["server_at_end"] = bm.kill()
        with contextlib.suppress(Exception):  # a broken profile must not cost the results
            run.meta["cairn_stage_p50_ms"] = {c.label: stage_p50s(c.profile) for c in cairns}
        run.finish(complete)
        for c in cairns:
            c.stop()


def stage_p50s(profile: Path) -> dict[str, float]:
    calls: list[dict[str, float]] = []
    for line in profile.read_text().splitlines():
        event = json.loads(line)
        if event["stage"] == "token auth":
            calls.append({})
        elif calls:
            calls[-1][event["stage"]] = calls[-1].get(event["stage"], 0.0) + event["ms"]
    calls = [c for c in calls if "search service" in c]
    names = sorted({n for c in calls for n in c})
    return {n: round(statistics.median(c.get(n, 0.0) for c in calls), 2) for n in names}


def report(results: dict, health: dict, payload: dict) -> None:
    keys = ["search_p50_ms", "search_p95_ms", "repeated_search_p50_ms", "write_p50_ms",
            "R@1", "R@5", "mrr", "searches", "writes"]  # fmt: skip
    names = list(results)
    if not payload["complete"]:
        stopped = payload.get("stopped_during", payload["phase"])
        print(f"INCOMPLETE (stopped while {stopped}): {payload.get('error', '')}")
    print(f"{'':<24}" + "".join(f"{n:>18}" for n in names) + f"{'Cairn / BM':>12}")
    for key in keys:
        values = [results[n][key] for n in names]
        ratio = f"{values[0] / values[-1]:.2f}" if values[0] is not None and values[-1] else "-"
        cells = "".join(f"{'-' if v is None else v:>18}" for v in values)
        print(f"{key:<24}{cells}{ratio:>12}")
    for label, h in health.items():
        print(f"{label}: GET /healthz p50 {h['kept_alive_p50_ms']} ms kept alive, "
              f"{h['new_connection_p50_ms']} ms on a new connection")  # fmt: skip
    load = payload["machine"]["loadavg_1m_before_after"]
    print(f"Load average (1 min) before/after: {load[0]:.1f} / {load[-1]:.1f}, "
          f"{os.cpu_count()} CPUs; {payload['elapsed_s']:.0f} s in all")  # fmt: skip
    bm = payload["basic_memory"]
    end, close = bm.get("server_at_end", "?"), payload.get("close", "the clients closed")
    print(f"Basic Memory {bm['version']} searched with: {bm.get('search_type', '?')}; "
          f"its server at the end: {end}; {close}")  # fmt: skip


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # reported and stopped already (main's finally)
        sys.exit(130)
