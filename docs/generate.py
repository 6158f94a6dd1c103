"""Write the reference pages under docs/reference/ from the code itself, so they cannot drift:

- mcp.md: the MCP server's own tools/list, prompts/list and resource templates (mcp_api.app.mcp);
- rest.md: the REST API's OpenAPI schema (api.site.api.get_openapi_schema());
- settings.md: every CAIRN_* setting and every environment variable the settings modules read
  (memory_site/settings/*.py, read as source: the default as written, the comment above it);
- commands.md: the --help of every management command of the knowledge, history, memory_site
  and ops apps.

Run it with `make docs-reference` (or `.venv/bin/python docs/generate.py`). tests/test_docs.py
compares the committed pages with what this produces and fails on any difference.
"""

from __future__ import annotations

import ast
import asyncio
import concurrent.futures
import io
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "reference"
SETTINGS_DIR = ROOT / "memory_site" / "settings"
COMMAND_APPS = ("knowledge", "history", "memory_site", "ops")
REGENERATE = "make docs-reference"
HEADER = "<!-- Generated from the code by `{cmd}` (docs/generate.py): do not edit by hand. -->\n\n"
# argparse wraps --help to the terminal's width: fix it so every machine writes the same text.
HELP_COLUMNS = "100"


def cell(text: object) -> str:
    """Text fit for one Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def code(text: object) -> str:
    text = " ".join(str(text).split())
    return f"`` {text} ``" if "`" in text else f"`{text}`"


# --- Settings: read from the settings modules' source --------------------------------------------

_ENV_METHODS = {"bool", "int", "float", "list", "str", "json", "dict", "db", "url", "path", "tuple"}


def _env_reads(node: ast.AST) -> list[tuple[str, str | None]]:
    """(variable, default as written) for every env("NAME", default=…) call inside node."""
    found = []
    for call in ast.walk(node):
        if not isinstance(call, ast.Call) or not call.args:
            continue
        func = call.func
        is_env = (isinstance(func, ast.Name) and func.id == "env") or (
            isinstance(func, ast.Attribute)
            and func.attr in _ENV_METHODS
            and isinstance(func.value, ast.Name)
            and func.value.id == "env"
        )
        first = call.args[0]
        if is_env and isinstance(first, ast.Constant) and isinstance(first.value, str):
            default = next(
                (ast.unparse(k.value) for k in call.keywords if k.arg == "default"), None
            )
            found.append((first.value, default))
    return found


def _assigned(node: ast.AST) -> list[str]:
    names = []
    for sub in ast.walk(node):
        targets = sub.targets if isinstance(sub, ast.Assign) else []
        if isinstance(sub, ast.AnnAssign):
            targets = [sub.target]
        names += [t.id for t in targets if isinstance(t, ast.Name)]
    return names


def _comment_above(lines: list[str], lineno: int) -> list[str]:
    """The block of comment lines directly above line `lineno` (1-based)."""
    block, i = [], lineno - 2
    while i >= 0 and lines[i].lstrip().startswith("#"):
        block.insert(0, lines[i].strip().lstrip("#").strip())
        i -= 1
    text = [line for line in block if not line.startswith("---")]
    # A section ruler (`# --- Database: … ---`) speaks for the line below when nothing else does.
    return text or [line.strip("- ") for line in block]


def settings_rows() -> list[dict]:
    """One row per statement of a settings module that assigns a CAIRN_* setting or reads an
    environment variable, in module order."""
    rows = []
    for path in sorted(SETTINGS_DIR.glob("*.py")):
        if path.name == "__init__.py":
            continue
        source = path.read_text()
        lines = source.splitlines()
        comments = {}  # line number → comment block text, for the "mentions the name" fallback
        previous = None  # (the row of the statement just above, the line it ends on)
        for stmt in ast.parse(source).body:
            names = [n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id.isupper()]
            names = list(dict.fromkeys(_assigned(stmt) + names))
            reads = list({name: d for name, d in reversed(_env_reads(stmt))}.items())[::-1]
            own = " ".join(_comment_above(lines, stmt.lineno))
            if own:
                comments[stmt.lineno] = own
            cairn = [n for n in _assigned(stmt) if n.startswith("CAIRN_")]
            if not cairn and not reads:
                previous = None
                continue
            mentioned = next(
                (
                    text
                    for _, text in sorted(comments.items(), reverse=True)
                    if any(re.search(rf"\b{n}\b", text) for n in cairn)
                ),
                "",
            )
            # A comment heads the statements right below it, up to a blank line or the next
            # comment (the modules' layout): a line with none takes its group's.
            adjacent = previous and previous[1] == stmt.lineno - 1 and previous[0]["description"]
            description = own or mentioned or adjacent or ""
            value = getattr(stmt, "value", None)
            row = {
                "module": path.name,
                "settings": cairn or names[:1],
                "reads": reads,
                "value": ast.unparse(value) if value is not None and not reads else None,
                "description": description,
            }
            rows.append(row)
            previous = (row, stmt.end_lineno)
    return rows


def settings_page() -> str:
    out = [
        HEADER.format(cmd=REGENERATE),
        "# Settings\n\n",
        "Every `CAIRN_*` setting of `memory_site/settings/` and every environment variable the "
        "settings modules read, with the default as the code writes it and the comment above it "
        "in the module. Set a variable in the environment or in a `.env` file at the top of the "
        "checkout (`.env.example` lists them). A dash means the module has no comment for it yet; "
        "the guides ([operators](../operators/index.md), [search](../operators/search.md)) say "
        "more.\n\n",
        "Read outside these modules: `CAIRN_VAR_DIR` (where embedded data lives, `./var`), the "
        "numbered `CAIRN_OIDC_<n>_*` provider variables ([single sign-on](../operators/sso.md)), "
        "and for the test suite `CAIRN_CHROMIUM`, `CAIRN_REDIS_SERVER`, `CAIRN_TEST_VAR_DIR`, "
        "`CAIRN_UPDATE_SCREENSHOTS`, `CAIRN_UPDATE_SNAPSHOTS`.\n",
    ]
    module = None
    for row in settings_rows():
        if row["module"] != module:
            module = row["module"]
            doc = ast.get_docstring(ast.parse((SETTINGS_DIR / module).read_text())) or ""
            out += [f"\n## `{module}`\n\n", cell(doc) + "\n\n"]
            out += ["| setting | environment variable | default | what it is |\n"]
            out += ["|---|---|---|---|\n"]
        env = "<br>".join(code(name) for name, _ in row["reads"]) or "not from the environment"
        if row["reads"]:
            default = "<br>".join(code(d) if d is not None else "(none)" for _, d in row["reads"])
        else:
            default = code(row["value"])
        names = ", ".join(code(n) for n in row["settings"])
        out.append(f"| {names} | {env} | {default} | {cell(row['description']) or '—'} |\n")
    return "".join(out)


# --- Management commands: their --help --------------------------------------------------------


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


def mcp_page() -> str:
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
        tools, prompts, templates = pool.submit(asyncio.run, lists()).result()
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


PAGES = {
    "mcp.md": mcp_page,
    "rest.md": rest_page,
    "settings.md": settings_page,
    "commands.md": commands_page,
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
        path = OUT / name
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
