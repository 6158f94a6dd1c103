"""No request holds the others up: while hostile requests run over REST and MCP, a canary on new
connections keeps getting answers in about the time it gets them at rest.

The server is the real ASGI app under uvicorn (tests/mcp_api/conftest.py), in this process: one
process and one GIL. What this catches is a request stuck in a C call that keeps the GIL (a
backtracking pattern in the `re` engine): the canary stops too. Times are compared only within
the run: the canary's worst latency under attack against its latency at rest, measured just
before.

Checked to fail: with parse_heading's old backtracking pattern put back, the canary's request
timed out behind the heading line. Work in Python gives the GIL up every few milliseconds, so
a slow request of that kind does not stop the canary and passes here: the YAML alias bomb (the
shape check of knowledge.safe_yaml removed) and a quadratic diff of the 1,000 lines (difflib
back in knowledge.diffs) both did. tests/hardening/test_pipelines_linear.py and
test_bounded_diffs.py catch those, by measuring the work itself; this test checks that each
hostile request gets an answer, and that the process keeps answering others meanwhile.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import anyio
import pytest

from tests.hardening.pipelines import enum_aliases
from tests.mcp_api.conftest import mcp_session

V1 = "/api/v1"
# The canary's worst latency under attack may be this many times its median at rest. A pattern
# that held the GIL took seconds: hundreds of times a canary's few milliseconds. Threads of one
# process share a GIL, so some wait is expected: a canary waits for the running request's
# current slice of Python.
MAX_SLOWDOWN = 50
ATTACK_ROUNDS = 3
DEADLINE_SECONDS = 120  # the whole attack; it takes a few seconds


def _request(url: str, token: str, *, method: str = "GET", body: bytes | None = None):
    """(status, text) on a new connection; a disconnect raises (and fails the test)."""
    request = urllib.request.Request(url, data=body, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    if body is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _put(base: str, token: str, title: str, body: str, kind: str = "note"):
    data = json.dumps({"project": "acme", "title": title, "body": body, "kind": kind})
    return _request(f"{base}{V1}/entries", token, method="PUT", body=data.encode())


def _canary(base: str, token: str) -> float:
    start = time.perf_counter()
    status, _ = _request(f"{base}{V1}/projects", token)
    assert status == 200
    return time.perf_counter() - start


def _mcp(base: str, token: str, tool: str, **args):
    async def go():
        async with mcp_session(f"{base}/mcp", token) as session:
            return await session.call_tool(tool, args)

    return anyio.run(go)


def _hostile(base: str, token: str) -> list:
    """Each hostile request once; returns (what, status or MCP result) for each."""
    alias_schema = "```yaml\n" + enum_aliases(8) + "```\n"  # 9^8 values once expanded
    deep_yaml = "```yaml\nk: " + "[" * 5000 + "]" * 5000 + "\n```\n"
    lines_a = "".join(f"- [fact] the same line {i % 3}\n" for i in range(1000))
    lines_b = "".join(f"- [fact] another line {i % 5}\n" for i in range(1000))
    huge_query = " ".join(f'"word{i}" -x{i} OR' for i in range(20_000))
    # A backtracking heading pattern was cubic on this line (9-30 s inside the C regex engine,
    # holding the GIL); the write reads its headings, and replace_section reads them again.
    heading = "# a" + " " * 5000 + "b\n\nsome text\n"
    status, text = _put(base, token, "heading", heading)
    ref = json.loads(text)["entry"]["short_id"] if status < 300 else "heading"
    results = [
        ("heading line (REST)", (status, text)),
        ("replace_section under it (MCP)", _mcp(base, token, "edit", id=ref,
                                               operation="replace_section", section="nope",
                                               content="x")),
        ("alias schema (REST)", _put(base, token, "bomb", alias_schema, kind="schema")),
        ("deep YAML schema (REST)", _put(base, token, "deep", deep_yaml, kind="schema")),
        ("1,000 lines (REST)", _put(base, token, "lines", lines_a)),
        ("1,000 lines replaced (REST)", _put(base, token, "lines", lines_b)),
        ("long search (REST)", _request(f"{base}{V1}/search?q=" + "a%20" * 1500, token)),
        ("alias schema (MCP)", _mcp(base, token, "upsert", project="acme", title="bomb2",
                                    body=alias_schema, kind="schema")),
        ("huge search (MCP)", _mcp(base, token, "search", query=huge_query)),
    ]  # fmt: skip
    return results


def _answered(what: str, outcome) -> None:
    if isinstance(outcome, tuple):
        status, text = outcome
        assert status < 500, f"{what}: {status} {text[:300]}"
        if status >= 400:
            assert "detail" in text or "message" in text or "error" in text, f"{what}: {text[:300]}"
    else:  # an MCP result: an answer, or an error the tool explains
        texts = " ".join(getattr(c, "text", "") for c in outcome.content)
        assert texts.strip(), f"{what}: an empty MCP result"
        assert "Internal" not in texts, f"{what}: {texts[:300]}"


@pytest.mark.django_db(transaction=True)
def test_a_canary_keeps_answering_while_hostile_requests_run(live_server_url, acme, token):
    server = next(t for t in threading.enumerate() if t.name == "uvicorn-test")
    for _ in range(3):
        _canary(live_server_url, token)  # warm: connections, caches, first queries
    at_rest = [_canary(live_server_url, token) for _ in range(20)]

    started = time.monotonic()
    under_attack: list[float] = []
    with ThreadPoolExecutor(3) as pool:
        rounds = [pool.submit(_hostile, live_server_url, token) for _ in range(ATTACK_ROUNDS)]
        while not all(r.done() for r in rounds):
            assert time.monotonic() - started < DEADLINE_SECONDS, "the attack did not end"
            under_attack.append(_canary(live_server_url, token))
        outcomes = [item for r in rounds for item in r.result()]

    for what, outcome in outcomes:
        _answered(what, outcome)
    assert server.is_alive()
    assert _canary(live_server_url, token) > 0  # still answering after it
    rest = statistics.median(at_rest)
    worst = max(under_attack, default=0.0)
    print(
        f"\ncanary at rest: median {rest * 1000:.1f} ms, worst {max(at_rest) * 1000:.1f} ms; "
        f"under attack ({len(under_attack)} calls, {time.monotonic() - started:.1f} s): "
        f"median {statistics.median(under_attack or [0]) * 1000:.1f} ms, "
        f"worst {worst * 1000:.1f} ms ({worst / rest:.1f}x)"
    )
    assert len(under_attack) >= 3, "the attack ended before the canary could measure it"
    assert worst <= MAX_SLOWDOWN * rest, (
        f"the canary waited {worst / rest:.0f}x its latency at rest during the attack"
    )
