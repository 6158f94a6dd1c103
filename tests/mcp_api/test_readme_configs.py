"""The client configurations in the README work: each one's URL and header, used by the official
MCP client against a live server, lists Cairn's tools."""

import json
import re
import shlex
from pathlib import Path

import anyio
import pytest

from tests.mcp_api.conftest import mcp_session

README = Path(__file__).resolve().parents[2] / "README.md"
PLACEHOLDER_URL = "http://127.0.0.1:8000/mcp"
PLACEHOLDER_TOKEN = "cairn_…"


def _section() -> str:
    text = README.read_text()
    start = text.index("## Agents and programs: MCP and REST")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def _configs() -> dict[str, tuple[str, dict[str, str]]]:
    """client → (url, headers) as the README tells each client to connect."""
    section = _section()
    found = {}
    command = next(line for line in section.splitlines() if line.startswith("claude mcp add"))
    argv = shlex.split(command)
    header = argv[argv.index("--header") + 1]
    url = next(a for a in argv if a.startswith(("http://", "https://")))
    name, _, value = header.partition(":")
    found["claude-code"] = (url, {name: value.strip()})
    for block in re.findall(r"```json\n(.*?)```", section, re.S):
        server = json.loads(block)["mcpServers"]["cairn"]
        if "httpUrl" in server:
            found["gemini-cli"] = (server["httpUrl"], server["headers"])
        elif "url" in server:
            found["cursor"] = (server["url"], server["headers"])
        else:
            args = server["args"]
            url = args[args.index("mcp-remote") + 1]
            raw = args[args.index("--header") + 1]
            for key, val in server["env"].items():
                raw = raw.replace("${" + key + "}", val)
            name, _, value = raw.partition(":")
            found["claude-desktop"] = (url, {name: value.strip()})
    return found


def test_the_readme_documents_four_clients():
    configs = _configs()
    assert set(configs) == {"claude-code", "cursor", "claude-desktop", "gemini-cli"}
    for url, headers in configs.values():
        assert url == PLACEHOLDER_URL
        assert headers == {"Authorization": f"Bearer {PLACEHOLDER_TOKEN}"}


@pytest.mark.parametrize("client", ["claude-code", "cursor", "claude-desktop", "gemini-cli"])
def test_each_config_connects(client, mcp_url, token):
    url, headers = _configs()[client]
    url = url.replace(PLACEHOLDER_URL, mcp_url)
    headers = {k: v.replace(PLACEHOLDER_TOKEN, token) for k, v in headers.items()}

    async def go():
        async with mcp_session(url, None, headers=headers) as session:
            return await session.list_tools()

    assert "search" in {t.name for t in anyio.run(go).tools}
