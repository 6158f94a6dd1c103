"""What bench/side_by_side.py measured: the sitting's raw timings and scores, the JSON file
kept current while it runs (`"complete": false` until the end), and the table it prints."""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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


def p50(seconds: list[float]) -> float | None:
    return round(statistics.median(seconds) * 1000, 1) if seconds else None


def p95(seconds: list[float]) -> float | None:
    ordered = sorted(seconds)
    return round(ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000, 1) if ordered else None


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
