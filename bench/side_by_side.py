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
import signal
import sys
import threading
import time
from contextlib import AsyncExitStack
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._common import locomo_data  # noqa: E402
from bench.locomo_data import parse_evidence, unit_of  # noqa: E402
from bench.locomo_scoring import score  # noqa: E402
from bench.mcp_load_stages import load_sessions  # noqa: E402
from bench.side_by_side_results import Run, p50, stage_p50s  # noqa: E402
from bench.side_by_side_systems import (  # noqa: E402
    BM_VERSION,
    WORK,
    BasicMemory,
    Cairn,
    CairnClient,
    bm_python,
)

SESSION = re.compile(r"Session (\d+)\b")
# Once the sitting's work is done the clients get this long to close; then the close is
# cancelled (Basic Memory's transport still stops its server, shielded, within ~7 s).
CLOSE_TIMEOUT = 30.0
# If the event loop still has not returned this long after closing began, a watchdog thread
# kills Basic Memory, prints and writes the results, stops serve and exits.
WATCHDOG_GRACE = CLOSE_TIMEOUT + 45.0


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
    # A real question: "warm up" matched nothing and so never reached its vector search.
    first = questions[0]
    run.meta["basic_memory"]["search_type"] = await bm.pick_search_type(first["conv"], first["q"])
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


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # reported and stopped already (main's finally)
        sys.exit(130)
