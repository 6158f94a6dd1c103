"""Reliability's phase 2 (bench/reliability.py): the hostile inputs of issues 12 and 18, each
timed against HOSTILE_LIMIT_S while a canary client keeps calling `browse`.
"""

from __future__ import annotations

import json
import time

import anyio
import httpx2

from bench.reliability_client import Agent
from bench.reliability_client import pct as _pct
from bench.reliability_client import tool_text as _text

HOSTILE_LIMIT_S = 2.0


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
