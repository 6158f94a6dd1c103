"""Reliability's phase 1 (bench/reliability.py): concurrent MCP agents mix reads and writes, then
every acknowledged append must be in its entry, and one `mirror drain` must leave nothing pending.
"""

from __future__ import annotations

import random
import subprocess
import time

import anyio
import httpx2

from bench.mcp_load_servers import PY, ROOT
from bench.reliability_client import Agent
from bench.reliability_client import tool_text as _text


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
