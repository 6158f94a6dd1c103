"""What the code has, for the guides to be checked against: Python definitions, management
commands and their options, settings and their defaults, URLs and the REST schema, MCP tools and
prompts with their arguments, Celery tasks with the settings they read, Makefile targets.

Each is read from the running code where it can be (the URL resolver, the command parsers, the
MCP server's argument models, the OpenAPI schema) and from the source where a name is all that
matters (definitions, tasks).
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import inspect
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("knowledge", "history", "mcp_api", "api", "web", "ops", "memory_site")
SETTING = re.compile(r"\b(?:CAIRN|DJANGO)_[A-Z0-9_]*[A-Z0-9]\b")


def _sources(packages=PACKAGES) -> list[Path]:
    return [
        p
        for pkg in packages
        for p in sorted((ROOT / pkg).rglob("*.py"))
        if "migrations" not in p.parts
    ]


# --- Python -----------------------------------------------------------------------------------


def resolve(dotted: str) -> object | None:
    """The object a dotted name names (module, then attributes), or None."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
            if obj is None:
                return None
        return obj
    return None


def exists(dotted: str) -> bool:
    """A module or attribute of Cairn's, or a model's label (`ops.OperationTiming`)."""
    if resolve(dotted) is not None:
        return True
    from django.apps import apps

    try:
        apps.get_model(dotted)
    except (LookupError, ValueError):
        return False
    return True


def parameters(obj: object) -> set[str] | None:
    """The names a callable takes (None: any, it takes **kwargs or cannot be read)."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return None
    return set(sig.parameters)


def _params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str] | None:
    a = node.args
    if a.kwarg:
        return None
    return {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]} | (
        {a.vararg.arg} if a.vararg else set()
    )


@functools.cache
def definitions() -> dict[str, list[set[str] | None]]:
    """Every function, method and class Cairn defines, by bare name: the names each takes (a
    class takes its annotated fields and its __init__'s)."""
    found: dict[str, list[set[str] | None]] = {}
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found.setdefault(node.name, []).append(_params(node))
            elif isinstance(node, ast.ClassDef):
                fields = {
                    s.target.id
                    for s in node.body
                    if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                }
                init = next(
                    (
                        s
                        for s in node.body
                        if isinstance(s, ast.FunctionDef) and s.name == "__init__"
                    ),
                    None,
                )
                takes = fields | (_params(init) or set()) if init else fields
                found.setdefault(node.name, []).append(takes or None)
    from django.apps import apps

    for model in apps.get_models():  # django-simple-history's Historical* models have no source
        found.setdefault(model.__name__, []).append(None)
    return found


def defined_in(path: Path) -> set[str]:
    """Top-level functions, classes and assigned names of one source file."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


# --- management commands and make -------------------------------------------------------------


@functools.cache
def commands() -> dict[str, str]:
    from django.core.management import get_commands

    return get_commands()


def _walk_parser(parser) -> tuple[set[str], dict[str, object]]:
    """Every option string of a parser and its subcommands, and its subcommands by name."""
    options, subs = set(), {}
    for action in parser._actions:
        options |= {o for o in action.option_strings if o.startswith("--")}
        if action.choices and hasattr(action, "_name_parser_map"):
            for name, sub in action._name_parser_map.items():
                subs[name] = sub
                options |= _walk_parser(sub)[0]
    return options, subs


@functools.cache
def command_parser(name: str) -> tuple[frozenset[str], dict[str, object], tuple[str, ...]]:
    """(its options with its subcommands', its subcommands, the choices of its first positional)."""
    from django.core.management import load_command_class

    parser = load_command_class(commands()[name], name).create_parser("manage.py", name)
    options, subs = _walk_parser(parser)
    positional = next(
        (a for a in parser._actions if not a.option_strings and a.dest != "help"), None
    )
    choices = tuple(positional.choices or ()) if positional and not subs else ()
    return frozenset(options), subs, choices


@functools.cache
def every_option() -> frozenset[str]:
    """Every option of a management command or of a script of the checkout (bench/*.py)."""
    scripts = set()
    for path in [*ROOT.glob("bench/*.py"), *ROOT.glob("docs/*.py")]:
        scripts |= set(re.findall(r"add_argument\(\s*[\"'](--[\w-]+)", path.read_text()))
    return frozenset(scripts).union(*(command_parser(name)[0] for name in commands()))


@functools.cache
def make_targets() -> tuple[set[str], set[str]]:
    """The Makefile's targets and the variables it reads."""
    text = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z][\w-]*)\s*:(?!=)", text, re.M))
    variables = set(re.findall(r"\$\(([A-Z_]+)\)|\$\$([A-Z_]+)|^([A-Z_]+)\s*[?:]?=", text, re.M))
    return targets, {v for group in variables for v in group if v}


# --- settings and environment variables ------------------------------------------------------


def _settings_reference():
    """docs/settings_reference.py, as docs/generate.py imports it (one module, one name)."""
    if "settings_reference" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "settings_reference", ROOT / "docs" / "settings_reference.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules["settings_reference"] = module
        spec.loader.exec_module(module)
    return sys.modules["settings_reference"]


@functools.cache
def settings_defaults() -> dict[str, str]:
    """Each setting and environment variable the settings modules define or read, with its
    default as written (docs/settings_reference.py reads them for the settings page)."""
    reader = _settings_reference()
    out: dict[str, str] = {}
    for row in reader.settings_rows():
        for var, default in row["reads"]:
            out.setdefault(var, default or "")
        for name in row["settings"]:
            if not row["reads"]:
                out.setdefault(name, row["value"] or "")
    return out


@functools.cache
def names_in_code() -> frozenset[str]:
    """Every CAIRN_* and DJANGO_* name written anywhere outside the docs (code, tests, Makefile,
    Docker files, .env.example, CI): a name nothing reads is a name the docs must not give."""
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    found: set[str] = set()
    for name in files:
        # (not the docs, and not the drift test, whose made-up names must stay unknown)
        if (
            not name
            or name.startswith("docs/")
            or name.endswith((".md", ".png", ".json"))
            or name == "tests/test_docs_drift.py"
        ):
            continue
        path = ROOT / name
        if path.is_file():
            found |= set(SETTING.findall(path.read_text(errors="replace")))
    return frozenset(found | set(settings_defaults()))


@functools.cache
def said() -> str:
    """Everything Cairn's code can say (its Python, templates and Makefile) and the MCP SDK's,
    in one text to search."""
    import mcp

    files = [*_sources(), *(ROOT / "templates").rglob("*.html"), ROOT / "Makefile"]
    files += [*ROOT.glob("*/templates/**/*.html"), ROOT / "tests/web/conftest.py"]
    files += sorted(Path(mcp.__file__).parent.rglob("*.py"))
    return "\n".join(p.read_text() for p in files if p.is_file())


# --- URLs, REST, MCP -------------------------------------------------------------------------


@functools.cache
def asgi_mounts() -> tuple[str, ...]:
    """What memory_site/asgi.py routes past Django's URLconf: /mcp, its protected-resource
    metadata and MCP authorization's endpoints (memory_site.oauth.endpoints.PATHS; a guide may
    name them all as `/oauth/…`)."""
    from mcp_api.protected_resource import METADATA_PATH
    from memory_site.oauth.endpoints import PATHS

    return ("/mcp", METADATA_PATH, "/oauth/x1", *PATHS)


@functools.cache
def openapi() -> dict:
    from api.site import api

    return api.get_openapi_schema()


@functools.cache
def openapi_paths() -> list[tuple[re.Pattern, str, dict]]:
    return [
        (re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$"), path, ops)
        for path, ops in openapi()["paths"].items()
    ]


@functools.cache
def mcp_tools() -> dict[str, frozenset[str]]:
    """Each tool's arguments as tools/list publishes them, plus the old names it still takes."""
    from mcp_api.app import ALIASES, SCHEMAS

    return {
        name: frozenset(schema.get("properties", {})) | frozenset(ALIASES)
        for name, schema in SCHEMAS.items()
    }


@functools.cache
def mcp_prompts() -> dict[str, frozenset[str]]:
    from mcp_api.resources import PROMPTS

    return {fn.__name__: frozenset(inspect.signature(fn).parameters) for fn in PROMPTS}


# --- Celery tasks ------------------------------------------------------------------------------


@functools.cache
def tasks() -> dict[str, frozenset[str]]:
    """Each Celery task (its registered name) with the settings it reads: those its function
    names, and the one its beat schedule is set by."""
    out: dict[str, set[str]] = {}
    for path in ROOT.glob("*/tasks.py"):
        module = path.parent.name
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.decorator_list:
                names = set(re.findall(r"\b[A-Z][A-Z0-9_]+\b", ast.unparse(node)))
                out[f"{module}.tasks.{node.name}"] = names
    beat = ast.parse((ROOT / "memory_site/settings/operations.py").read_text())
    for node in ast.walk(beat):
        if isinstance(node, ast.Dict):
            fields = {k.value: v for k, v in zip(node.keys, node.values, strict=True)
                      if isinstance(k, ast.Constant)}  # fmt: skip
            task, schedule = fields.get("task"), fields.get("schedule")
            if isinstance(task, ast.Constant) and task.value in out and schedule is not None:
                out[task.value] |= set(re.findall(r"\b[A-Z][A-Z0-9_]+\b", ast.unparse(schedule)))
    return {name: frozenset(names) for name, names in out.items()}


def git_ignores(path: str) -> bool:
    return (
        subprocess.run(
            ["git", "check-ignore", "-q", path], cwd=ROOT, capture_output=True
        ).returncode
        == 0
    )
