"""The dependency rules, checked on the source (ast), so a shortcut fails the build."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WRITE_METHODS = {"save", "delete", "create", "update", "bulk_create", "bulk_update",
                 "get_or_create", "update_or_create", "add", "remove", "clear", "set"}  # fmt: skip
SURFACE_PREFIXES = ("knowledge.api", "knowledge.admin", "mcp_api", "memory_site.api")


def _modules(*patterns: str) -> list[Path]:
    found = {p for pattern in patterns for p in ROOT.glob(pattern)}
    return sorted(p for p in found if "migrations" not in p.parts)


def _write_calls(path: Path, root: Path = ROOT) -> list[str]:
    """ORM write calls: `x.save()`, `Model.objects.create()`, `qs.update()`, m2m `.add()`, …"""
    hits = []
    tree = ast.parse(path.read_text(), str(path))
    decorators = {
        id(d) for node in ast.walk(tree) for d in getattr(node, "decorator_list", [])
    }  # `@router.delete(...)` declares a route, it deletes nothing
    for node in ast.walk(tree):
        if id(node) in decorators:
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name in WRITE_METHODS and not _is_harmless(node.func):
                hits.append(f"{path.relative_to(root)}:{node.lineno} .{name}()")
        if isinstance(node, ast.Attribute) and node.attr == "atomic":
            hits.append(f"{path.relative_to(root)}:{node.lineno} transaction.atomic")
    return hits


def _is_harmless(func: ast.Attribute) -> bool:
    # dict/set/list helpers and messages that share a method name with the ORM
    target = func.value
    if isinstance(target, ast.Name) and target.id.isupper():
        return True  # module constants such as a ContextVar: `CLIENT_HINT.set(...)`
    return isinstance(target, ast.Name) and target.id in {
        "counts", "seen", "messages", "parser", "kwargs", "data", "headers", "result",
        "cleanups", "os", "signal", "stop", "exit_stack", "stack", "tg",
    }  # fmt: skip


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


SURFACES = _modules(
    "mcp_api/**/*.py", "knowledge/api*.py", "knowledge/api/**/*.py", "knowledge/admin/**/*.py",
    "memory_site/api.py",
)  # fmt: skip
READ_SIDE = _modules("knowledge/selectors.py", "knowledge/selectors/**/*.py")
CORE = _modules(
    "knowledge/services/**/*.py", "knowledge/selectors.py", "knowledge/search*.py",
    "knowledge/search/**/*.py", "history/services.py", "history/selectors.py",
)  # fmt: skip


def test_the_checks_see_the_code():
    assert ROOT / "knowledge" / "admin" / "entries.py" in SURFACES
    assert ROOT / "mcp_api" / "tools.py" in SURFACES
    assert ROOT / "knowledge" / "api.py" in SURFACES
    assert READ_SIDE and CORE


@pytest.mark.parametrize("path", SURFACES, ids=lambda p: str(p.relative_to(ROOT)))
def test_surfaces_never_write_the_orm_directly(path):
    assert _write_calls(path) == [], "surfaces must call knowledge.services to write"


@pytest.mark.parametrize("path", READ_SIDE, ids=lambda p: str(p.relative_to(ROOT)))
def test_selectors_never_write(path):
    assert _write_calls(path) == []


@pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(ROOT)))
def test_services_and_selectors_never_import_a_surface(path):
    bad = {m for m in _imports(path) if m.startswith(SURFACE_PREFIXES) or m in {"ninja", "mcp"}}
    assert bad == set()


def test_the_write_detector_catches_a_direct_write(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def view(entry):\n"
        "    entry.save()\n"
        "    Entry.objects.create(title='x')\n"
        "    Entry.objects.filter(pk=1).update(title='y')\n"
        "@router.delete('/x')\n"
        "def route(): pass\n"
    )
    assert len(_write_calls(sample, root=tmp_path)) == 3


SITE_PACKAGES = ("history", "mcp_api", "memory_site")
KNOWLEDGE_CORE = [
    p
    for p in _modules("knowledge/**/*.py")
    if p.relative_to(ROOT).parts[1] not in {"api.py", "api_auth.py", "api", "admin"}
]


@pytest.mark.parametrize("path", KNOWLEDGE_CORE, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_knowledge_core_never_imports_history_mcp_or_the_site(path):
    bad = {m for m in _imports(path) if m.split(".")[0] in SITE_PACKAGES}
    assert bad == set(), "the knowledge core stands alone; the site and history build on it"
