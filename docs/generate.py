"""Write the reference pages under docs/reference/ from the code itself, so they cannot drift:

- mcp.md: the MCP server's own tools/list, prompts/list and resource templates (mcp_api.app.mcp);
- rest.md: the REST API's OpenAPI schema (api.site.api.get_openapi_schema());
- settings.md: every CAIRN_* setting and every environment variable the settings modules read
  (memory_site/settings/*.py, read as source: the default as written, the comment above it);
- commands.md: the --help of every management command of the knowledge, history, memory_site
  and ops apps;
- ../llms.txt: the text for agents themselves (llmstxt.org), at the site's root: what Cairn is,
  how to connect, the server's instructions and every tool with its arguments, from the same
  MCP server as mcp.md.

Run it with `make docs-reference` (or `.venv/bin/python docs/generate.py`). tests/test_docs.py
compares the committed pages with what this produces and fails on any difference.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import io
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs"))  # settings_reference.py beside this file
DOCS = ROOT / "docs"
OUT = DOCS / "reference"
COMMAND_APPS = ("knowledge", "history", "memory_site", "ops")
REGENERATE = "make docs-reference"
HEADER = "<!-- Generated from the code by `{cmd}` (docs/generate.py): do not edit by hand. -->\n\n"
# argparse wraps --help to the terminal's width: fix it so every machine writes the same text.
HELP_COLUMNS = "100"


from settings_reference import cell, code, settings_page, settings_rows  # noqa: E402


def commands_page() -> str:
    from django.core.management import get_commands, load_command_class

    os.environ["COLUMNS"] = HELP_COLUMNS
    out = [
        HEADER.format(cmd=REGENERATE),
        "# Management commands\n\n",
        "Every command of Cairn's apps, as `--help` prints it. Run them as "
        "`.venv/bin/python manage.py <command> …` from the checkout (in Docker: "
        "`docker compose exec web python manage.py …`). Each also takes Django's common options "
        "(`--verbosity`, `--settings`, `--pythonpath`, `--traceback`, `--no-color`, "
        "`--force-color`, and on most `--skip-checks`).\n",
    ]
    by_app: dict[str, list[str]] = {}
    for name, app in get_commands().items():
        if app in COMMAND_APPS:
            by_app.setdefault(app, []).append(name)
    for app in COMMAND_APPS:
        if not by_app.get(app):
            continue
        out.append(f"\n## {app}\n")
        for name in sorted(by_app[app]):
            command = load_command_class(app, name)
            parser = command.create_parser("manage.py", name)
            text = parser.format_help().rstrip()
            first = (command.help or "").strip().split("\n")[0]
            out += [f"\n### {name}\n\n", f"{cell(first)}\n\n" if first else ""]
            out += ["```text\n", text, "\n```\n"]
    return "".join(out)


# --- MCP: the live server's lists --------------------------------------------------------------


def _schema_type(schema: dict) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " or ".join(_schema_type(s) for s in schema["anyOf"])
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"list of {_schema_type(schema.get('items', {}))}"
    return kind if isinstance(kind, str) else " or ".join(kind)


def _limits(schema: dict) -> str:
    parts = []
    for key, label in (("minimum", "≥"), ("maximum", "≤"), ("maxLength", "≤ chars")):
        if key in schema:
            parts.append(f"{label} {schema[key]}")
    return ", ".join(parts)


def _arguments_table(schema: dict) -> list[str]:
    props = schema.get("properties", {})
    if not props:
        return ["No arguments.\n"]
    required = set(schema.get("required", []))
    out = ["| argument | type | required | default | description |\n", "|---|---|---|---|---|\n"]
    for name, prop in props.items():
        default = code(json.dumps(prop["default"])) if "default" in prop else ""
        kind = _schema_type(prop)
        if limits := _limits(prop):
            kind += f" ({limits})"
        desc = cell(prop.get("description", ""))
        out.append(
            f"| `{name}` | {cell(kind)} | {'yes' if name in required else ''} | {default} "
            f"| {desc} |\n"
        )
    return out


def _mcp_lists():
    """The server's tools, prompts and resource templates, as tools/list and the rest say."""
    from mcp_api.app import mcp

    async def lists():
        return (
            await mcp.list_tools(),
            await mcp.list_prompts(),
            await mcp.list_resource_templates(),
        )

    # In a thread of its own: the caller may already run an event loop (a test process where
    # Playwright's sync API left one running), and asyncio.run refuses to nest.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, lists()).result()


def mcp_page() -> str:
    from mcp_api.app import mcp

    tools, prompts, templates = _mcp_lists()
    out = [
        HEADER.format(cmd=REGENERATE),
        "# MCP tools, resources and prompts\n\n",
        "What Cairn's MCP server at `/mcp` lists, in its own order and words (the server "
        "object `mcp_api.app.mcp`). How to connect: [Connect an agent](../agents/index.md).\n\n",
        "## Instructions\n\nThe server's instructions, sent to every agent when it connects:\n\n",
        "```text\n",
        mcp.instructions or "",
        "\n```\n\n## Tools\n\n",
        "| tool | what it does | hints |\n|---|---|---|\n",
    ]
    for tool in tools:
        hints = tool.annotations.model_dump(exclude_none=True) if tool.annotations else {}
        shown = ", ".join(k.removesuffix("_hint").replace("_", "-") for k, v in hints.items() if v)
        first = cell((tool.description or "").split("\n")[0])
        out.append(f"| [`{tool.name}`](#{tool.name}) | {first} | {shown} |\n")
    for tool in tools:
        schema = tool.input_schema
        out += [f"\n### {tool.name}\n\n", (tool.description or "").strip() + "\n\n"]
        out += _arguments_table(schema)
        for name, sub in schema.get("$defs", {}).items():
            out += [f"\n`{name}`:\n\n", *_arguments_table(sub)]
    out.append("\n## Resources\n\n")
    out.append(
        "`resources/list` pages through every entry the caller can see; "
        "`resources/read` returns one as Markdown. Templates:\n\n"
    )
    out += ["| name | URI template | type | description |\n", "|---|---|---|---|\n"]
    for t in templates:
        out.append(
            f"| {t.name} | `{t.uri_template}` | {t.mime_type} | {cell(t.description or '')} |\n"
        )
    out += ["\n## Prompts\n\n", "| prompt | arguments | description |\n", "|---|---|---|\n"]
    for p in prompts:
        args = ", ".join(
            f"`{a.name}`" + ("" if a.required else " (optional)") for a in p.arguments or []
        )
        out.append(f"| `{p.name}` | {args} | {cell(p.description or '')} |\n")
    return "".join(out)


# --- REST: the OpenAPI schema -----------------------------------------------------------------


def _ref_name(schema: dict) -> str:
    if not schema:
        return ""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if schema.get("type") == "array":
        return f"list of {_ref_name(schema.get('items', {}))}"
    return _schema_type(schema)


def rest_page() -> str:
    from api.site import api

    schema = api.get_openapi_schema()
    out = [
        HEADER.format(cmd=REGENERATE),
        "# REST API\n\n",
        f"{cell(schema['info'].get('title', ''))} {schema['info'].get('version', '')}: every "
        "operation of the OpenAPI schema Cairn serves at `/api/openapi.json` (interactive at "
        "`/api/docs`). Send `Authorization: Bearer cairn_…` (a [token](../agents/index.md#tokens)) "
        "or use a signed-in browser session with the `X-CSRFToken` header on writes. Errors are "
        "`application/problem+json` ([REST guide](../agents/rest.md)).\n",
    ]
    by_tag: dict[str, list[tuple[str, str, dict]]] = {}
    for path, methods in schema["paths"].items():
        for method, op in methods.items():
            tag = (op.get("tags") or ["other"])[0]
            by_tag.setdefault(tag, []).append((path, method, op))
    for tag in sorted(by_tag):
        out.append(f"\n## {tag}\n")
        for path, method, op in by_tag[tag]:
            out += [f"\n### `{method.upper()} {path}`\n\n"]
            if op.get("summary"):
                out.append(f"**{cell(op['summary'])}**\n\n")
            if op.get("description"):
                out.append(op["description"].strip() + "\n\n")
            params = op.get("parameters", [])
            if params:
                out += ["| parameter | in | type | required | description |\n"]
                out += ["|---|---|---|---|---|\n"]
                for p in params:
                    kind = _ref_name(p.get("schema", {}))
                    req = "yes" if p.get("required") else ""
                    desc = cell(p.get("description", p.get("schema", {}).get("description", "")))
                    out.append(f"| `{p['name']}` | {p['in']} | {cell(kind)} | {req} | {desc} |\n")
                out.append("\n")
            body = op.get("requestBody", {}).get("content", {})
            for media, content in body.items():
                out.append(f"Body ({media}): {code(_ref_name(content.get('schema', {})))}\n\n")
            answers = []
            for status, resp in op.get("responses", {}).items():
                content = resp.get("content", {})
                shape = next((_ref_name(c.get("schema", {})) for c in content.values()), "")
                answers.append(f"{status}" + (f" {code(shape)}" if shape else ""))
            out.append("Answers: " + ", ".join(answers) + "\n")
    out.append("\n## Schemas\n")
    for name, sub in sorted(schema.get("components", {}).get("schemas", {}).items()):
        out.append(f"\n### {name}\n\n")
        if sub.get("description"):
            out.append(cell(sub["description"]) + "\n\n")
        props = sub.get("properties", {})
        required = set(sub.get("required", []))
        if not props:
            out.append(f"{code(_schema_type(sub))}\n")
            continue
        out += ["| field | type | required | description |\n", "|---|---|---|---|\n"]
        for field, prop in props.items():
            req = "yes" if field in required else ""
            desc = cell(prop.get("description", ""))
            out.append(f"| `{field}` | {cell(_ref_name(prop))} | {req} | {desc} |\n")
    return "".join(out)


# --- llms.txt: for agents themselves --------------------------------------------------------


def _argument_line(name: str, prop: dict, required: set[str]) -> str:
    kind = _schema_type(prop)
    if limits := _limits(prop):
        kind += f", {limits}"
    words = f"{kind}, required" if name in required else kind
    desc = cell(prop.get("description", ""))
    return f"`{name}` ({words})" + (f": {desc}" if desc else "")


def llms_page() -> str:
    from mcp_api.app import mcp

    tools, prompts, templates = _mcp_lists()
    out = [
        "# Cairn\n\n",
        "> A self-hosted, team-shared, versioned memory for AI agents and the people who work "
        "with them. Agents and people read and write the same structured Markdown entries "
        "(projects, nested subtopics, entries with kind, tags, status and sources), searchable "
        "by words and meaning, with every save kept as a revision.\n\n",
        "Generated from Cairn's MCP server by `make docs-reference` (docs/generate.py). Connect "
        "over MCP (Streamable HTTP) at `http://<host>:8000/mcp` with the header "
        "`Authorization: Bearer cairn_…` (a personal token: `manage.py create_token <user>`, or "
        "the admin's API tokens). The tool `whoami` checks the connection: who you are, your "
        "projects and role in each, the version. Programs use the REST API at `/api/v1` with "
        "the same token (OpenAPI at `/api/openapi.json`).\n\n",
        "## Instructions\n\nWhat the server tells every agent when it connects:\n\n",
        (mcp.instructions or "").strip() + "\n\n",
        "## Tools\n\n",
    ]
    for tool in tools:
        schema = tool.input_schema
        required = set(schema.get("required", []))
        args = [_argument_line(n, p, required) for n, p in schema.get("properties", {}).items()]
        desc = cell(tool.description or "")
        listed = f" Arguments: {'; '.join(args).rstrip('.')}." if args else ""
        out.append(f"- `{tool.name}`: {desc}{listed}\n")
    out.append("\n## Resources and prompts\n\n")
    for t in templates:
        out.append(f"- resource `{t.uri_template}` ({t.mime_type}): {cell(t.description or '')}\n")
    for p in prompts:
        names = ", ".join(a.name for a in p.arguments or [])
        out.append(f"- prompt `{p.name}({names})`: {cell(p.description or '')}\n")
    out += [
        "\n## Docs\n\n",
        "- [Connect an agent](agents/index.html): a token, then each client's configuration\n",
        "- [MCP reference](reference/mcp.html): every tool, argument, resource and prompt\n",
        "- [Your first session](first-session.html): write, read, correct, diff, revert\n",
        "- [Troubleshooting](troubleshooting.html): each error, its cause and its fix\n",
        "- [REST reference](reference/rest.html): every endpoint and schema\n",
    ]
    return "".join(out)


# Each page by its path under docs/.
PAGES = {
    "reference/mcp.md": mcp_page,
    "reference/rest.md": rest_page,
    "reference/settings.md": settings_page,
    "reference/commands.md": commands_page,
    "llms.txt": llms_page,
}


def setup_django() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")
    import django

    django.setup()


def generate() -> dict[str, str]:
    """page file name → its text, from the code as it is now."""
    return {name: build() for name, build in PAGES.items()}


def main() -> None:
    setup_django()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in generate().items():
        path = DOCS / name
        old = path.read_text() if path.exists() else None
        if old != text:
            path.write_text(text)
        print(f"{'wrote' if old != text else 'unchanged'} {path.relative_to(ROOT)}")
    undocumented = [r["settings"][0] for r in settings_rows() if not r["description"]]
    if undocumented:
        out = io.StringIO()
        print("Settings with no comment above them (their line says '—'):", file=out)
        print("  " + ", ".join(undocumented), file=out)
        sys.stderr.write(out.getvalue())


if __name__ == "__main__":
    main()
