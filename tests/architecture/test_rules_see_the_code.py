"""The rules check the code where it is: the file sets hold the modules they are meant to, and a
rule's glob or a module it names that matches nothing (the code moved) fails."""

from __future__ import annotations

from pathlib import Path

from tests.architecture.source import (
    ADMIN_AND_COMMANDS,
    CORE,
    GLOBS,
    KNOWLEDGE_CORE,
    OPS,
    READ_SIDE,
    ROOT,
    SERVICE_MODULES,
    SURFACE_FILES,
    SURFACE_MODULES,
    SURFACES,
    report,
    stale_globs,
    write_sample,
)
from tests.architecture.test_admin_and_commands import MAY_IMPORT


def test_the_checks_see_the_code():
    assert ROOT / "knowledge" / "admin" / "entries.py" in SURFACES
    assert ROOT / "history" / "admin" / "revisions.py" in SURFACE_FILES["admin"]
    assert ROOT / "mcp_api" / "tools" / "writes.py" in SURFACES
    assert ROOT / "api" / "routers" / "entries.py" in SURFACES
    assert ROOT / "knowledge" / "services" / "entries.py" in SERVICE_MODULES
    assert ROOT / "knowledge" / "models" / "entries.py" in KNOWLEDGE_CORE
    assert ROOT / "knowledge" / "admin" / "entries.py" not in KNOWLEDGE_CORE
    assert READ_SIDE and CORE and SURFACE_FILES["commands"]
    assert ROOT / "knowledge" / "reads" / "pages.py" in READ_SIDE
    assert ROOT / "knowledge" / "reads" / "pages.py" in CORE
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
    stale = stale_globs(GLOBS) + _missing_modules(named)
    assert stale == [], report(
        "a rule reads files that are not there (the code moved): point it at the new place", stale
    )


def test_the_glob_check_names_the_rule_whose_glob_matches_nothing(tmp_path):
    write_sample(tmp_path, "knowledge/selectors/entries.py", "")
    write_sample(tmp_path, "knowledge/paths.py", "")
    globs = {"rule 1: selectors": ["knowledge/selectors/**/*.py", "knowledge/selectors.py"]}
    assert stale_globs(globs, root=tmp_path) == [
        "rule 1: selectors: 'knowledge/selectors.py' matches no file"
    ]
    named = {"rule 10": ("knowledge.selectors.*", "knowledge.paths", "knowledge.search")}
    assert _missing_modules(named, root=tmp_path) == [
        "rule 10: knowledge.search is no module of ours"
    ]
