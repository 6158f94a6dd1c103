"""What bench/mcp_load.py measures with (bench/side_by_side.py reads its corpus too): the LoCoMo
sessions and questions, the distinct questions of each search phase, a row of latencies, and the
p50 per search stage from a server's profile lines (or from stages.collect in-process)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path


def load_sessions(path: Path) -> tuple[list[dict], list[dict]]:
    data = json.loads(path.read_text())
    sessions, questions = [], []
    for sample in data:
        conv = sample["conversation"]
        n = 1
        while f"session_{n}" in conv:
            lines = []
            for turn in conv[f"session_{n}"]:
                text = turn["text"]
                if turn.get("blip_caption"):
                    # Same text as bench/locomo.py, so its passage-vector cache serves both.
                    text += f" [shares an image: {turn['blip_caption']}]"
                lines.append(f"{turn['speaker']}: {text}")
            sessions.append(
                {
                    "conv": sample["sample_id"],
                    "title": f"Session {n} ({conv.get(f'session_{n}_date_time', '')})",
                    "body": "\n".join(lines),
                }
            )
            n += 1
        questions += [
            {"conv": sample["sample_id"], "q": q["question"]}
            for q in sample["qa"]
            if q.get("category") != 5
        ]
    return sessions, questions


def summarize(name: str, clients: int, latencies: list[float], wall: float, cpu=None) -> dict:
    ms = sorted(x * 1000 for x in latencies)
    return {
        "server_cpu_ms_per_call": None if cpu is None else round(cpu, 1),
        "operation": name,
        "clients": clients,
        "calls": len(ms),
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(ms[max(0, int(len(ms) * 0.95) - 1)], 1),
        "per_second": round(len(ms) / wall, 1),
    }


def pick_questions(questions: list[dict], searches: int, part: int) -> list[dict]:
    """`searches` distinct questions; parts 0, 1 and 2 share none, so no phase reuses another's
    query vectors (the cache must not help: the target is for cold queries)."""
    seen, unique = set(), []
    for q in questions:
        if q["q"] not in seen:
            seen.add(q["q"])
            unique.append(q)
    step = max(1, len(unique) // (3 * searches))
    return unique[part * step :: 3 * step][:searches] if step > 1 else unique[part::3][:searches]


def server_breakdown(profile: Path, latencies: list[float]) -> dict[str, float]:
    """p50 per stage from the server's profile lines (one client: calls run one at a time, each
    HTTP request starts with its token check), and MCP transport = client time - server stages."""
    calls: list[dict[str, float]] = []
    current: dict[str, float] = {}
    for line in profile.read_text().splitlines():
        event = json.loads(line)
        if event["stage"] == "token auth":
            current = {}
            calls.append(current)
        current[event["stage"]] = current.get(event["stage"], 0.0) + event["ms"]
    calls = [c for c in calls if "search service" in c]
    out = stage_p50(calls)
    if len(calls) == len(latencies):
        out["MCP transport + framework"] = statistics.median(
            lat * 1000 - c.get("token auth", 0) - c["search service"] - c.get("render", 0)
            for lat, c in zip(latencies, calls, strict=True)
        )
        if all("MCP request" in c for c in calls):  # servers that time the whole request
            out["MCP framework (server)"] = statistics.median(
                c["MCP request"] - c.get("token auth", 0) - c["search service"] - c.get("render", 0)
                for c in calls
            )
            out["HTTP + client"] = statistics.median(
                lat * 1000 - c["MCP request"] for lat, c in zip(latencies, calls, strict=True)
            )
    out["client round trip"] = statistics.median(x * 1000 for x in latencies)
    return out


STAGE_ORDER = [
    "token auth",
    "parse + scope",
    "idf lookup",
    "text SQL",
    "embed",
    "embed wait",
    "vector SQL",
    "fusion",
    "hits + snippets",
    "search service",
    "render",
]


def stage_p50(calls: list[dict[str, float]]) -> dict[str, float]:
    names = [n for n in STAGE_ORDER if any(n in c for c in calls)]
    names += sorted({n for c in calls for n in c} - set(names))
    # A stage a call skipped (cached embedding) counts as 0 ms for that call.
    return {n: statistics.median(c.get(n, 0.0) for c in calls) for n in names}
