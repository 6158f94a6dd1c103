"""Rule 12: SQL text lives only in knowledge/db/. Anywhere else in the apps a statement is a
queryset; what the ORM cannot say is a named statement in knowledge/db with a test against its
ORM form. SQL_ALLOWED names the few files that must hold their own, each with why."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.architecture.source import APP_CODE, ROOT, rel, report, syntax_tree, write_sample

SQL_ALLOWED = {  # file -> why it may hold SQL of its own
    "ops/report.py": "ops imports no Cairn app (rule 9): its own timings table",
    "ops/timing.py": "ops imports no Cairn app (rule 9): the COPY of its timing rows",
    "memory_site/backup/create.py": "server administration on a connection of its own",
    "memory_site/backup/restore.py": "server administration on a connection of its own",
    "memory_site/backup/database_swap.py": "server administration on a connection of its own",
    "memory_site/backup/since.py": "compares two databases on connections of their own",
    "memory_site/embedded.py": "creates the embedded database and its extensions",
    "memory_site/management/commands/restore.py": "tells the operator what to run in psql",
}
RULE_12 = (
    "rule 12: SQL text lives only in knowledge/db/ (tests/architecture/test_sql.py): build the "
    "statement as a queryset, or name it in knowledge/db with a test against its ORM form"
)

SQL = re.compile(
    r"\b(SELECT\s|INSERT\s+INTO\b|UPDATE\s+\S+\s+(AS\s+\w+\s+)?SET\b|DELETE\s+FROM\b|"
    r"WITH\s+\w+\s+AS\b|COPY\s|CREATE\s+(DATABASE|TABLE|INDEX)\b|DROP\s+(DATABASE|TABLE)\b|"
    r"ALTER\s+(DATABASE|TABLE|SEQUENCE)\b|SET\s+(statement_timeout|TRANSACTION|LOCAL)\b|"
    r"RESET\s+\w+)|::(regconfig|tsquery|tsvector|vector|bigint|int|text|real|jsonb|timestamptz|"
    r"float4)\b|\b(pg_\w+|nextval|set_config|setweight|to_tsvector|ts_rank|unnest)\("
)
RAW_CALLS = {"RawSQL", "raw", "extra", "sql_with_params", "get_compiler", "as_sql"}
EXPRESSION_BASES = {"Func", "Aggregate", "Transform", "Lookup", "Expression"}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.add(id(value))
    return found


def sql_offences(path: Path, root: Path = ROOT) -> list[str]:
    tree = syntax_tree(path)
    docstrings = _docstrings(tree)
    where = rel(path, root)
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings and SQL.search(node.value):
                hits.append(f"{where}:{node.lineno} SQL text {node.value.strip()[:40]!r}")
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "cursor":
                hits.append(f"{where}:{node.lineno} a cursor")
            elif name in RAW_CALLS:
                hits.append(f"{where}:{node.lineno} {name}()")
            elif name == "Func" and any(k.arg == "template" for k in node.keywords):
                hits.append(f"{where}:{node.lineno} Func(template=…)")
        elif isinstance(node, ast.Attribute) and node.attr == "connection":
            if isinstance(node.value, ast.Attribute) and node.value.attr == "connection":
                hits.append(f"{where}:{node.lineno} the driver's connection")
        elif isinstance(node, ast.ClassDef):
            bases = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
            sets = {
                t.id
                for stmt in node.body
                if isinstance(stmt, ast.Assign)
                for t in stmt.targets
                if isinstance(t, ast.Name)
            }
            if bases & EXPRESSION_BASES and sets & {"template", "arg_joiner", "sql_template"}:
                hits.append(f"{where}:{node.lineno} an expression's SQL template")
    return sorted(set(hits), key=lambda h: (h.split(":")[0], int(h.split(":")[1].split()[0]), h))


def _checked(root: Path = ROOT, files: list[Path] | None = None) -> list[Path]:
    return [
        p
        for p in (APP_CODE if files is None else files)
        if not rel(p, root).startswith("knowledge/db/") and rel(p, root) not in SQL_ALLOWED
    ]


def test_rule_12_sql_text_lives_only_in_knowledge_db():
    offenders = [hit for path in _checked() for hit in sql_offences(path)]
    assert offenders == [], report(RULE_12, offenders)


def test_every_file_allowed_its_own_sql_still_holds_some():
    stale = [
        name for name in SQL_ALLOWED if not (ROOT / name).exists() or not sql_offences(ROOT / name)
    ]
    assert stale == [], f"SQL_ALLOWED names files that hold no SQL (take them out): {stale}"


# --- the check can fail ---------------------------------------------------------------------------


def test_the_sql_check_finds_text_cursors_raw_sql_and_templates(tmp_path):
    service = write_sample(
        tmp_path,
        "knowledge/services/x.py",
        '"""Reads SELECT id FROM here, in words."""\n'
        "from django.db import connection\n"
        "def f():\n"
        "    with connection.cursor() as c:\n"
        '        c.execute("SELECT 1")\n',
    )
    search = write_sample(
        tmp_path,
        "knowledge/search/y.py",
        "from django.db.models import Func\n"
        "from django.db.models.expressions import RawSQL\n"
        "q = RawSQL('x @@ %s::tsquery', [])\n"
        "class Key(Func):\n"
        "    template = 'sha256(%(expressions)s)'\n",
    )
    fine = write_sample(
        tmp_path, "knowledge/admin/tree.py", "class Tree:\n    template = 'x.html'\n"
    )
    inside = write_sample(tmp_path, "knowledge/db/z.py", "Q = 'SELECT 1'\n")
    files = _checked(tmp_path, [service, search, fine, inside])
    assert [hit for p in files for hit in sql_offences(p, tmp_path)] == [
        "knowledge/services/x.py:4 a cursor",
        "knowledge/services/x.py:5 SQL text 'SELECT 1'",
        "knowledge/search/y.py:3 RawSQL()",
        "knowledge/search/y.py:3 SQL text 'x @@ %s::tsquery'",
        "knowledge/search/y.py:4 an expression's SQL template",
    ]
