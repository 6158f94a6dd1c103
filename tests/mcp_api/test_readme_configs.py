"""The client configurations in the docs work (docs/agents/index.md): each one's URL and header,
used by the official MCP client against a live server, lists Cairn's tools."""

import json
import re
import shlex
import tomllib
from pathlib import Path

import anyio
import pytest

from tests.mcp_api.conftest import mcp_session

PAGE = Path(__file__).resolve().parents[2] / "docs" / "agents" / "index.md"
PLACEHOLDER_URL = "http://127.0.0.1:8000/mcp"
PLACEHOLDER_TOKEN = "cairn_…"


def _section() -> str:
    text = PAGE.read_text()
    start = text.index("## Client configurations")
    end = text.index("\n## ", start + 1) if "\n## " in text[start + 1 :] else len(text)
    return text[start:end]


def _configs() -> dict[str, tuple[str, dict[str, str]]]:
    """client → (url, headers) as the docs tell each client to connect."""
    section = _section()
    found = {}
    command = next(line for line in section.splitlines() if line.startswith("claude mcp add"))
    argv = shlex.split(command)
    header = argv[argv.index("--header") + 1]
    url = next(a for a in argv if a.startswith(("http://", "https://")))
    name, _, value = header.partition(":")
    found["claude-code"] = (url, {name: value.strip()})
    for block in re.findall(r"```toml\n(.*?)```", section, re.S):
        server = tomllib.loads(block)["mcp_servers"]["cairn"]
        # Codex sends `Authorization: Bearer <the variable's value>`; the comment says what to set.
        value = re.search(r"export " + server["bearer_token_env_var"] + r"=(\S+)", block).group(1)
        found["codex"] = (server["url"], {"Authorization": f"Bearer {value}"})
    for block in re.findall(r"```json\n(.*?)```", section, re.S):
        config = json.loads(block)
        if "servers" in config:  # VS Code
            server = config["servers"]["cairn"]
            assert server["type"] == "http"
            found["vscode"] = (server["url"], server["headers"])
            continue
        server = config["mcpServers"]["cairn"]
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


CLIENTS = ["claude-code", "cursor", "claude-desktop", "vscode", "codex", "gemini-cli"]


def test_the_docs_document_six_clients():
    configs = _configs()
    assert set(configs) == set(CLIENTS)
    for url, headers in configs.values():
        assert url == PLACEHOLDER_URL
        assert headers == {"Authorization": f"Bearer {PLACEHOLDER_TOKEN}"}


@pytest.mark.parametrize("client", CLIENTS)
def test_each_config_connects(client, mcp_url, token):
    url, headers = _configs()[client]
    url = url.replace(PLACEHOLDER_URL, mcp_url)
    headers = {k: v.replace(PLACEHOLDER_TOKEN, token) for k, v in headers.items()}

    async def go():
        async with mcp_session(url, None, headers=headers) as session:
            return await session.list_tools()

    assert "search" in {t.name for t in anyio.run(go).tools}
