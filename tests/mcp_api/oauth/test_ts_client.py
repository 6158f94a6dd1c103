"""The same flow with the official MCP TypeScript SDK client (@modelcontextprotocol/sdk, pinned
in ts/package.json and installed by `make test` from ts/package-lock.json): discovery,
registration, PKCE, the person's sign-in and consent, token, tools, refresh."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from knowledge.models import ApiToken, Entry, OAuthGrant
from mcp_api.app import LISTED
from tests.mcp_api.oauth.conftest import PASSWORD

HERE = Path(__file__).parent / "ts"


def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.fail(
            "Node 20 is needed for the TypeScript client test: install nodejs.", pytrace=False
        )
    if not (HERE / "node_modules/@modelcontextprotocol/sdk").exists():
        pytest.fail(
            "The TypeScript SDK is not installed: run `make test` (it runs npm ci in "
            f"{HERE.relative_to(HERE.parents[3])}).",
            pytrace=False,
        )
    return found


def test_the_typescript_sdk_client_signs_in_and_works(live_server_url, mcp_url, dana):
    run = subprocess.run(
        [node(), "flow.mjs", mcp_url, "dana", PASSWORD],
        cwd=HERE, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["signedIn"]["code"] and seen["signedIn"]["iss"] == live_server_url
    assert seen["tools"] == [t.name for t in LISTED]
    assert not seen["writtenError"]
    assert "Written from TypeScript" in seen["found"]
    assert seen["refreshed"]
    grant = OAuthGrant.objects.get(client__client_id=seen["clientId"])
    assert (grant.client.name, grant.user) == ("TS Agent", dana)
    assert Entry.objects.get(title="Written from TypeScript").created_by == dana
    assert ApiToken.objects.get(grant=grant).last_used_at is not None
