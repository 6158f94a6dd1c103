"""Rules 2, 3, 4 and 9, on who imports whom: the knowledge core imports no site package and no
surface; a surface never imports another kind of surface; no module imports another module's
`_private` names; ops imports no other Cairn app. The last test shows the detectors of rules 2
to 7 catching a sample tree that breaks each of them."""

from __future__ import annotations

from pathlib import Path

from tests.architecture.source import (
    ALL_CODE,
    CORE,
    KNOWLEDGE_CORE,
    OPS,
    OURS,
    ROOT,
    SITE_PACKAGES,
    SURFACE_FILES,
    SURFACE_MODULES,
    imports_of,
    module_name,
    rel,
    report,
    write_sample,
)
from tests.architecture.test_services import service_calls, service_shape_problems, tool_words
from tests.architecture.test_writes_and_queries import query_calls

# --- rule 2: the core stands alone ----------------------------------------------------------------

RULE_2 = "rule 2: the knowledge core stands alone (history and the site build on it) and no core "
RULE_2 += "module imports a surface"


def _site_imports(path: Path, root: Path = ROOT) -> list[str]:
    return [
        f"{rel(path, root)}:{i.line} imports {i.module}"
        for i in imports_of(path, root)
        if i.module.split(".")[0] in SITE_PACKAGES
    ]


def _surface_imports(path: Path, root: Path = ROOT) -> list[str]:
    prefixes = tuple(p for kind in ("mcp", "rest", "admin", "web") for p in SURFACE_MODULES[kind])
    return [
        f"{rel(path, root)}:{i.line} imports {i.module}"
        for i in imports_of(path, root)
        if i.module.startswith(prefixes) or i.module.split(".")[0] in {"ninja", "mcp"}
    ]


def test_rule_2_the_core_imports_no_site_package_and_no_surface():
    offenders = [hit for path in KNOWLEDGE_CORE for hit in _site_imports(path)]
    offenders += [hit for path in CORE for hit in _surface_imports(path)]
    assert offenders == [], report(RULE_2, offenders)


# --- rule 3: surfaces do not import each other ----------------------------------------------------


def _kind_of(path: Path) -> str | None:
    return next((kind for kind, files in SURFACE_FILES.items() if path in files), None)


def _cross_surface_imports(path: Path, kind: str, root: Path = ROOT) -> list[str]:
    others = tuple(p for other, ps in SURFACE_MODULES.items() if other != kind for p in ps)
    own = SURFACE_MODULES[kind]
    return [
        f"{rel(path, root)}:{i.line} ({kind}) imports {i.module}"
        for i in imports_of(path, root)
        if i.module.startswith(others) and not i.module.startswith(own)
    ]


def test_rule_3_surfaces_never_import_another_surface():
    paths = sorted({p for files in SURFACE_FILES.values() for p in files})
    offenders = [hit for path in paths for hit in _cross_surface_imports(path, _kind_of(path))]
    assert offenders == [], report(
        "rule 3: a surface imports services and selectors, never another kind of surface",
        offenders,
    )


# --- rule 4: private names stay private -----------------------------------------------------------


def _private_imports(path: Path, root: Path = ROOT) -> list[str]:
    me = module_name(path, root)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    bad = []
    for imp in imports_of(path, root):
        parts = imp.module.split(".")
        if parts[0] not in OURS:
            continue  # a library's internals are its maintainers' business
        private_module = next((i for i, part in enumerate(parts) if part.startswith("_")), None)
        if private_module is not None and not (
            parts[private_module] == "__future__"
            or package.startswith(".".join(parts[:private_module]))
        ):
            bad.append(f"{rel(path, root)}:{imp.line} imports private module {imp.module}")
        for name in imp.names:
            if name.startswith("_") and not name.startswith("__") and imp.module != me:
                # a private module may be imported from its own package: `from pkg import _mod`
                where = root / Path(*parts)
                is_module = (where / f"{name}.py").exists() or (where / name).is_dir()
                if is_module and package.startswith(imp.module):
                    continue
                bad.append(f"{rel(path, root)}:{imp.line} imports {imp.module}.{name}")
    return bad


def test_rule_4_no_module_imports_another_modules_private_names():
    offenders = [hit for path in ALL_CODE for hit in _private_imports(path)]
    assert offenders == [], report(
        "rule 4: `_private` names belong to their module; make the name public or move the code",
        offenders,
    )


# --- rule 9: ops stands alone --------------------------------------------------------------------


def _cairn_imports(path: Path, root: Path = ROOT) -> list[str]:
    return [
        f"{rel(path, root)}:{i.line} imports {i.module}"
        for i in imports_of(path, root)
        if i.module.split(".")[0] in OURS - {"ops"}
    ]


def test_rule_9_ops_imports_no_other_cairn_app():
    offenders = [hit for path in OPS for hit in _cairn_imports(path)]
    assert offenders == [], report(
        "rule 9: ops imports no other Cairn app; the site hands it the memory's size and state",
        offenders,
    )


# --- the checks can fail --------------------------------------------------------------------------


def test_the_rules_catch_what_they_forbid(tmp_path):
    handler = write_sample(
        tmp_path,
        "mcp_api/handlers.py",
        "from django.db.models import Count\n"
        "from api.routers.entries import router\n"
        "from knowledge.services.entries import _lock\n"
        "def recent(actor):\n"
        "    return Entry.objects.filter(x=1).order_by('-id')\n",
    )
    assert len(query_calls(handler, root=tmp_path)) == 4  # .objects .filter .order_by import
    assert _cross_surface_imports(handler, "mcp", root=tmp_path) == [
        "mcp_api/handlers.py:2 (mcp) imports api.routers.entries"
    ]
    assert _private_imports(handler, root=tmp_path) == [
        "mcp_api/handlers.py:3 imports knowledge.services.entries._lock"
    ]

    write_sample(tmp_path, "knowledge/services/_kernel.py", "")
    service = write_sample(
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
    assert len(service_shape_problems(service, root=tmp_path)) == 3
    [call] = service_calls(service, {"thing_make", "thing_other"}, root=tmp_path)
    assert call.startswith("knowledge/services/things.py:5 thing_make calls thing_other")
    assert len(tool_words(service, root=tmp_path)) == 1

    outsider = write_sample(
        tmp_path, "history/things.py", "from knowledge.services import _kernel\n"
    )
    assert _private_imports(outsider, root=tmp_path) == [
        "history/things.py:1 imports knowledge.services._kernel"
    ]


def test_the_ops_check_catches_a_cairn_import(tmp_path):
    timing = write_sample(
        tmp_path,
        "ops/timing.py",
        "from django.db import connection\nfrom ops import metrics\n"
        "def size():\n    from knowledge.models import Entry\n",
    )
    assert _cairn_imports(timing, root=tmp_path) == ["ops/timing.py:4 imports knowledge.models"]
