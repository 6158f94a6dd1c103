"""Rules 1, 5 and 12: surfaces call knowledge.services to write and knowledge.selectors to read;
selectors never write, and no surface but the admin builds an ORM query; nor does the site's
MCP authorization (memory_site/oauth), which issues tokens."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.architecture.source import (
    QUERY_FREE,
    READ_SIDE,
    ROOT,
    SITE_SIGN_IN,
    SURFACES,
    imports_of,
    rel,
    report,
    syntax_tree,
)

WRITE_METHODS = {"save", "delete", "create", "update", "bulk_create", "bulk_update",
                 "get_or_create", "update_or_create", "add", "remove", "clear", "set"}  # fmt: skip
QUERY_METHODS = {"objects", "filter", "exclude", "order_by", "annotate", "aggregate",
                 "values", "values_list", "select_related", "prefetch_related", "raw",
                 "extra", "distinct"}  # fmt: skip


def _write_calls(path: Path, root: Path = ROOT) -> list[str]:
    """ORM write calls: `x.save()`, `Model.objects.create()`, `qs.update()`, m2m `.add()`, …"""
    hits = []
    tree = syntax_tree(path)
    decorators = {
        id(d) for node in ast.walk(tree) for d in getattr(node, "decorator_list", [])
    }  # `@router.delete(...)` declares a route, it deletes nothing
    for node in ast.walk(tree):
        if id(node) in decorators:
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name in WRITE_METHODS and not _is_harmless(node.func):
                hits.append(f"{rel(path, root)}:{node.lineno} .{name}()")
        if isinstance(node, ast.Attribute) and node.attr == "atomic":
            hits.append(f"{rel(path, root)}:{node.lineno} transaction.atomic")
    return hits


def query_calls(path: Path, root: Path = ROOT) -> list[str]:
    """ORM query building: `Model.objects`, `.filter()`, `.order_by()`, `.aggregate()`, …"""
    hits = []
    for node in ast.walk(syntax_tree(path)):
        if isinstance(node, ast.Attribute) and node.attr == "objects":
            hits.append(f"{rel(path, root)}:{node.lineno} .objects")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in QUERY_METHODS - {"objects"}
            and not _is_harmless(node.func)
        ):
            hits.append(f"{rel(path, root)}:{node.lineno} .{node.func.attr}()")
    for imp in imports_of(path, root):
        if imp.module.startswith("django.db.models"):
            hits.append(f"{rel(path, root)}:{imp.line} imports {imp.module}")
    return hits


def _is_harmless(func: ast.Attribute) -> bool:
    # dict/set/list helpers and messages that share a method name with the ORM
    target = func.value
    if isinstance(target, ast.Name) and target.id.isupper():
        return True  # module constants such as a ContextVar: `CLIENT_HINT.set(...)`
    if isinstance(target, ast.Constant | ast.JoinedStr):
        return True  # "…".join / str methods
    return isinstance(target, ast.Name) and target.id in {
        "counts", "seen", "cut", "messages", "parser", "kwargs", "data", "headers", "result",
        "cleanups", "os", "signal", "stop", "exit_stack", "stack", "tg", "re", "builtins",
        "cache",
    }  # fmt: skip


# --- rule 1: writes -------------------------------------------------------------------------------

RULE_1 = "rule 1: surfaces call knowledge.services to write, selectors only read"


def test_rule_1_surfaces_and_selectors_never_write_the_orm():
    offenders = [hit for path in [*SURFACES, *READ_SIDE] for hit in _write_calls(path)]
    assert offenders == [], report(RULE_1, offenders)


# --- rule 5: surfaces ask selectors ---------------------------------------------------------------


def test_rule_5_surfaces_never_build_orm_queries():
    offenders = [hit for path in QUERY_FREE for hit in query_calls(path)]
    assert offenders == [], report(
        "rule 5: surfaces get their data from knowledge.selectors; add a selector for this read",
        offenders,
    )


# --- rule 14: MCP authorization keeps the write path ----------------------------------------------


def test_rule_12_the_sites_mcp_authorization_writes_and_reads_through_the_core():
    offenders = [hit for path in SITE_SIGN_IN for hit in _write_calls(path) + query_calls(path)]
    assert offenders == [], report(
        "rule 14: memory_site/oauth issues and checks tokens through knowledge.services and "
        "knowledge.selectors only (token_authenticate stays the one place a token is checked)",
        offenders,
    )


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
