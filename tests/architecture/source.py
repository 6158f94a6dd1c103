"""What the architecture rules read, shared by every test module here: the tree's files sorted
into kinds (surfaces, the core, services, ops, admin and commands), the imports of a module and
its syntax tree, how an offence is reported, and `write_sample`, which lays out a small tree of
modules in a temporary directory so each check can be shown to fail.

Each rule reads its files through globs kept in GLOBS (see test_rules_see_the_code.py)."""

from __future__ import annotations

import ast
import functools
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SITE_PACKAGES = ("history", "api", "mcp_api", "memory_site")
OURS = {"knowledge", "history", "api", "mcp_api", "memory_site", "ops", "web", "tests", "bench"}

# rule -> the globs it reads (filled by _files; checked by the stale-glob test)
GLOBS: dict[str, list[str]] = defaultdict(list)


def python_files(*patterns: str, root: Path = ROOT) -> list[Path]:
    found = {p for pattern in patterns for p in root.glob(pattern)}
    return sorted(p for p in found if "migrations" not in p.parts)


def _files(rule: str, *patterns: str) -> list[Path]:
    """The files `rule` checks; the globs are kept so that one matching nothing is caught."""
    GLOBS[rule].extend(patterns)
    return python_files(*patterns)


def stale_globs(globs: dict[str, list[str]], root: Path = ROOT) -> list[str]:
    return [
        f"{rule}: {pattern!r} matches no file"
        for rule, patterns in globs.items()
        for pattern in patterns
        if not python_files(pattern, root=root)
    ]


def rel(path: Path, root: Path = ROOT) -> str:
    return str(path.relative_to(root))


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _parsed(path: Path, text: str) -> ast.Module:
    return ast.parse(text, str(path))


def syntax_tree(path: Path) -> ast.Module:
    return _parsed(path, path.read_text())


def report(rule: str, offenders: list[str]) -> str:
    return f"{rule}\n  " + "\n  ".join(offenders)


# --- what the checks read -------------------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    module: str  # the module imported from (absolute)
    names: tuple[str, ...]  # the names taken from it (empty for `import x`)
    line: int


def imports_of(path: Path, root: Path = ROOT) -> list[Import]:
    found = []
    package = module_name(path, root)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    for node in ast.walk(syntax_tree(path)):
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


def write_sample(tmp_path: Path, relpath: str, text: str) -> Path:
    """`text` as the module at `relpath` under tmp_path, its packages' __init__.py made too, so a
    check can be shown failing on a tree that breaks its rule."""
    path = tmp_path / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    for parent in path.relative_to(tmp_path).parents:
        if str(parent) != ".":
            (tmp_path / parent / "__init__.py").touch()
    path.write_text(text)
    return path


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
READ_SIDE = _files(
    "rule 1: selectors",
    "knowledge/selectors/**/*.py", "knowledge/access.py", "history/selectors.py",
    "knowledge/reads/**/*.py", "knowledge/note_types/lookup.py", "knowledge/note_types/reads.py",
    "knowledge/note_types/stored_facts.py", "knowledge/note_types/targets.py",
)  # fmt: skip
# MCP authorization, in the site: it keeps tokens, so it keeps the one write path too.
SITE_SIGN_IN = _files("rule 14: the site's MCP authorization", "memory_site/oauth/**/*.py")
CORE = _files(
    "rule 2, 7: the core",
    "knowledge/services/**/*.py", "knowledge/selectors/**/*.py", "knowledge/search/**/*.py",
    "knowledge/access.py", "knowledge/db/**/*.py", "knowledge/reads/**/*.py",
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


MAX_LINES = 400
OURS_ASIDE = {"tests", "bench"}


def app_code(root: Path = ROOT) -> list[Path]:
    """Every Cairn package (so a new top-level app is checked too), without tests and bench."""
    packages = [
        d.name for d in root.iterdir() if (d / "__init__.py").exists() and d.name not in OURS_ASIDE
    ]
    found = {p for name in packages for p in root.glob(f"{name}/**/*.py")}
    return sorted(p for p in found if "migrations" not in p.parts)


APP_CODE = app_code()


def _admin_or_command(path: Path, root: Path = ROOT) -> bool:
    parts = path.relative_to(root).parts
    return len(parts) > 1 and parts[1] in {"admin.py", "admin", "management"}


ADMIN_AND_COMMANDS = [p for p in APP_CODE if _admin_or_command(p)]
