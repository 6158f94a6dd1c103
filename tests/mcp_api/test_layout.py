"""mcp_api's import direction: app → tools → handlers → render → hints, auth and connections apart.

Checked on the source (ast) like tests/test_architecture.py, so a circle or a surface-side
query fails the build instead of working by accident.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "mcp_api"
# Which mcp_api modules each module may import; nothing imports app (asgi.py mounts it).
ALLOWED = {
    "app": {"auth", "render", "tools", "schemas", "resources"},
    "resources": {"auth", "connections", "handlers"},
    "tools": {"auth", "connections", "handlers"},
    "handlers": {"render"},
    "render": {"hints", "schema_text", "write_text", "profile_text"},
    # the schema tools: tool functions, handlers and answers of one small feature
    "schemas": {"auth", "connections", "handlers", "render", "schema_text", "tools"},
    "schema_text": set(),
    "write_text": set(),
    "profile_text": set(),
    "hints": set(),
    "auth": {"connections", "hints"},
    "connections": set(),
    "apps": set(),
    "__init__": set(),
}
MODULES = sorted(PACKAGE.glob("*.py"))


def _imports(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            if node.module == "mcp_api":
                names.update(f"mcp_api.{alias.name}" for alias in node.names)
    return names


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def test_every_module_is_placed():
    assert {p.stem for p in MODULES} == set(ALLOWED)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_imports_run_one_way(path):
    inner = {m.removeprefix("mcp_api.") for m in _imports(_tree(path)) if m.startswith("mcp_api.")}
    assert inner <= ALLOWED[path.stem]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_imports_are_at_module_level(path):
    tree = _tree(path)
    top = {id(node) for node in tree.body}
    local = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in top
    ]
    assert local == [], "a function-local import hides a dependency (or a circle)"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_the_surface_builds_no_queries(path):
    assert not {m for m in _imports(_tree(path)) if m.startswith("django.db.models")}, (
        "counts and filters belong in knowledge/selectors/"
    )
