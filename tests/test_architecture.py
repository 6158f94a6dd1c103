"""The dependency rules, checked on the source (ast), so a shortcut fails the build.

Each rule names itself in its failure, with the file and line that broke it:

1. surfaces never write the ORM directly, selectors never write;
2. the knowledge core never imports history, mcp_api or memory_site; nothing in the core
   imports a surface;
3. surfaces (admin, REST, MCP, web, commands) import services and selectors, never another
   kind of surface;
4. no module imports another module's `_private` names (a `_private` module is imported only
   from inside its own package);
5. surfaces never build ORM queries (the admin is built on querysets and is exempt);
6. public services are `transaction.atomic(durable=True)`, take `actor` and keyword-only
   arguments, call no other public service, and `knowledge.services` exports each of them;
7. the core's messages name no MCP tool (each surface adds its own next moves);
8. no module outside migrations, tests and bench is over 400 lines, and no two of our modules
   import each other (any import, also inside a function: one put there to dodge a circle is
   still a circle);
9. ops imports no other Cairn app (the site hands it what it needs of the memory at startup);
10. admin and commands (`*/admin.py`, `*/admin/`, `*/management/` of every app) import Cairn code
    only from services and selectors, models, value modules and ops, besides their own package
    and the data command base: no admin imports another app's admin, no command reaches into
    the core's insides (MAY_IMPORT below is the exact list).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WRITE_METHODS = {"save", "delete", "create", "update", "bulk_create", "bulk_update",
                 "get_or_create", "update_or_create", "add", "remove", "clear", "set"}  # fmt: skip
QUERY_METHODS = {"objects", "filter", "exclude", "order_by", "annotate", "aggregate",
                 "values", "values_list", "select_related", "prefetch_related", "raw",
                 "extra", "distinct"}  # fmt: skip
SITE_PACKAGES = ("history", "api", "mcp_api", "memory_site")
OURS = {"knowledge", "history", "api", "mcp_api", "memory_site", "ops", "web", "tests", "bench"}


def _modules(*patterns: str) -> list[Path]:
    found = {p for pattern in patterns for p in ROOT.glob(pattern)}
    return sorted(p for p in found if "migrations" not in p.parts)


def _rel(path: Path, root: Path = ROOT) -> str:
    return str(path.relative_to(root))


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


# --- what the checks read -------------------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    module: str  # the module imported from (absolute)
    names: tuple[str, ...]  # the names taken from it (empty for `import x`)
    line: int


def _imports_of(path: Path, root: Path = ROOT) -> list[Import]:
    found = []
    package = _module_name(path, root)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found += [Import(alias.name, (), node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # relative: resolve against the importing package
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, module] if module else base)
            found.append(Import(module, tuple(a.name for a in node.names), node.lineno))
    return found


def _imports(path: Path) -> set[str]:
    return {i.module for i in _imports_of(path)}


def _write_calls(path: Path, root: Path = ROOT) -> list[str]:
    """ORM write calls: `x.save()`, `Model.objects.create()`, `qs.update()`, m2m `.add()`, …"""
    hits = []
    tree = _tree(path)
    decorators = {
        id(d) for node in ast.walk(tree) for d in getattr(node, "decorator_list", [])
    }  # `@router.delete(...)` declares a route, it deletes nothing
    for node in ast.walk(tree):
        if id(node) in decorators:
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name in WRITE_METHODS and not _is_harmless(node.func):
                hits.append(f"{_rel(path, root)}:{node.lineno} .{name}()")
        if isinstance(node, ast.Attribute) and node.attr == "atomic":
            hits.append(f"{_rel(path, root)}:{node.lineno} transaction.atomic")
    return hits


def _query_calls(path: Path, root: Path = ROOT) -> list[str]:
    """ORM query building: `Model.objects`, `.filter()`, `.order_by()`, `.aggregate()`, …"""
    hits = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Attribute) and node.attr == "objects":
            hits.append(f"{_rel(path, root)}:{node.lineno} .objects")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in QUERY_METHODS - {"objects"}
            and not _is_harmless(node.func)
        ):
            hits.append(f"{_rel(path, root)}:{node.lineno} .{node.func.attr}()")
    for imp in _imports_of(path, root):
        if imp.module.startswith("django.db.models"):
            hits.append(f"{_rel(path, root)}:{imp.line} imports {imp.module}")
    return hits


def _is_harmless(func: ast.Attribute) -> bool:
    # dict/set/list helpers and messages that share a method name with the ORM
    target = func.value
    if isinstance(target, ast.Name) and target.id.isupper():
        return True  # module constants such as a ContextVar: `CLIENT_HINT.set(...)`
    if isinstance(target, ast.Constant | ast.JoinedStr):
        return True  # "…".join / str methods
    return isinstance(target, ast.Name) and target.id in {
        "counts", "seen", "messages", "parser", "kwargs", "data", "headers", "result",
        "cleanups", "os", "signal", "stop", "exit_stack", "stack", "tg", "re", "builtins",
    }  # fmt: skip


# --- which code is which --------------------------------------------------------------------------

SURFACE_KINDS = {
    "mcp": ("mcp_api/**/*.py",),
    "rest": ("api/**/*.py",),
    "admin": ("knowledge/admin/**/*.py", "history/admin.py"),
    "web": ("web/**/*.py",),
    "commands": ("knowledge/management/**/*.py", "history/management/**/*.py",
                 "memory_site/management/**/*.py"),
}  # fmt: skip
SURFACE_MODULES = {  # the import prefixes that name each kind of surface
    "mcp": ("mcp_api",),
    "rest": ("api",),
    "admin": ("knowledge.admin", "history.admin", "django.contrib.admin"),
    "web": ("web",),
    "commands": ("knowledge.management", "history.management", "memory_site.management"),
}
SURFACE_FILES = {kind: _modules(*patterns) for kind, patterns in SURFACE_KINDS.items()}
SURFACES = sorted({p for kind in ("mcp", "rest", "admin", "web") for p in SURFACE_FILES[kind]})
QUERY_FREE = sorted({p for kind in ("mcp", "rest", "web") for p in SURFACE_FILES[kind]})
READ_SIDE = _modules("knowledge/selectors.py", "knowledge/selectors/**/*.py")
CORE = _modules(
    "knowledge/services/**/*.py", "knowledge/selectors.py", "knowledge/selectors/**/*.py",
    "knowledge/search*.py", "knowledge/search/**/*.py", "knowledge/graph/**/*.py",
    "knowledge/models/**/*.py", "knowledge/errors.py", "knowledge/inputs.py", "knowledge/paths.py",
    "knowledge/schemas/**/*.py", "history/selectors.py",
)  # fmt: skip
_NOT_CORE = {"admin", "management"}
KNOWLEDGE_CORE = [p for p in _modules("knowledge/**/*.py") if p.parts[len(ROOT.parts) + 1]
                  not in _NOT_CORE]  # fmt: skip
ALL_CODE = _modules(
    "knowledge/**/*.py", "history/**/*.py", "api/**/*.py", "mcp_api/**/*.py",
    "memory_site/**/*.py", "ops/**/*.py", "web/**/*.py", "bench/**/*.py", "manage.py",
)  # fmt: skip
# background.py queues the work after a commit (a kernel step; benchmarks switch it off).
SERVICE_MODULES = [
    p
    for p in _modules("knowledge/services/*.py")
    if not p.name.startswith("_") and p.name != "background.py"
]
# Public functions of the service modules that are not write services: pure helpers, the token
# check every request makes, and embedding runs that keep the model outside any transaction.
NOT_SERVICES = {"apply_edit", "token_authenticate", "embedding_key", "chunk_hash",
                "needs_embedding", "entries_embed", "entry_embed", "entries_embed_stale",
                "entries_embed_pending",
                "entries_reindex_text", "lexeme_stats_refresh"}  # fmt: skip
MCP_TOOL_CALL = re.compile(
    r"\b(browse|create_project|get|search|upsert|edit|list_open|recent|history|diff|correct|"
    r"verify|delete|check_sources|build_context)\((?!\))"
)


def _kind_of(path: Path) -> str | None:
    return next((kind for kind, files in SURFACE_FILES.items() if path in files), None)


def _ids(p: Path) -> str:
    return _rel(p)


# --- rule 1: writes -------------------------------------------------------------------------------


def test_the_checks_see_the_code():
    assert ROOT / "knowledge" / "admin" / "entries.py" in SURFACES
    assert ROOT / "mcp_api" / "tools.py" in SURFACES
    assert ROOT / "api" / "routers" / "entries.py" in SURFACES
    assert ROOT / "knowledge" / "services" / "entries.py" in SERVICE_MODULES
    assert ROOT / "knowledge" / "models" / "entries.py" in KNOWLEDGE_CORE
    assert ROOT / "knowledge" / "admin" / "entries.py" not in KNOWLEDGE_CORE
    assert READ_SIDE and CORE and SURFACE_FILES["commands"]
    assert ROOT / "ops" / "timing.py" in OPS
    for part in ("knowledge/admin/entries.py", "history/admin.py", "ops/admin.py",
                 "history/management/commands/import.py",
                 "memory_site/management/commands/serve.py"):  # fmt: skip
        assert ROOT / part in ADMIN_AND_COMMANDS


@pytest.mark.parametrize("path", SURFACES, ids=_ids)
def test_surfaces_never_write_the_orm_directly(path):
    assert _write_calls(path) == [], "rule 1: surfaces call knowledge.services to write"


@pytest.mark.parametrize("path", READ_SIDE, ids=_ids)
def test_selectors_never_write(path):
    assert _write_calls(path) == [], "rule 1: selectors only read"


# --- rule 2: the core stands alone ----------------------------------------------------------------


@pytest.mark.parametrize("path", KNOWLEDGE_CORE, ids=_ids)
def test_the_knowledge_core_never_imports_history_mcp_or_the_site(path):
    bad = [
        f"{_rel(path)}:{i.line} imports {i.module}"
        for i in _imports_of(path)
        if i.module.split(".")[0] in SITE_PACKAGES
    ]
    assert bad == [], "rule 2: the knowledge core stands alone; history and the site build on it"


def _surface_imports(path: Path, root: Path = ROOT) -> list[str]:
    prefixes = tuple(p for kind in ("mcp", "rest", "admin", "web") for p in SURFACE_MODULES[kind])
    return [
        f"{_rel(path, root)}:{i.line} imports {i.module}"
        for i in _imports_of(path, root)
        if i.module.startswith(prefixes) or i.module.split(".")[0] in {"ninja", "mcp"}
    ]


@pytest.mark.parametrize("path", CORE, ids=_ids)
def test_services_and_selectors_never_import_a_surface(path):
    assert _surface_imports(path) == [], "rule 2: the core never imports a surface"


# --- rule 3: surfaces do not import each other ----------------------------------------------------


def _cross_surface_imports(path: Path, kind: str, root: Path = ROOT) -> list[str]:
    others = tuple(p for other, ps in SURFACE_MODULES.items() if other != kind for p in ps)
    own = SURFACE_MODULES[kind]
    return [
        f"{_rel(path, root)}:{i.line} ({kind}) imports {i.module}"
        for i in _imports_of(path, root)
        if i.module.startswith(others) and not i.module.startswith(own)
    ]


@pytest.mark.parametrize(
    "path", sorted(p for files in SURFACE_FILES.values() for p in files), ids=_ids
)
def test_surfaces_never_import_another_surface(path):
    kind = _kind_of(path)
    assert _cross_surface_imports(path, kind) == [], (
        "rule 3: a surface imports services and selectors, never another kind of surface"
    )


# --- rule 4: private names stay private -----------------------------------------------------------


def _private_imports(path: Path, root: Path = ROOT) -> list[str]:
    me = _module_name(path, root)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    bad = []
    for imp in _imports_of(path, root):
        parts = imp.module.split(".")
        if parts[0] not in OURS:
            continue  # a library's internals are its maintainers' business
        private_module = next((i for i, part in enumerate(parts) if part.startswith("_")), None)
        if private_module is not None and not (
            parts[private_module] == "__future__"
            or package.startswith(".".join(parts[:private_module]))
        ):
            bad.append(f"{_rel(path, root)}:{imp.line} imports private module {imp.module}")
        for name in imp.names:
            if name.startswith("_") and not name.startswith("__") and imp.module != me:
                # a private module may be imported from its own package: `from pkg import _mod`
                where = root / Path(*parts)
                is_module = (where / f"{name}.py").exists() or (where / name).is_dir()
                if is_module and package.startswith(imp.module):
                    continue
                bad.append(f"{_rel(path, root)}:{imp.line} imports {imp.module}.{name}")
    return bad


@pytest.mark.parametrize("path", ALL_CODE, ids=_ids)
def test_no_module_imports_another_modules_private_names(path):
    assert _private_imports(path) == [], (
        "rule 4: `_private` names belong to their module; make the name public or move the code"
    )


# --- rule 5: surfaces ask selectors ---------------------------------------------------------------


@pytest.mark.parametrize("path", QUERY_FREE, ids=_ids)
def test_surfaces_never_build_orm_queries(path):
    assert _query_calls(path) == [], (
        "rule 5: surfaces get their data from knowledge.selectors; add a selector for this read"
    )


# --- rule 6: the shape of a public service --------------------------------------------------------


def _is_durable_atomic(decorator: ast.expr) -> bool:
    return (
        isinstance(decorator, ast.Call)
        and isinstance(decorator.func, ast.Attribute)
        and decorator.func.attr == "atomic"
        and any(
            kw.arg == "durable" and getattr(kw.value, "value", None) is True
            for kw in decorator.keywords
        )
    )


def _public_functions(path: Path) -> list[ast.FunctionDef]:
    return [
        node
        for node in _tree(path).body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
    ]


def _service_shape_problems(path: Path, root: Path = ROOT) -> list[str]:
    problems = []
    for fn in _public_functions(path):
        if fn.name in NOT_SERVICES:
            continue
        where = f"{_rel(path, root)}:{fn.lineno} {fn.name}"
        if not any(_is_durable_atomic(d) for d in fn.decorator_list):
            problems.append(f"{where} is not @transaction.atomic(durable=True)")
        if fn.args.args or fn.args.posonlyargs:
            problems.append(f"{where} takes positional arguments (make them keyword-only)")
        if "actor" not in {a.arg for a in fn.args.kwonlyargs}:
            problems.append(f"{where} takes no actor")
    return problems


def _public_services() -> set[str]:
    return {
        fn.name
        for path in SERVICE_MODULES
        for fn in _public_functions(path)
        if fn.name not in NOT_SERVICES
    }


def _service_calls(path: Path, services: set[str], root: Path = ROOT) -> list[str]:
    calls = []
    for fn in _public_functions(path):
        for node in ast.walk(fn):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name in services and name != fn.name:
                    calls.append(f"{_rel(path, root)}:{node.lineno} {fn.name} calls {name}")
    return calls


@pytest.mark.parametrize("path", SERVICE_MODULES, ids=_ids)
def test_public_services_are_durable_and_take_actor_and_keywords(path):
    assert _service_shape_problems(path) == [], (
        "rule 6: a public service opens one durable transaction and takes actor=, keywords only"
    )


@pytest.mark.parametrize(
    "path",
    [*SERVICE_MODULES, *_modules("knowledge/services/_*.py", "knowledge/services/_*/*.py")],
    ids=_ids,
)
def test_public_services_compose_kernel_steps_instead_of_calling_each_other(path):
    assert _service_calls(path, _public_services()) == [], (
        "rule 6: services compose the steps in knowledge/services/_kernel/; a durable service "
        "cannot run inside another"
    )


def test_the_services_package_exports_every_public_service():
    import knowledge.services

    missing = _public_services() - set(knowledge.services.__all__)
    assert missing == set(), "rule 6: export each public service from knowledge/services"


# --- rule 7: neutral core messages ----------------------------------------------------------------


def _tool_words(path: Path, root: Path = ROOT) -> list[str]:
    hits = []
    for node in ast.walk(_tree(path)):
        is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
        if is_text and MCP_TOOL_CALL.search(node.value):
            hits.append(f"{_rel(path, root)}:{node.lineno} {node.value.strip()[:60]!r}")
    return hits


@pytest.mark.parametrize("path", CORE, ids=_ids)
def test_core_messages_name_no_mcp_tool(path):
    assert _tool_words(path) == [], (
        "rule 7: the core's errors fit every surface; MCP, REST and the admin add their next moves"
    )


# --- rule 8: small modules, no import circles ----------------------------------------------------

MAX_LINES = 400
OURS_ASIDE = {"tests", "bench"}


def _app_code(root: Path = ROOT) -> list[Path]:
    """Every Cairn package (so a new top-level app is checked too), without tests and bench."""
    packages = [
        d.name for d in root.iterdir() if (d / "__init__.py").exists() and d.name not in OURS_ASIDE
    ]
    found = {p for name in packages for p in root.glob(f"{name}/**/*.py")}
    return sorted(p for p in found if "migrations" not in p.parts)


APP_CODE = _app_code()


def _too_long(path: Path, root: Path = ROOT) -> list[str]:
    lines = len(path.read_text().splitlines())
    if lines <= MAX_LINES:
        return []
    return [f"{_rel(path, root)}:{MAX_LINES + 1} is past {MAX_LINES} lines ({lines})"]


def _import_graph(files: list[Path], root: Path = ROOT) -> dict[str, dict[str, int]]:
    """module -> {our module it imports: first line}; `from pkg import mod` counts as pkg.mod."""
    names = {_module_name(p, root) for p in files}
    graph = {}
    for path in files:
        edges: dict[str, int] = {}
        for imp in _imports_of(path, root):
            targets = [f"{imp.module}.{n}" for n in imp.names if f"{imp.module}.{n}" in names]
            for target in targets or [imp.module]:
                if target in names:
                    edges.setdefault(target, imp.line)
        graph[_module_name(path, root)] = edges
    return graph


def _circles(path: Path, graph: dict[str, dict[str, int]], root: Path = ROOT) -> list[str]:
    me = _module_name(path, root)
    return [
        f"{_rel(path, root)}:{line} imports {other}, which imports {me} back "
        f"(line {graph[other][me]})"
        for other, line in graph[me].items()
        if other != me and me in graph.get(other, {})
    ]


IMPORT_GRAPH = _import_graph(APP_CODE)


@pytest.mark.parametrize("path", APP_CODE, ids=_ids)
def test_modules_stay_under_400_lines(path):
    assert _too_long(path) == [], (
        "rule 8: a module past 400 lines becomes a package split by responsibility"
    )


@pytest.mark.parametrize("path", APP_CODE, ids=_ids)
def test_no_two_modules_import_each_other(path):
    assert _circles(path, IMPORT_GRAPH) == [], (
        "rule 8: imports run one way; move what both need into a module of its own"
    )


# --- rule 9: ops stands alone --------------------------------------------------------------------

OPS = _modules("ops/**/*.py")


def _cairn_imports(path: Path, root: Path = ROOT) -> list[str]:
    return [
        f"{_rel(path, root)}:{i.line} imports {i.module}"
        for i in _imports_of(path, root)
        if i.module.split(".")[0] in OURS - {"ops"}
    ]


@pytest.mark.parametrize("path", OPS, ids=_ids)
def test_ops_imports_no_other_cairn_app(path):
    assert _cairn_imports(path) == [], (
        "rule 9: ops imports no other Cairn app; the site hands it the memory's size and state"
    )


# --- rule 10: admin and commands go through services and selectors -------------------------------

# What an admin or a command may import of Cairn. `.*`: the package and everything in it.
MAY_IMPORT = (
    # the writes and the scoped reads
    "knowledge.services.*", "knowledge.selectors.*", "knowledge.graph.selectors",
    "knowledge.search",  # search's public face (search_entries, SearchFilters, the provider)
    "history.selectors",
    # history's services: the mirror's drain and retry, its upkeep, export and import
    "history.mirror", "history.maintenance", "history.exporting", "history.importing",
    "history.mirror_restore",
    # the model classes: the admin registers them and builds its querysets on them
    "knowledge.models.*", "history.models", "ops.*",
    # value modules: types, errors and pure functions that read and write no data
    "knowledge.actors", "knowledge.errors", "knowledge.inputs", "knowledge.limits",
    "knowledge.markdown", "knowledge.paths", "knowledge.rendering",
    "knowledge.schemas.*",  # Picoschema: parse, validate, infer, diff (pure)
    "knowledge.management.base",  # the data command base: who acts, the run's timing
)  # fmt: skip
RULE_10 = (
    "rule 10: admin and commands import Cairn code only from services, selectors, models, "
    "value modules and ops (MAY_IMPORT), and their own package"
)


def _admin_or_command(path: Path, root: Path = ROOT) -> bool:
    parts = path.relative_to(root).parts
    return len(parts) > 1 and parts[1] in {"admin.py", "admin", "management"}


def _own_package(path: Path, root: Path = ROOT) -> str:
    """`knowledge.admin`, `history.management`, …; the site's commands are the site's own."""
    app, part = path.relative_to(root).parts[:2]
    return app if app == "memory_site" else f"{app}.{part.removesuffix('.py')}"


def _targets(imp: Import, root: Path = ROOT) -> list[str]:
    """The modules an import takes: `from history import mirror` takes history.mirror."""
    where = root / Path(*imp.module.split("."))
    modules = [
        f"{imp.module}.{name}"
        for name in imp.names
        if (where / f"{name}.py").exists() or (where / name / "__init__.py").exists()
    ]
    return modules or [imp.module]


def _may_import(module: str, own: str) -> bool:
    for allowed in (*MAY_IMPORT, f"{own}.*"):
        package = allowed.removesuffix(".*")
        if module == package or (allowed.endswith(".*") and module.startswith(f"{package}.")):
            return True
    return False


def _admin_and_command_imports(path: Path, root: Path = ROOT) -> list[str]:
    own = _own_package(path, root)
    return [
        f"{_rel(path, root)}:{imp.line} imports {module}"
        for imp in _imports_of(path, root)
        for module in _targets(imp, root)
        if module.split(".")[0] in OURS - OURS_ASIDE and not _may_import(module, own)
    ]


ADMIN_AND_COMMANDS = [p for p in APP_CODE if _admin_or_command(p)]


@pytest.mark.parametrize("path", ADMIN_AND_COMMANDS, ids=_ids)
def test_admin_and_commands_import_only_services_selectors_models_and_ops(path):
    assert _admin_and_command_imports(path) == [], RULE_10


# --- rule 11: one declaration per thing -----------------------------------------------------------

HISTORY_MODEL = re.compile(r"^\s*\w+\s*=\s*\w+\.history\.model\b", re.M)
# Two restores that have nothing in common (from the mirror, from a backup): each says which.
AMBIGUOUS_NAMES = re.compile(r"^def (restore)\(", re.M)


def _second_declarations(path: Path, root: Path = ROOT) -> list[str]:
    text = path.read_text()
    found = []
    if _rel(path, root) != "knowledge/models/__init__.py":
        found += [f"{_rel(path, root)}: names a revision model ({m.group(0).strip()}); import "
                  "it from knowledge.models" for m in HISTORY_MODEL.finditer(text)]  # fmt: skip
    found += [f"{_rel(path, root)}: a public `{m.group(1)}()` (say which: mirror_restore, "
              "backup_restore)" for m in AMBIGUOUS_NAMES.finditer(text)]  # fmt: skip
    return found


@pytest.mark.parametrize("path", [*ALL_CODE, *_modules("tests/**/*.py")], ids=_ids)
def test_one_declaration_per_thing(path):
    assert _second_declarations(path) == [], "rule 11: one declaration per thing"


# --- the checks can fail --------------------------------------------------------------------------


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


def _sample(tmp_path: Path, relpath: str, text: str) -> Path:
    path = tmp_path / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    for parent in path.relative_to(tmp_path).parents:
        if str(parent) != ".":
            (tmp_path / parent / "__init__.py").touch()
    path.write_text(text)
    return path


def test_the_rules_catch_what_they_forbid(tmp_path):
    handler = _sample(
        tmp_path,
        "mcp_api/handlers.py",
        "from django.db.models import Count\n"
        "from api.routers.entries import router\n"
        "from knowledge.services.entries import _lock\n"
        "def recent(actor):\n"
        "    return Entry.objects.filter(x=1).order_by('-id')\n",
    )
    assert len(_query_calls(handler, root=tmp_path)) == 4  # .objects .filter .order_by import
    assert _cross_surface_imports(handler, "mcp", root=tmp_path) == [
        "mcp_api/handlers.py:2 (mcp) imports api.routers.entries"
    ]
    assert _private_imports(handler, root=tmp_path) == [
        "mcp_api/handlers.py:3 imports knowledge.services.entries._lock"
    ]

    _sample(tmp_path, "knowledge/services/_kernel.py", "")
    service = _sample(
        tmp_path,
        "knowledge/services/things.py",
        "from knowledge.services import _kernel as k\n"
        "from mcp_api import render\n"
        "@transaction.atomic\n"
        "def thing_make(actor, *, name): return thing_other(actor=actor)\n"
        "@transaction.atomic(durable=True)\n"
        "def thing_other(*, actor): raise NotFound('No thing. Call browse(project).')\n",
    )
    assert _private_imports(service, root=tmp_path) == []  # its own package's kernel
    assert _surface_imports(service, root=tmp_path) == [
        "knowledge/services/things.py:2 imports mcp_api"
    ]
    # not durable, positional arguments, no actor= keyword
    assert len(_service_shape_problems(service, root=tmp_path)) == 3
    assert _service_calls(service, {"thing_make", "thing_other"}, root=tmp_path) == [
        "knowledge/services/things.py:4 thing_make calls thing_other"
    ]
    assert len(_tool_words(service, root=tmp_path)) == 1

    outsider = _sample(tmp_path, "history/things.py", "from knowledge.services import _kernel\n")
    assert _private_imports(outsider, root=tmp_path) == [
        "history/things.py:1 imports knowledge.services._kernel"
    ]


def test_the_size_and_circle_checks_catch_what_they_forbid(tmp_path):
    engine = _sample(
        tmp_path, "knowledge/search/engine.py", "from knowledge.search.hits import load\n"
    )
    hits = _sample(
        tmp_path,
        "knowledge/search/hits.py",
        "def load():\n    from knowledge.search import engine\n" + "x = 1\n" * MAX_LINES,
    )
    graph = _import_graph(_app_code(tmp_path), root=tmp_path)
    assert _circles(engine, graph, root=tmp_path) == [
        "knowledge/search/engine.py:1 imports knowledge.search.hits, which imports "
        "knowledge.search.engine back (line 2)"
    ]
    assert _too_long(hits, root=tmp_path) == [
        f"knowledge/search/hits.py:{MAX_LINES + 1} is past {MAX_LINES} lines ({MAX_LINES + 2})"
    ]
    assert _too_long(engine, root=tmp_path) == []


def test_the_ops_check_catches_a_cairn_import(tmp_path):
    timing = _sample(
        tmp_path,
        "ops/timing.py",
        "from django.db import connection\nfrom ops import metrics\n"
        "def size():\n    from knowledge.models import Entry\n",
    )
    assert _cairn_imports(timing, root=tmp_path) == ["ops/timing.py:4 imports knowledge.models"]


def test_the_admin_and_commands_check_fails_with_the_file_line_and_rule(tmp_path):
    for module in ("knowledge/search/engine.py", "knowledge/services/tokens.py", "history/admin.py",
                   "history/mirror/render.py", "knowledge/management/base.py"):  # fmt: skip
        _sample(tmp_path, module, "")
    command = _sample(
        tmp_path,
        "knowledge/management/commands/things.py",
        "from knowledge.management.base import DataCommand\n"
        "from knowledge.services.tokens import token_create\n"
        "from knowledge.search.engine import search_entries\n"
        "from history.mirror import render\n",
    )
    admin = _sample(
        tmp_path,
        "knowledge/admin/things.py",
        "from knowledge.admin import common\nfrom history.admin import RevisionAdminMixin\n",
    )
    site_command = _sample(
        tmp_path, "memory_site/management/commands/go.py", "from memory_site import embedded\n"
    )
    assert _admin_and_command_imports(command, root=tmp_path) == [
        "knowledge/management/commands/things.py:3 imports knowledge.search.engine",
        "knowledge/management/commands/things.py:4 imports history.mirror.render",
    ]
    assert _admin_and_command_imports(site_command, root=tmp_path) == []
    problems = _admin_and_command_imports(admin, root=tmp_path)
    with pytest.raises(AssertionError) as failure:
        assert problems == [], RULE_10
    assert "knowledge/admin/things.py:2 imports history.admin" in str(failure.value)
    assert str(failure.value).startswith("rule 10: admin and commands import Cairn code only")


def test_the_declaration_check_catches_a_second_one(tmp_path):
    text = "HistoricalEntry = Entry.history.model\ndef restore(source):\n    pass\n"
    sample = _sample(tmp_path, "history/sample.py", text)
    assert len(_second_declarations(sample, tmp_path)) == 2
    models = _sample(tmp_path, "knowledge/models/__init__.py", text.splitlines()[0] + "\n")
    assert _second_declarations(models, tmp_path) == []
