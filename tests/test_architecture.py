"""The dependency rules, checked on the source (ast), so a shortcut fails the build.

One test per rule; each failure names the rule and lists every offender with its file and line:

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
8. no module outside migrations, tests and bench is over 400 lines, and imports run one way:
   no circle of any length between our apps (knowledge, history, api, …) nor between modules
   (any import, also inside a function: one put there to dodge a circle is still a circle);
9. ops imports no other Cairn app (the site hands it what it needs of the memory at startup);
10. admin and commands (`*/admin.py`, `*/admin/`, `*/management/` of every app) import Cairn code
    only from services and selectors, models, value modules and ops, besides their own package
    and the data command base: no admin imports another app's admin, no command reaches into
    the core's insides (MAY_IMPORT below is the exact list).

The files each rule reads are globs; a glob that matches no file means the code moved and the
rule silently checks nothing, so that fails too (test_every_glob_of_every_rule_matches_a_file).
"""

from __future__ import annotations

import ast
import functools
import re
from collections import defaultdict
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

# rule -> the globs it reads (filled by _files; checked by the stale-glob test)
GLOBS: dict[str, list[str]] = defaultdict(list)


def _modules(*patterns: str, root: Path = ROOT) -> list[Path]:
    found = {p for pattern in patterns for p in root.glob(pattern)}
    return sorted(p for p in found if "migrations" not in p.parts)


def _files(rule: str, *patterns: str) -> list[Path]:
    """The files `rule` checks; the globs are kept so that one matching nothing is caught."""
    GLOBS[rule].extend(patterns)
    return _modules(*patterns)


def _stale_globs(globs: dict[str, list[str]], root: Path = ROOT) -> list[str]:
    return [
        f"{rule}: {pattern!r} matches no file"
        for rule, patterns in globs.items()
        for pattern in patterns
        if not _modules(pattern, root=root)
    ]


def _rel(path: Path, root: Path = ROOT) -> str:
    return str(path.relative_to(root))


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _parsed(path: Path, text: str) -> ast.Module:
    return ast.parse(text, str(path))


def _tree(path: Path) -> ast.Module:
    return _parsed(path, path.read_text())


def _report(rule: str, offenders: list[str]) -> str:
    return f"{rule}\n  " + "\n  ".join(offenders)


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
    "admin": ("knowledge/admin/**/*.py", "history/admin/**/*.py"),
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
SURFACE_FILES = {
    kind: _files("rule 1, 3, 5: surfaces", *patterns) for kind, patterns in SURFACE_KINDS.items()
}
SURFACES = sorted({p for kind in ("mcp", "rest", "admin", "web") for p in SURFACE_FILES[kind]})
QUERY_FREE = sorted({p for kind in ("mcp", "rest", "web") for p in SURFACE_FILES[kind]})
READ_SIDE = _files("rule 1: selectors", "knowledge/selectors/**/*.py", "history/selectors.py")
CORE = _files(
    "rule 2, 7: the core",
    "knowledge/services/**/*.py", "knowledge/selectors/**/*.py", "knowledge/search/**/*.py",
    "knowledge/graph/**/*.py", "knowledge/models/**/*.py", "knowledge/errors.py",
    "knowledge/inputs.py", "knowledge/paths.py", "knowledge/note_types/**/*.py",
    "history/selectors.py",
)  # fmt: skip
_NOT_CORE = {"admin", "management"}
KNOWLEDGE_CORE = [
    p
    for p in _files("rule 2: knowledge", "knowledge/**/*.py")
    if p.parts[len(ROOT.parts) + 1] not in _NOT_CORE
]
ALL_CODE = _files(
    "rule 4: all code",
    "knowledge/**/*.py", "history/**/*.py", "api/**/*.py", "mcp_api/**/*.py",
    "memory_site/**/*.py", "ops/**/*.py", "web/**/*.py", "bench/**/*.py", "manage.py",
)  # fmt: skip
# background.py queues the work after a commit (a kernel step; benchmarks switch it off).
SERVICE_MODULES = [
    p
    for p in _files("rule 6: services", "knowledge/services/*.py")
    if not p.name.startswith("_") and p.name != "background.py"
]
KERNEL_MODULES = _files("rule 6: kernel", "knowledge/services/_*.py", "knowledge/services/_*/*.py")
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
OPS = _files("rule 9: ops", "ops/**/*.py")


def _kind_of(path: Path) -> str | None:
    return next((kind for kind, files in SURFACE_FILES.items() if path in files), None)


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


def _admin_or_command(path: Path, root: Path = ROOT) -> bool:
    parts = path.relative_to(root).parts
    return len(parts) > 1 and parts[1] in {"admin.py", "admin", "management"}


ADMIN_AND_COMMANDS = [p for p in APP_CODE if _admin_or_command(p)]


def test_the_checks_see_the_code():
    assert ROOT / "knowledge" / "admin" / "entries.py" in SURFACES
    assert ROOT / "history" / "admin" / "revisions.py" in SURFACE_FILES["admin"]
    assert ROOT / "mcp_api" / "tools" / "writes.py" in SURFACES
    assert ROOT / "api" / "routers" / "entries.py" in SURFACES
    assert ROOT / "knowledge" / "services" / "entries.py" in SERVICE_MODULES
    assert ROOT / "knowledge" / "models" / "entries.py" in KNOWLEDGE_CORE
    assert ROOT / "knowledge" / "admin" / "entries.py" not in KNOWLEDGE_CORE
    assert READ_SIDE and CORE and SURFACE_FILES["commands"]
    assert ROOT / "ops" / "timing.py" in OPS
    for part in ("knowledge/admin/entries.py", "history/admin/__init__.py", "ops/admin.py",
                 "history/management/commands/import.py",
                 "memory_site/management/commands/serve.py"):  # fmt: skip
        assert ROOT / part in ADMIN_AND_COMMANDS


def _missing_modules(named: dict[str, tuple[str, ...]], root: Path = ROOT) -> list[str]:
    """The modules a rule names (`pkg.mod`, `pkg.*`) that are not in the tree."""
    missing = []
    for rule, modules in named.items():
        for module in modules:
            where = root / Path(*module.removesuffix(".*").split("."))
            if not (where.with_suffix(".py").exists() or (where / "__init__.py").exists()):
                missing.append(f"{rule}: {module} is no module of ours")
    return missing


def test_every_glob_of_every_rule_matches_a_file():
    named = {
        "rule 3: surface modules": tuple(
            m for ms in SURFACE_MODULES.values() for m in ms if not m.startswith("django.")
        ),
        "rule 10: MAY_IMPORT": MAY_IMPORT,
    }
    stale = _stale_globs(GLOBS) + _missing_modules(named)
    assert stale == [], _report(
        "a rule reads files that are not there (the code moved): point it at the new place", stale
    )


# --- rule 1: writes -------------------------------------------------------------------------------

RULE_1 = "rule 1: surfaces call knowledge.services to write, selectors only read"


def test_rule_1_surfaces_and_selectors_never_write_the_orm():
    offenders = [hit for path in [*SURFACES, *READ_SIDE] for hit in _write_calls(path)]
    assert offenders == [], _report(RULE_1, offenders)


# --- rule 2: the core stands alone ----------------------------------------------------------------

RULE_2 = "rule 2: the knowledge core stands alone (history and the site build on it) and no core "
RULE_2 += "module imports a surface"


def _site_imports(path: Path, root: Path = ROOT) -> list[str]:
    return [
        f"{_rel(path, root)}:{i.line} imports {i.module}"
        for i in _imports_of(path, root)
        if i.module.split(".")[0] in SITE_PACKAGES
    ]


def _surface_imports(path: Path, root: Path = ROOT) -> list[str]:
    prefixes = tuple(p for kind in ("mcp", "rest", "admin", "web") for p in SURFACE_MODULES[kind])
    return [
        f"{_rel(path, root)}:{i.line} imports {i.module}"
        for i in _imports_of(path, root)
        if i.module.startswith(prefixes) or i.module.split(".")[0] in {"ninja", "mcp"}
    ]


def test_rule_2_the_core_imports_no_site_package_and_no_surface():
    offenders = [hit for path in KNOWLEDGE_CORE for hit in _site_imports(path)]
    offenders += [hit for path in CORE for hit in _surface_imports(path)]
    assert offenders == [], _report(RULE_2, offenders)


# --- rule 3: surfaces do not import each other ----------------------------------------------------


def _cross_surface_imports(path: Path, kind: str, root: Path = ROOT) -> list[str]:
    others = tuple(p for other, ps in SURFACE_MODULES.items() if other != kind for p in ps)
    own = SURFACE_MODULES[kind]
    return [
        f"{_rel(path, root)}:{i.line} ({kind}) imports {i.module}"
        for i in _imports_of(path, root)
        if i.module.startswith(others) and not i.module.startswith(own)
    ]


def test_rule_3_surfaces_never_import_another_surface():
    paths = sorted({p for files in SURFACE_FILES.values() for p in files})
    offenders = [hit for path in paths for hit in _cross_surface_imports(path, _kind_of(path))]
    assert offenders == [], _report(
        "rule 3: a surface imports services and selectors, never another kind of surface",
        offenders,
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


def test_rule_4_no_module_imports_another_modules_private_names():
    offenders = [hit for path in ALL_CODE for hit in _private_imports(path)]
    assert offenders == [], _report(
        "rule 4: `_private` names belong to their module; make the name public or move the code",
        offenders,
    )


# --- rule 5: surfaces ask selectors ---------------------------------------------------------------


def test_rule_5_surfaces_never_build_orm_queries():
    offenders = [hit for path in QUERY_FREE for hit in _query_calls(path)]
    assert offenders == [], _report(
        "rule 5: surfaces get their data from knowledge.selectors; add a selector for this read",
        offenders,
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
                    calls.append(
                        f"{_rel(path, root)}:{node.lineno} {fn.name} calls {name} (services "
                        "compose the steps in knowledge/services/_kernel/; a durable service "
                        "cannot run inside another)"
                    )
    return calls


def test_rule_6_public_services_are_durable_take_actor_and_keywords_and_are_exported():
    import knowledge.services

    services = _public_services()
    offenders = [hit for path in SERVICE_MODULES for hit in _service_shape_problems(path)]
    offenders += [
        hit
        for path in [*SERVICE_MODULES, *KERNEL_MODULES]
        for hit in _service_calls(path, services)
    ]
    offenders += [
        f"knowledge/services/__init__.py does not export {name}"
        for name in sorted(services - set(knowledge.services.__all__))
    ]
    assert offenders == [], _report(
        "rule 6: a public service opens one durable transaction, takes actor= and keywords "
        "only, calls no other public service, and knowledge.services exports it",
        offenders,
    )


# --- rule 7: neutral core messages ----------------------------------------------------------------


def _tool_words(path: Path, root: Path = ROOT) -> list[str]:
    hits = []
    for node in ast.walk(_tree(path)):
        is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
        if is_text and MCP_TOOL_CALL.search(node.value):
            hits.append(f"{_rel(path, root)}:{node.lineno} {node.value.strip()[:60]!r}")
    return hits


def test_rule_7_core_messages_name_no_mcp_tool():
    offenders = [hit for path in CORE for hit in _tool_words(path)]
    assert offenders == [], _report(
        "rule 7: the core's errors fit every surface; MCP, REST and the admin add their next moves",
        offenders,
    )


# --- rule 8: small modules, imports run one way ---------------------------------------------------


def _too_long(path: Path, root: Path = ROOT) -> list[str]:
    lines = len(path.read_text().splitlines())
    if lines <= MAX_LINES:
        return []
    return [f"{_rel(path, root)}:{MAX_LINES + 1} is past {MAX_LINES} lines ({lines})"]


Edges = dict[str, dict[str, list[str]]]  # node -> {node it imports: ["file:line", …]}


def _import_graph(files: list[Path], root: Path = ROOT) -> Edges:
    """module -> {our module it imports: [where]}; `from pkg import mod` counts as pkg.mod."""
    names = {_module_name(p, root) for p in files}
    graph: Edges = {}
    for path in files:
        me = _module_name(path, root)
        edges: dict[str, list[str]] = defaultdict(list)
        for imp in _imports_of(path, root):
            targets = [f"{imp.module}.{n}" for n in imp.names if f"{imp.module}.{n}" in names]
            for target in targets or [imp.module]:
                if target in names and target != me:
                    edges[target].append(f"{_rel(path, root)}:{imp.line}")
        graph[me] = dict(edges)
    return graph


def _app_graph(modules: Edges) -> Edges:
    """The same imports between top-level apps (knowledge, history, api, …)."""
    graph: Edges = defaultdict(lambda: defaultdict(list))
    for module, edges in modules.items():
        graph[module.split(".")[0]]  # every app is a node, also one that imports no other
        for target, where in edges.items():
            if target.split(".")[0] != module.split(".")[0]:
                graph[module.split(".")[0]][target.split(".")[0]] += where
    return {node: dict(edges) for node, edges in graph.items()}


def _strongly_connected(graph: Edges) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the groups of nodes that reach each other (size > 1)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(groups)


def _circles(graph: Edges, what: str) -> list[str]:
    """Every circle as the imports that make it: for each group of `what`s that import each
    other, each arrow inside the group with every file and line behind it, the arrows with the
    fewest imports first (most often the one running the wrong way)."""
    found = []
    for group in _strongly_connected(graph):
        arrows = sorted(
            ((a, b, graph[a][b]) for a in group for b in graph[a] if b in group),
            key=lambda arrow: (len(arrow[2]), arrow[0], arrow[1]),
        )
        lines = [
            f"  {a} -> {b} ({len(where)} import{'s' * (len(where) > 1)}): " + ", ".join(where)
            for a, b, where in arrows
        ]
        found.append(f"{what}s {', '.join(group)} import each other:\n" + "\n".join(lines))
    return found


def test_rule_8_modules_stay_small_and_imports_run_one_way():
    modules = _import_graph(APP_CODE)
    offenders = [hit for path in APP_CODE for hit in _too_long(path)]
    offenders += _circles(_app_graph(modules), "app") + _circles(modules, "module")
    assert offenders == [], _report(
        "rule 8: a module past 400 lines becomes a package split by responsibility; imports run "
        "one way (move what both sides need into a module of its own, or have the upper one "
        "register itself with the lower one)",
        offenders,
    )


# --- rule 9: ops stands alone --------------------------------------------------------------------


def _cairn_imports(path: Path, root: Path = ROOT) -> list[str]:
    return [
        f"{_rel(path, root)}:{i.line} imports {i.module}"
        for i in _imports_of(path, root)
        if i.module.split(".")[0] in OURS - {"ops"}
    ]


def test_rule_9_ops_imports_no_other_cairn_app():
    offenders = [hit for path in OPS for hit in _cairn_imports(path)]
    assert offenders == [], _report(
        "rule 9: ops imports no other Cairn app; the site hands it the memory's size and state",
        offenders,
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
    "knowledge.markdown", "knowledge.paths", "knowledge.rendering", "knowledge.diffs",
    "knowledge.note_types.*",  # Picoschema: parse, validate, infer, diff (pure)
    "knowledge.management.base",  # the data command base: who acts, the run's timing
)  # fmt: skip
RULE_10 = (
    "rule 10: admin and commands import Cairn code only from services, selectors, models, "
    "value modules and ops (MAY_IMPORT), and their own package"
)


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


def test_rule_10_admin_and_commands_import_only_services_selectors_models_and_ops():
    offenders = [hit for path in ADMIN_AND_COMMANDS for hit in _admin_and_command_imports(path)]
    assert offenders == [], _report(RULE_10, offenders)


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


RULE_11 = "rule 11: one declaration per thing (a revision model, a restore that says which)"


def test_rule_11_one_declaration_per_thing():
    offenders = [
        hit
        for path in [*ALL_CODE, *_modules("tests/**/*.py")]
        for hit in _second_declarations(path)
    ]
    assert offenders == [], _report(RULE_11, offenders)


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
        "from history.selectors import revision_text\n"
        "@transaction.atomic\n"
        "def thing_make(actor, *, name): return thing_other(actor=actor)\n"
        "@transaction.atomic(durable=True)\n"
        "def thing_other(*, actor): raise NotFound('No thing. Call browse(project).')\n",
    )
    assert _private_imports(service, root=tmp_path) == []  # its own package's kernel
    assert _surface_imports(service, root=tmp_path) == [
        "knowledge/services/things.py:2 imports mcp_api"
    ]
    assert _site_imports(service, root=tmp_path) == [
        "knowledge/services/things.py:2 imports mcp_api",
        "knowledge/services/things.py:3 imports history.selectors",
    ]
    # not durable, positional arguments, no actor= keyword
    assert len(_service_shape_problems(service, root=tmp_path)) == 3
    [call] = _service_calls(service, {"thing_make", "thing_other"}, root=tmp_path)
    assert call.startswith("knowledge/services/things.py:5 thing_make calls thing_other")
    assert len(_tool_words(service, root=tmp_path)) == 1

    outsider = _sample(tmp_path, "history/things.py", "from knowledge.services import _kernel\n")
    assert _private_imports(outsider, root=tmp_path) == [
        "history/things.py:1 imports knowledge.services._kernel"
    ]


def test_the_size_check_catches_a_long_module(tmp_path):
    engine = _sample(tmp_path, "knowledge/search/engine.py", "x = 1\n")
    hits = _sample(tmp_path, "knowledge/search/hits.py", "x = 1\n" * (MAX_LINES + 2))
    assert _too_long(hits, root=tmp_path) == [
        f"knowledge/search/hits.py:{MAX_LINES + 1} is past {MAX_LINES} lines ({MAX_LINES + 2})"
    ]
    assert _too_long(engine, root=tmp_path) == []


def test_the_circle_check_finds_circles_of_any_length_between_modules_and_apps(tmp_path):
    # three modules in a ring (one import inside a function), and a pair beside them
    _sample(tmp_path, "knowledge/search/engine.py", "from knowledge.search.hits import load\n")
    _sample(tmp_path, "knowledge/search/hits.py", "from knowledge.search import scope\n")
    _sample(
        tmp_path, "knowledge/search/scope.py", "def f():\n    from knowledge.search import engine\n"
    )
    _sample(tmp_path, "knowledge/search/fine.py", "from knowledge.search import engine\n")
    # two apps through a third: knowledge -> history -> api -> knowledge
    _sample(tmp_path, "knowledge/admin/pages.py", "from history.selectors import revision_text\n")
    _sample(tmp_path, "history/selectors.py", "from api.site import api\n")
    _sample(tmp_path, "api/site.py", "from knowledge.models import Entry\n")
    _sample(tmp_path, "knowledge/models/__init__.py", "")
    _sample(tmp_path, "ops/timing.py", "")
    modules = _import_graph(_app_code(tmp_path), root=tmp_path)
    [ring] = _circles(modules, "module")
    assert ring == (
        "modules knowledge.search.engine, knowledge.search.hits, knowledge.search.scope import "
        "each other:\n"
        "  knowledge.search.engine -> knowledge.search.hits (1 import): "
        "knowledge/search/engine.py:1\n"
        "  knowledge.search.hits -> knowledge.search.scope (1 import): knowledge/search/hits.py:1\n"
        "  knowledge.search.scope -> knowledge.search.engine (1 import): "
        "knowledge/search/scope.py:2"
    )
    [apps] = _circles(_app_graph(modules), "app")
    assert apps.startswith("apps api, history, knowledge import each other:\n")
    assert "  knowledge -> history (1 import): knowledge/admin/pages.py:1" in apps
    assert "ops" not in apps and "fine" not in ring
    # the check sees nothing where there is nothing
    assert _circles({"a": {"b": ["a.py:1"]}, "b": {}}, "module") == []


def test_the_glob_check_names_the_rule_whose_glob_matches_nothing(tmp_path):
    _sample(tmp_path, "knowledge/selectors/entries.py", "")
    _sample(tmp_path, "knowledge/paths.py", "")
    globs = {"rule 1: selectors": ["knowledge/selectors/**/*.py", "knowledge/selectors.py"]}
    assert _stale_globs(globs, root=tmp_path) == [
        "rule 1: selectors: 'knowledge/selectors.py' matches no file"
    ]
    named = {"rule 10": ("knowledge.selectors.*", "knowledge.paths", "knowledge.search")}
    assert _missing_modules(named, root=tmp_path) == [
        "rule 10: knowledge.search is no module of ours"
    ]


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
        assert problems == [], _report(RULE_10, problems)
    assert "knowledge/admin/things.py:2 imports history.admin" in str(failure.value)
    assert str(failure.value).startswith("rule 10: admin and commands import Cairn code only")


def test_the_declaration_check_catches_a_second_one(tmp_path):
    text = "HistoricalEntry = Entry.history.model\ndef restore(source):\n    pass\n"
    sample = _sample(tmp_path, "history/sample.py", text)
    assert len(_second_declarations(sample, tmp_path)) == 2
    models = _sample(tmp_path, "knowledge/models/__init__.py", text.splitlines()[0] + "\n")
    assert _second_declarations(models, tmp_path) == []
