"""Rules 6 and 7, on the core's services: a public service opens one durable transaction, takes
`actor=` and keyword-only arguments, calls no other public service and is exported by
knowledge.services; the core's messages name no MCP tool."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.architecture.source import (
    CORE,
    KERNEL_MODULES,
    MCP_TOOL_CALL,
    NOT_SERVICES,
    ROOT,
    SERVICE_MODULES,
    rel,
    report,
    syntax_tree,
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
        for node in syntax_tree(path).body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
    ]


def service_shape_problems(path: Path, root: Path = ROOT) -> list[str]:
    problems = []
    for fn in _public_functions(path):
        if fn.name in NOT_SERVICES:
            continue
        where = f"{rel(path, root)}:{fn.lineno} {fn.name}"
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


def service_calls(path: Path, services: set[str], root: Path = ROOT) -> list[str]:
    calls = []
    for fn in _public_functions(path):
        for node in ast.walk(fn):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name in services and name != fn.name:
                    calls.append(
                        f"{rel(path, root)}:{node.lineno} {fn.name} calls {name} (services "
                        "compose the steps in knowledge/services/_kernel/; a durable service "
                        "cannot run inside another)"
                    )
    return calls


def test_rule_6_public_services_are_durable_take_actor_and_keywords_and_are_exported():
    import knowledge.services

    services = _public_services()
    offenders = [hit for path in SERVICE_MODULES for hit in service_shape_problems(path)]
    offenders += [
        hit for path in [*SERVICE_MODULES, *KERNEL_MODULES] for hit in service_calls(path, services)
    ]
    offenders += [
        f"knowledge/services/__init__.py does not export {name}"
        for name in sorted(services - set(knowledge.services.__all__))
    ]
    assert offenders == [], report(
        "rule 6: a public service opens one durable transaction, takes actor= and keywords "
        "only, calls no other public service, and knowledge.services exports it",
        offenders,
    )


# --- rule 7: neutral core messages ----------------------------------------------------------------


def tool_words(path: Path, root: Path = ROOT) -> list[str]:
    hits = []
    for node in ast.walk(syntax_tree(path)):
        is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
        if is_text and MCP_TOOL_CALL.search(node.value):
            hits.append(f"{rel(path, root)}:{node.lineno} {node.value.strip()[:60]!r}")
    return hits


def test_rule_7_core_messages_name_no_mcp_tool():
    offenders = [hit for path in CORE for hit in tool_words(path)]
    assert offenders == [], report(
        "rule 7: the core's errors fit every surface; MCP, REST and the admin add their next moves",
        offenders,
    )
