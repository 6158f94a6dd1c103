"""Hostile requests against `serve`: time and web-process memory per request.

    .venv/bin/python bench/bounds.py [--spots 1000,2000,4000,8000] [--edits 1000] [--web 2]

What issue 44 asks of a stale write and a history listing, as an attacker with a write token
would send them: a stale PATCH whose body changed N spots of the text the writer read while
another writer changed N others (interleaved: they merge) or the same ones (clashing), timed
while a canary asks for the project list on new connections; then a 1 MB entry edited
`--edits` times, a stale PATCH that read its first version, and its history 500 at a time, each
measured as the web processes' peak resident memory above where they stood (Linux: VmHWM,
reset through /proc/PID/clear_refs).

`serve` runs as `make run` does, on a fresh `cairn_bench` database of the embedded server (never
the installation's own). Prints two tables, writes bench/results/bounds.json.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import ROOT, print_table, write_json
from bench.agents_mix import start_serve
from bench.mcp_load_servers import prepare_database, stop_what_we_started

PROJECT = "bench-bounds"


def request(url: str, token: str, *, method: str = "GET", body: dict | None = None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", f"Bearer {token}")
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=300) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


WEB_PROCESSES: list = []  # the serve's web processes, found once it answers


def web_processes(port: int) -> list:
    import psutil

    found = [
        p
        for p in psutil.process_iter(["cmdline"])
        if "memory_site.webserver" in (line := " ".join(p.info["cmdline"] or []))
        and f"--port {port}" in line
    ]
    # With several workers the supervisor only forwards: measure the ones that answer.
    workers = [p for p in found if p.ppid() in {q.pid for q in found}]
    return workers or found


def _kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        return int(next(line for line in status if line.startswith(key + ":")).split()[1])


def peak_growth_mb(call) -> tuple[float, object]:
    """(the largest peak growth of a web process during call(), what call() gave)."""
    procs = WEB_PROCESSES
    before = {}
    for proc in procs:
        Path(f"/proc/{proc.pid}/clear_refs").write_text("5")
        before[proc.pid] = _kb(proc.pid, "VmRSS")
    outcome = call()
    return max((_kb(pid, "VmHWM") - kb) / 1024 for pid, kb in before.items()), outcome


class Canary(threading.Thread):
    def __init__(self, url: str, token: str):
        super().__init__(daemon=True)
        self.url, self.token, self.times, self.stop = url, token, [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            start = time.perf_counter()
            request(f"{self.url}/api/v1/projects", self.token)
            self.times.append(time.perf_counter() - start)
            self.stop.wait(0.05)


def _lines(n: int, mark: str = "") -> list[str]:
    return [f"- [fact] spot {i} of the runbook{mark}" for i in range(n)]


def stale_patch(url: str, token: str, spots: int, shape: str) -> dict:
    """A stale PATCH after another writer's change: both changed `spots` lines of 2·spots."""
    title = f"spots {spots} {shape} {time.time_ns()}"
    base = _lines(2 * spots)
    if shape == "interleaved":
        theirs = [line + " (theirs)" if i % 2 == 0 else line for i, line in enumerate(base)]
        mine = [line + " (mine)" if i % 2 else line for i, line in enumerate(base)]
    else:
        theirs = [line + " (theirs)" if i % 2 == 0 else line for i, line in enumerate(base)]
        mine = [line + " (mine)" if i % 2 == 0 else line for i, line in enumerate(base)]
    status, made = request(
        f"{url}/api/v1/entries",
        token,
        method="PUT",
        body={"project": PROJECT, "title": title, "body": "\n".join(base)},
    )
    assert status in (200, 201), made
    ref = made["entry"]["id"]
    status, _ = request(
        f"{url}/api/v1/entries/{ref}", token, method="PATCH", body={"body": "\n".join(theirs)}
    )
    assert status == 200
    canary = Canary(url, token)
    canary.start()
    start = time.perf_counter()
    status, answer = request(
        f"{url}/api/v1/entries/{ref}",
        token,
        method="PATCH",
        body={"body": "\n".join(mine), "expected_version": 1},
    )
    seconds = time.perf_counter() - start
    canary.stop.set()
    canary.join()
    helps = [k for k in ("merged_body", "conflicts", "diff") if answer.get(k)]
    return {
        "case": f"stale PATCH, {spots:,} spots {shape}",
        "status": status,
        "seconds": round(seconds, 3),
        "canary_worst_s": round(max(canary.times, default=0.0), 3),
        "body_kb": round(len("\n".join(mine)) / 1024),
        "answer": "+".join(helps),
        "conflicts_total": answer.get("conflicts_total", len(answer.get("conflicts") or [])),
    }


def many_edits(url: str, token: str, edits: int) -> tuple[int, str]:
    """A ~1 MB entry edited `edits` times: (its id, its first body)."""
    from tqdm import tqdm

    body = "\n".join(_lines(27_000))
    status, made = request(
        f"{url}/api/v1/entries",
        token,
        method="PUT",
        body={"project": PROJECT, "title": f"large {time.time_ns()}", "body": body},
    )
    assert status in (200, 201), made
    ref = made["entry"]["id"]
    retried = 0
    for i in tqdm(range(edits), desc=f"{edits} edits of a 1 MB entry", unit="edit"):
        for _ in range(3):  # a 503 says: retry in a few seconds
            status, answer = request(
                f"{url}/api/v1/entries/{ref}/edit",
                token,
                method="POST",
                body={"operation": "append", "content": f"- [edit] number {i}"},
            )
            if status != 503:
                break
            retried += 1
            time.sleep(5)
        assert status == 200, answer
    if retried:
        print(f"{retried} edit(s) answered 503 (the database busy) and were sent again")
    return ref, body


def heavy_reads(url: str, token: str, ref: int, body: str, edits: int) -> list[dict]:
    """Each heavy request's peak memory in web processes that served nothing heavy before (a
    process that did keeps the freed memory and would show no growth)."""
    rows = []
    request(f"{url}/api/v1/entries/{ref}", token)  # warm: imports, caches, the connection
    for case, call in (
        (
            f"stale PATCH after {edits} edits (1 MB)",
            lambda: request(
                f"{url}/api/v1/entries/{ref}",
                token,
                method="PATCH",
                body={"body": body + "\n- [mine] one more", "expected_version": 1},
            ),
        ),
        (
            f"history?limit=500 of it ({edits} edits)",
            lambda: request(f"{url}/api/v1/entries/{ref}/history?limit=500", token),
        ),
    ):
        start = time.perf_counter()
        grown, (status, _) = peak_growth_mb(call)
        rows.append(
            {
                "case": case,
                "status": status,
                "seconds": round(time.perf_counter() - start, 3),
                "peak_growth_mb": round(grown, 1),
            }
        )
    return rows


def serve(env: dict, web: int):
    proc, mcp_url = start_serve(env, web)
    url = mcp_url.removesuffix("/mcp")
    WEB_PROCESSES[:] = web_processes(int(url.rsplit(":", 1)[1]))
    return proc, url


def stop(proc) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spots", default="1000,2000,4000,8000", help="0: none")
    parser.add_argument("--edits", type=int, default=1000, help="0: skip the memory part")
    parser.add_argument("--web", type=int, default=2, help="web processes")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")
    env = prepare_database()
    from memory_site import embedded

    env |= {
        "CAIRN_VAR_DIR": str(ROOT / "var" / "bench-bounds"),
        "CAIRN_MIRROR_PATH": str(ROOT / "var" / "bench-bounds" / "mirror.git"),
        "CAIRN_PG_DIR": str(embedded.PG_DIR),
        "CAIRN_BROKER_DIR": str(embedded.BROKER_DIR),
    }
    token, memory = env["CAIRN_BENCH_TOKEN"], []
    proc, url = serve(env, args.web)
    try:
        request(f"{url}/api/v1/projects", token, method="POST", body={"slug": PROJECT})
        spots = [int(s) for s in args.spots.split(",") if int(s)]
        shapes = ("interleaved", "clashing")
        stale = [stale_patch(url, token, n, shape) for n in spots for shape in shapes]
        if args.edits:
            ref, body = many_edits(url, token, args.edits)
            stop(proc)
            proc, url = serve(env, 1)  # one fresh web process for the memory part
            memory = heavy_reads(url, token, ref, body, args.edits)
    finally:
        stop(proc)
        stop_what_we_started()
    print_table(
        ["case", "status", "seconds", "canary worst s", "body KB", "answer", "clashes"],
        [[r["case"], r["status"], r["seconds"], r["canary_worst_s"], r["body_kb"], r["answer"],
          r["conflicts_total"]] for r in stale],
    )  # fmt: skip
    print()
    print_table(
        ["case", "status", "seconds", "peak growth MB"],
        [[r["case"], r["status"], r["seconds"], r["peak_growth_mb"]] for r in memory],
    )
    write_json("bounds", {"web": args.web, "stale_writes": stale, "memory": memory})


if __name__ == "__main__":
    main()
