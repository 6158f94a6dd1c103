"""Cairn and Basic Memory side by side: the same LoCoMo conversations, written and searched over
MCP as agents call them, in one sitting.

    .venv/bin/python bench/side_by_side.py [--data ../shared/bench-data/locomo-dev.json]
                                           [--questions 0] [--repeats 100] [--baseline DIR]

Cairn runs as `manage.py serve` (web, worker, embedded PostgreSQL and broker) on a fresh var
directory under var/bench/side_by_side/, so it never touches an installation; the bench talks to
it over streamable HTTP with one kept-alive MCP client. Basic Memory (the released package,
installed by this bench into its own virtual environment under var/bench/) runs over stdio with
its config and notes under the same directory. Both get one note per session of each
conversation (a project per conversation), then every non-adversarial question with its
project, one client each, alternating which system is asked first. Prints search p50/p95,
write p50 and session-level R@1/R@5/MRR of both with their ratios, and GET /healthz on a
kept-alive and on a new connection; writes JSON to bench/results/.

--baseline DIR also serves the Cairn checkout in DIR (e.g. `git worktree add /tmp/before main`)
on its own var directory and asks it the same questions in the same sitting: before/after.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._common import free_port  # noqa: E402
from bench.locomo import parse_evidence, score, unit_of  # noqa: E402
from bench.mcp_load import Client, load_sessions  # noqa: E402

BM_VERSION = "0.24.1"
WORK = ROOT / "var" / "bench" / "side_by_side"
SESSION = re.compile(r"Session (\d+)\b")


def default_data() -> Path:
    """../shared/bench-data/locomo-dev.json beside the checkout (or beside a worktree's parent)."""
    near = [up / "shared" / "bench-data" / "locomo-dev.json" for up in ROOT.parents[:2]]
    return next((path for path in near if path.exists()), near[0])


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
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)  # serve stops its children in order
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.log.close()


class CairnClient(Client):
    async def tool(self, name: str, args: dict) -> tuple[float, dict]:
        start = time.perf_counter()
        result = await self._session.call_tool(name, args)
        elapsed = time.perf_counter() - start
        if result.is_error:
            raise RuntimeError(f"Cairn {name} failed: {result.content[0].text}")
        return elapsed, result.structured_content or {}

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

    async def __aenter__(self):
        self._log = open(self.home / "server.log", "w")  # noqa: SIM115 (closed in __aexit__)
        self._stdio = stdio_client(self.params, errlog=self._log)
        read, write = await self._stdio.__aenter__()
        self._session = ClientSession(read, write)
        await self._session.__aenter__()
        await self._session.initialize()
        return self

    async def __aexit__(self, *exc):
        with anyio.move_on_after(10):
            await self._session.__aexit__(*exc)
            await self._stdio.__aexit__(*exc)
        self._log.close()

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


def ranked_units(titles: list[str]) -> list[str]:
    units: list[str] = []
    for title in titles:
        m = SESSION.match(title)
        unit = f"S{m.group(1)}" if m else "?"
        if unit not in units:
            units.append(unit)
    return units


def questions_of(data: list[dict], limit: int) -> list[dict]:
    out = []
    for sample in data:
        for qa in sample["qa"]:
            gold = {unit_of(e, "session") for e in parse_evidence(qa.get("evidence", []))}
            if qa.get("category") != 5 and gold:
                out.append({"conv": sample["sample_id"], "q": str(qa["question"]), "gold": gold})
    return out[:limit] if limit else out


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


def p50(seconds: list[float]) -> float:
    return round(statistics.median(seconds) * 1000, 1) if seconds else float("nan")


def p95(seconds: list[float]) -> float:
    ordered = sorted(seconds)
    return round(ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000, 1) if ordered else 0.0


async def sitting(cairns: list[Cairn], bm: BasicMemory, sessions, questions, args):
    convs = sorted({s["conv"] for s in sessions})
    names = [c.label for c in cairns] + ["Basic Memory"]
    out = {n: {"write": [], "search": [], "repeat": [], "scores": []} for n in names}
    clients = [CairnClient(c.url, c.token) for c in cairns]
    async with bm:
        for c in clients:
            await c.__aenter__()
        try:
            systems = dict(zip(names, [*clients, bm], strict=True))
            for conv in convs:
                for c in clients:
                    await c.tool("create_project", {"slug": conv})
                await bm.create_project(conv)
            for i, s in enumerate(sessions):
                for name in rotate(names, i):
                    out[name]["write"].append(await systems[name].write(s["conv"], s))
            if not args.worker:
                for c in cairns:
                    await anyio.to_thread.run_sync(c.embed, args.data)
            vectors_s = [await wait_for_vectors(c, convs, 1800) for c in clients]
            bm_search = await bm.pick_search_type(convs[0], "warm up")
            for c in clients:  # the first search of each web process loads its query model
                for _ in range(4):
                    await c.search(convs[0], "warm up")
            for c in cairns:
                c.profile.write_text("")
            seen: set[str] = set()
            for i, q in enumerate(questions):
                cold = q["q"] not in seen
                seen.add(q["q"])
                for name in rotate(names, i):
                    elapsed, titles = await systems[name].search(q["conv"], q["q"])
                    if cold:
                        out[name]["search"].append(elapsed)
                    out[name]["scores"].append(score(ranked_units(titles), q["gold"]))
            again = [
                q for i, q in enumerate(questions) if q["q"] not in {x["q"] for x in questions[:i]}
            ]
            for i, q in enumerate(again[: args.repeats]):
                for name in rotate(names, i):
                    out[name]["repeat"].append((await systems[name].search(q["conv"], q["q"]))[0])
        finally:
            for c in clients:  # a client that will not close must not lose the sitting
                with anyio.move_on_after(10):
                    await c.__aexit__(None, None, None)
    return out, vectors_s, bm_search


def rotate(names: list[str], i: int) -> list[str]:
    k = i % len(names)
    return names[k:] + names[:k]


def summary(raw: dict) -> dict:
    scores = raw["scores"]
    mean = {
        k: round(statistics.fmean(s[k] for s in scores), 3) for k in ("recall@1", "recall@5", "mrr")
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(default_data()))
    parser.add_argument("--questions", type=int, default=0, help="0 = every usable question")
    parser.add_argument("--repeats", type=int, default=100, help="questions asked a second time")
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
    data = json.loads(Path(args.data).read_text())
    sessions, _ = load_sessions(Path(args.data))
    questions = questions_of(data, args.questions)
    exe = bm_python(args.python)
    WORK.mkdir(parents=True, exist_ok=True)
    cairns = [Cairn("Cairn", ROOT, args.web_workers, args.worker)]
    if args.baseline:
        baseline = Cairn("Cairn (baseline)", args.baseline.resolve(), args.web_workers, args.worker)
        cairns.append(baseline)
    load = [os.getloadavg()[0]]
    try:
        for c in cairns:
            c.wait_ready()
        bm = BasicMemory(exe, WORK / "basic-memory")
        raw, vectors_s, bm_search = anyio.run(sitting, cairns, bm, sessions, questions, args)
        health = {c.label: healthz(c.port, 200) for c in cairns}
        stages = {c.label: stage_p50s(c.profile) for c in cairns}
    finally:
        load.append(os.getloadavg()[0])
        for c in cairns:
            c.stop()
    results = {name: summary(r) for name, r in raw.items()}
    report(results, health, load)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = ROOT / "bench" / "results" / f"side_by_side-{stamp}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(
        json.dumps(
            {
                "benchmark": "side_by_side",
                "when": stamp,
                "machine": {"cpus": os.cpu_count(), "loadavg_1m_before_after": load},
                "corpus": {
                    "sessions": len(sessions),
                    "questions": len(questions),
                    "level": "session",
                },
                "basic_memory": {"version": BM_VERSION, "search_type": bm_search},
                "cairn_vectors_ready_s": dict(
                    zip([c.label for c in cairns], vectors_s, strict=True)
                ),
                "results": results,
                "healthz": health,
                "cairn_stage_p50_ms": stages,
            },
            indent=2,
        )
    )
    print(f"Basic Memory {BM_VERSION} searched with: {bm_search}")
    print(f"Wrote {target.relative_to(ROOT)}")


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


def report(results: dict, health: dict, load: list[float]) -> None:
    keys = ["search_p50_ms", "search_p95_ms", "repeated_search_p50_ms", "write_p50_ms",
            "R@1", "R@5", "mrr"]  # fmt: skip
    names = list(results)
    print(f"{'':<24}" + "".join(f"{n:>18}" for n in names) + f"{'Cairn / BM':>12}")
    for key in keys:
        values = [results[n][key] for n in names]
        ratio = values[0] / values[-1] if values[-1] else float("nan")
        print(f"{key:<24}" + "".join(f"{v:>18}" for v in values) + f"{ratio:>12.2f}")
    for label, h in health.items():
        print(f"{label}: GET /healthz p50 {h['kept_alive_p50_ms']} ms kept alive, "
              f"{h['new_connection_p50_ms']} ms on a new connection")  # fmt: skip
    print(
        f"Load average (1 min) before/after: {load[0]:.1f} / {load[-1]:.1f}, {os.cpu_count()} CPUs"
    )


if __name__ == "__main__":
    main()
