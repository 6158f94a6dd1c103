"""Rule 10: admin and commands (`*/admin.py`, `*/admin/`, `*/management/` of every app) import
Cairn code only from services and selectors, models, value modules and ops, besides their own
package and the data command base (MAY_IMPORT is the exact list)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.architecture.source import (
    ADMIN_AND_COMMANDS,
    OURS,
    OURS_ASIDE,
    ROOT,
    Import,
    imports_of,
    rel,
    report,
    write_sample,
)

# --- rule 10: admin and commands go through services and selectors -------------------------------

# What an admin or a command may import of Cairn. `.*`: the package and everything in it.
MAY_IMPORT = (
    # the writes and the scoped reads
    "knowledge.services.*", "knowledge.selectors.*", "knowledge.graph.selectors",
    "knowledge.reads.*",  # reads shaped for one caller: the editor, trees, health, listings
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
    "knowledge.note_types.*",  # the schema language (pure) and its scoped reads
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
        f"{rel(path, root)}:{imp.line} imports {module}"
        for imp in imports_of(path, root)
        for module in _targets(imp, root)
        if module.split(".")[0] in OURS - OURS_ASIDE and not _may_import(module, own)
    ]


def test_rule_10_admin_and_commands_import_only_services_selectors_models_and_ops():
    offenders = [hit for path in ADMIN_AND_COMMANDS for hit in _admin_and_command_imports(path)]
    assert offenders == [], report(RULE_10, offenders)


# --- the checks can fail --------------------------------------------------------------------------


def test_the_admin_and_commands_check_fails_with_the_file_line_and_rule(tmp_path):
    for module in ("knowledge/search/engine.py", "knowledge/services/tokens.py", "history/admin.py",
                   "history/mirror/render.py", "knowledge/management/base.py"):  # fmt: skip
        write_sample(tmp_path, module, "")
    command = write_sample(
        tmp_path,
        "knowledge/management/commands/things.py",
        "from knowledge.management.base import DataCommand\n"
        "from knowledge.services.tokens import token_create\n"
        "from knowledge.search.engine import search_entries\n"
        "from history.mirror import render\n",
    )
    admin = write_sample(
        tmp_path,
        "knowledge/admin/things.py",
        "from knowledge.admin import common\nfrom history.admin import RevisionAdminMixin\n",
    )
    site_command = write_sample(
        tmp_path, "memory_site/management/commands/go.py", "from memory_site import embedded\n"
    )
    assert _admin_and_command_imports(command, root=tmp_path) == [
        "knowledge/management/commands/things.py:3 imports knowledge.search.engine",
        "knowledge/management/commands/things.py:4 imports history.mirror.render",
    ]
    assert _admin_and_command_imports(site_command, root=tmp_path) == []
    problems = _admin_and_command_imports(admin, root=tmp_path)
    with pytest.raises(AssertionError) as failure:
        assert problems == [], report(RULE_10, problems)
    assert "knowledge/admin/things.py:2 imports history.admin" in str(failure.value)
    assert str(failure.value).startswith("rule 10: admin and commands import Cairn code only")
