"""The one-line check the README and troubleshooting give a newcomer ("does my token reach
Cairn?") works as written: its curl command, sent to a live server with a real token, answers
whoami's text with the version."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import httpx
import pytest

from ops.version import VERSION

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["README.md", "docs/troubleshooting.md"]


def _curl(page: str) -> list[str]:
    """The page's `curl … /mcp` command, its continued lines joined, as argv."""
    text = ROOT.joinpath(page).read_text()
    block = re.search(r"^curl -s http://127\.0\.0\.1:8000/mcp .*?(?<!\\)\n", text, re.M | re.S)
    assert block, f"{page} gives no curl check of /mcp"
    return shlex.split(block.group(0).replace("\\\n", " "))


@pytest.mark.parametrize("page", PAGES)
def test_the_curl_check_answers_who_you_are_and_the_version(page, mcp_url, token):
    argv = _curl(page)
    headers = dict(argv[i + 1].split(": ", 1) for i, arg in enumerate(argv) if arg == "-H")
    headers["Authorization"] = headers["Authorization"].replace("cairn_…", token)
    body = json.loads(argv[argv.index("-d") + 1])
    url = next(a for a in argv if a.startswith("http")).replace(
        "http://127.0.0.1:8000/mcp", mcp_url
    )
    response = httpx.post(url, headers=headers, json=body, timeout=30)
    assert response.status_code == 200, response.text
    text = response.json()["result"]["content"][0]["text"]
    assert text.startswith("You are owner, writing as agent:pytest (token ")
    assert f"This is Cairn {VERSION}." in text
