"""One request costs the web process a bounded amount of memory, whatever the history behind it.

The heavy shapes of issue 44, against the real ASGI app (tests/mcp_api/conftest.py: uvicorn in
this process, so this process is the web process): a stale write to a large entry with hundreds
of revisions since the version it read (its refusal once loaded every one of them, bodies
included), its history listed 500 at a time (once read whole), the same over MCP, and a search
that keeps its answer. For each, the process's peak resident memory above where it stood
(Linux: VmHWM, reset through /proc/self/clear_refs) stays under MAX_GROWTH_MB, while a canary on
new connections keeps answering.

Checked to fail: with the conflict read of before this test (every later revision whole), the
stale PATCH grew the process by 225 MB and the MCP upsert by 96 MB; with `only()` left out of
entry_revisions, the history listing by 223 MB.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request

import anyio
import pytest
from django.db import connection

from knowledge.models import Entry, HistoricalEntry
from tests.mcp_api.conftest import mcp_session

MAX_GROWTH_MB = 64
CANARY_SECONDS = 2.0
V1 = "/api/v1"
BODY_LINES = 12_000  # ~500 KB
REVISIONS = 300  # later revisions, each a copy of the large body: ~150 MB if read whole


def _request(url, token, *, method="GET", body=None):
    request = urllib.request.Request(url, data=body, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _status_kb(key: str) -> int:
    with open("/proc/self/status") as status:
        return int(next(line for line in status if line.startswith(key + ":")).split()[1])


def _peak_growth_mb(call) -> tuple[float, object]:
    """What `call()` gives and the process's peak resident memory above where it stood."""
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # the peak (VmHWM) starts again from the resident size
    before = _status_kb("VmRSS")
    outcome = call()
    return (_status_kb("VmHWM") - before) / 1024, outcome


def _body(version: int) -> str:
    return "".join(f"- [fact] line {i} of version {version}\n" for i in range(BODY_LINES))


def _with_many_revisions(entry: Entry, count: int) -> None:
    """`count` more revisions of the entry, each a whole copy of its body, made in the database
    (writing them through the service would take minutes; the refusal reads them the same)."""
    fields = [
        f.column for f in HistoricalEntry._meta.concrete_fields if f.column not in ("history_id",)
    ]
    copied = ", ".join(
        "version + g" if column == "version" else connection.ops.quote_name(column)
        for column in fields
    )
    table = HistoricalEntry._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({', '.join(map(connection.ops.quote_name, fields))}) "
            f"SELECT {copied} FROM {table}, generate_series(1, %s) g "
            f"WHERE id = %s AND version = %s",
            [count, entry.pk, entry.version],
        )
    Entry.objects.filter(pk=entry.pk).update(version=entry.version + count)


class Canary(threading.Thread):
    """Asks for the project list on a new connection, again and again, until stopped."""

    def __init__(self, base: str, token: str):
        super().__init__(daemon=True)
        self.base, self.token, self.times = base, token, []
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            start = time.perf_counter()
            status, _ = _request(f"{self.base}{V1}/projects", self.token)
            assert status == 200
            self.times.append(time.perf_counter() - start)
            self.stop.wait(0.05)


@pytest.mark.django_db(transaction=True)
def test_heavy_requests_grow_the_web_process_by_a_bounded_amount(live_server_url, acme, token):
    base = live_server_url
    put = json.dumps({"project": "acme", "title": "Large", "body": _body(1)}).encode()
    status, text = _request(f"{base}{V1}/entries", token, method="PUT", body=put)
    assert status in (200, 201), text[:300]
    entry = Entry.objects.get(title="Large")
    _with_many_revisions(entry, REVISIONS - 1)
    last = json.dumps({"body": _body(2), "expected_version": REVISIONS}).encode()
    status, text = _request(f"{base}{V1}/entries/{entry.pk}", token, method="PATCH", body=last)
    assert status == 200, text[:300]  # the newest revision changes the text: a diff to show
    stale = json.dumps({"body": _body(0), "expected_version": 1}).encode()

    def mcp_stale_upsert():
        async def go():
            async with mcp_session(f"{base}/mcp", token) as session:
                return await session.call_tool(
                    "upsert",
                    {"project": "acme", "title": "Large", "body": _body(0), "expected_version": 1},
                )

        return anyio.run(go)

    def mcp_history():
        async def go():
            async with mcp_session(f"{base}/mcp", token) as session:
                return await session.call_tool("history", {"id": entry.short_id, "limit": 500})

        return anyio.run(go)

    heavy = {
        "stale PATCH (REST)": lambda: _request(
            f"{base}{V1}/entries/{entry.pk}", token, method="PATCH", body=stale
        ),
        "history?limit=500 (REST)": lambda: _request(
            f"{base}{V1}/entries/{entry.pk}/history?limit=500", token
        ),
        "stale upsert (MCP)": mcp_stale_upsert,
        "history limit=500 (MCP)": mcp_history,
        "search (REST)": lambda: _request(f"{base}{V1}/search?q=line+fact+version&limit=50", token),
    }
    for call in heavy.values():
        call()  # first calls import and warm what every later call shares

    canary = Canary(base, token)
    canary.start()
    grown = {}
    try:
        for what, call in heavy.items():
            grown[what], outcome = _peak_growth_mb(call)
            if isinstance(outcome, tuple):
                status, text = outcome
                assert status in (200, 409), f"{what}: {status} {text[:300]}"
                if status == 409:
                    problem = json.loads(text)
                    assert problem["current_version"] == 1 + REVISIONS
                    assert problem["changes_total"] == REVISIONS  # counted, 20 of them listed
                    assert len(problem["changes"]) == 20 and problem.get("diff")
            else:
                assert outcome.content, what
    finally:
        canary.stop.set()
        canary.join(timeout=30)
    print("\npeak growth per request (MB): " + ", ".join(f"{k} {v:.1f}" for k, v in grown.items()))
    assert {what: mb for what, mb in grown.items() if mb > MAX_GROWTH_MB} == {}
    assert canary.times and max(canary.times) < CANARY_SECONDS, (
        f"the canary waited {max(canary.times):.2f} s"
    )
