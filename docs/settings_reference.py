"""The settings reference page, read from the settings modules' source: each setting with its
default as written and the comment above it (docs/generate.py writes the page)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETTINGS_DIR = ROOT / "memory_site" / "settings"
REGENERATE = "make docs-reference"
HEADER = "<!-- Generated from the code by `{cmd}` (docs/generate.py): do not edit by hand. -->\n\n"


def cell(text: object) -> str:
    """Text fit for one Markdown table cell: a `<` outside code is written as an entity, so a
    word like <style> is shown, not taken for HTML (which would swallow the rest of the page)."""
    parts = re.split(r"(`[^`]*`)", " ".join(str(text).split()))
    return "".join(p if p.startswith("`") else p.replace("<", "&lt;") for p in parts).replace(
        "|", "\\|"
    )


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
        "more. Each variable's line can be linked to by its name in lower case: "
        "`settings.md#cairn_embed_batch`.\n\n",
        "Read outside these modules: `CAIRN_VAR_DIR` (where embedded data lives, `./var`), the "
        "numbered `CAIRN_OIDC_<n>_*` provider variables ([single sign-on](../operators/sso.md)), "
        "and for the test suite `CAIRN_CHROMIUM`, `CAIRN_REDIS_SERVER`, `CAIRN_TEST_VAR_DIR`, "
        "`CAIRN_UPDATE_SCREENSHOTS`, `CAIRN_UPDATE_SNAPSHOTS`.\n",
    ]
    module = None
    anchored: set[str] = set()
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
        # An anchor per variable (or setting) the guides can link to: settings.md#cairn_embed_batch.
        ids = [n.lower() for n, _ in row["reads"]] or [n.lower() for n in row["settings"]]
        marks = "".join(f'<span id="{i}"></span>' for i in ids if i not in anchored)
        anchored.update(ids)
        out.append(f"| {marks}{names} | {env} | {default} | {cell(row['description']) or '—'} |\n")
    return "".join(out)


# --- Management commands: their --help --------------------------------------------------------
