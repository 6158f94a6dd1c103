"""mcp_api's import direction: app → tools → render → hints, auth, connections and
protected_resource (MCP authorization's metadata and 401 challenge) apart; in
tools/, each group of tools → registry → arguments.

Checked on the source (ast) like tests/architecture/, so a circle or a surface-side
query fails the build instead of working by accident.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "mcp_api"
# A group of tools: its argument model and handler, the answers, the registry.
GROUP = {"render", "tools.arguments", "tools.registry"}
# Which mcp_api modules each module may import; nothing imports app (asgi.py mounts it).
ALLOWED = {
    "app": {"auth", "protected_resource", "render", "resources", "tools"},
    "resources": {"auth", "connections", "tools"},
    "tools": {"tools.registry", "tools.listings", "tools.projects", "tools.reads",
              "tools.note_types", "tools.search", "tools.writes"},
    "tools.registry": {"auth", "connections", "render", "tools.arguments"},
    "tools.arguments": set(),
    "tools.listings": GROUP,
    "tools.projects": GROUP,
    "tools.reads": GROUP | {"history_text"},
    "tools.search": GROUP,
    "tools.writes": GROUP,
    "tools.note_types": GROUP | {"note_type_text"},
    "render": {"hints", "note_type_text", "write_text", "profile_text", "entry_meta", "graph_text",
               "search_text"},
    "history_text": {"render"},
    "search_text": set(),
    "note_type_text": set(),
    "entry_meta": set(),
    "write_text": set(),
    "graph_text": set(),
    "profile_text": set(),
    "hints": set(),
    "auth": {"connections", "hints", "protected_resource"},
    "protected_resource": set(),
    "connections": set(),
    "apps": set(),
    "__init__": set(),
}  # fmt: skip
MODULES = sorted(PACKAGE.rglob("*.py"))


def _name(path: Path) -> str:
    """`tools.registry` for mcp_api/tools/registry.py, `tools` for its __init__.py."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts)


def _imports(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            if node.module in ("mcp_api", "mcp_api.tools"):  # `from mcp_api import render`
                where = PACKAGE.parent / node.module.replace(".", "/")
                names.update(
                    f"{node.module}.{alias.name}"
                    for alias in node.names
                    if (where / f"{alias.name}.py").exists()
                )
    return names


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def test_every_module_is_placed():
    assert {_name(p) for p in MODULES} == set(ALLOWED)


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_imports_run_one_way(path):
    inner = {m.removeprefix("mcp_api.") for m in _imports(_tree(path)) if m.startswith("mcp_api.")}
    inner -= {_name(path)}  # a package naming its own modules
    assert inner <= ALLOWED[_name(path)]


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_imports_are_at_module_level(path):
    tree = _tree(path)
    top = {id(node) for node in tree.body}
    local = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in top
    ]
    assert local == [], "a function-local import hides a dependency (or a circle)"


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_the_surface_builds_no_queries(path):
    assert not {m for m in _imports(_tree(path)) if m.startswith("django.db.models")}, (
        "counts and filters belong in knowledge/selectors/"
    )
