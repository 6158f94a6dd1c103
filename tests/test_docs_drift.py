"""The hand-written guides cannot drift from the code: every name they give must exist, checked
against the running code wherever it can be.

- Python: a dotted name of Cairn's (`knowledge.search.search_entries`) imports, and the arguments
  written after it are ones it takes; a bare call (`entry_diff(actor, entry, from_version=…)`)
  is an MCP tool, a prompt or a function of Cairn's that takes them; a class name exists; a code
  block headed `# path.py` defines what it shows.
- Commands: `manage.py NAME` is a command, its subcommand one of its subcommands, each `--flag`
  one of its options; a flag on its own is some command's; `make TARGET VAR=…` exist.
- Settings: every `CAIRN_*`/`DJANGO_*` name is read by the code, and a default written beside
  one, `CAIRN_X` (8), is the code's.
- URLs: a path resolves (REST paths under /api/v1 with their methods, query parameters and body
  fields in the OpenAPI schema); a page's query parameter is read by its view.
- MCP: "the `x` tool" is a tool ("no `x` tool" is not), `name=` is an argument.
- Claims: a number "a test holds" is in a test's assertion; a task said to follow a setting
  reads it; a checker said to run is in requirements/.
- Files: a path in the checkout exists (or is made at run time: git ignores it).

The last test puts back the lines that had drifted when this test was written, and each must be
caught.
"""

from __future__ import annotations

import json
import re

import pytest
from django.urls import Resolver404, get_resolver, resolve

from ops.version import VERSION
from tests import docs_code as code
from tests.docs_text import ROOT, Doc, Span, docs

CAIRN = r"(?:knowledge|history|mcp_api|api|web|ops|memory_site)"
DOTTED = re.compile(rf"^({CAIRN}(?:\.\w+)+)(?:\((.*)\))?$")
CALL = re.compile(r"^([A-Za-z_][\w.]*)\((.*)\)$")
CLASS = re.compile(r"^[A-Z][a-z]+[A-Z]\w*$")
# Names a guide cites from another codebase or notation, which Cairn does not define.
ELSEWHERE = {
    "docs/developers/style.md": {
        "MCPTool": "Zulip's zerver/lib/mcp/tools.py",
        "GetMessagesArguments.model_validate": "Zulip's zerver/lib/mcp/tools.py",
        "JsonableError": "Zulip's zerver/lib/exceptions.py",
        "GeneratedField": "Django's",
        "GinIndex": "Django's",
        "DocumentQuerySet.search": "djangoproject.com's docs/models.py",
    },
    "docs/concepts/note-types.md": {"contact": "a Picoschema field, `contact(object)`"},
    "docs/developers/mutants.md": {"rstrip": "Python's str.rstrip, in first_h1"},
    "docs/developers/tests.md": {"html": "the page tests' helper, tests/web/pages/responses.py"},
}
# mutmut's names for the mutants of a function (`knowledge.markdown.x_first_h1__mutmut_5`):
# mutants.md explains survivors by them (tests/mutation/report.py reads it), no code defines them.
# What Django and pydantic give every model, admin and argument model (`save()`, `save_model()`,
# `Field(description=…)`, `transaction.atomic(durable=True)`).
LIBRARY = (
    "django.db.models.Model",
    "django.contrib.admin.ModelAdmin",
    "pydantic",
    "django.db.transaction",
)
# Where a class a guide names may come from when Cairn does not define it (`SearchVector`).
LIBRARY_CLASSES = ("django.db.models", "django.contrib.postgres.search", "pydantic")
# Variables a guide has the reader set for a client, not for Cairn (Claude Desktop's env for
# mcp-remote, Codex's bearer_token_env_var).
READERS_OWN = {"CAIRN_AUTH", "CAIRN_TOKEN"}
# Options of programs other than manage.py that the guides give on their own.
OTHER_FLAGS = {"--reuse-db", "--create-db", "--workers", "--help"}
CHECKERS = re.compile(
    r"\b(mypy|pyright|pylint|flake8|isort|bandit|pre-commit|django-stubs|pytest-cov)\b"
)


def _split(args: str) -> list[str]:
    """Top-level comma-separated parts of an argument list."""
    parts, depth, quote, current = [], 0, "", ""
    for ch in args:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        current += ch
    return [p for p in [*parts, current.strip()] if p]


def _given(args: str) -> tuple[set[str], list[str]]:
    """The argument names a call or signature gives (keywords and bare names; literals and `…`
    say nothing), and the calls nested in its values."""
    names, nested = set(), []
    for part in _split(args):
        key, eq, value = part.partition("=")
        if eq and re.fullmatch(r"\w+", key.strip()):
            names.add(key.strip())
            if CALL.match(value.strip()):
                nested.append(value.strip())
        elif re.fullmatch(r"\w+(?:\s*\|\s*\w+)*\??", part):
            names |= set(re.findall(r"\w+", part))
    return names, nested


def _library(name: str) -> object | None:
    for owner in LIBRARY:
        if (found := code.resolve(f"{owner}.{name}")) is not None:
            return found
    return None


def _call_problem(doc: Doc, text: str) -> str | None:
    """Why a call written in a guide names nothing Cairn has, or arguments it does not take."""
    m = CALL.match(text)
    name, (names, nested) = m.group(1), _given(m.group(2))
    for inner in nested:
        if problem := _call_problem(doc, inner):
            return problem
    if name in ELSEWHERE.get(doc.path, {}):
        return None
    if dotted := DOTTED.match(name):
        obj = code.resolve(dotted.group(1))
        if obj is None:
            return f"{name} does not exist"
        takes = code.parameters(obj)
        wrong = names - takes if takes is not None else set()
        return f"{name} takes no {sorted(wrong)} (it takes {sorted(takes)})" if wrong else None
    bare = name.rsplit(".", 1)[-1]
    accepted = [
        *[set(args) for tool, args in code.mcp_tools().items() if tool == bare],
        *[set(args) for prompt, args in code.mcp_prompts().items() if prompt == bare],
        *code.definitions().get(bare, []),
    ]
    if not accepted and (lib := _library(bare)) is not None:
        accepted = [code.parameters(lib)]
    if not accepted:
        return f"{name} is no MCP tool, prompt or function of Cairn's"
    if any(takes is None or names <= takes for takes in accepted):
        return None
    closest = min((t for t in accepted if t is not None), key=lambda t: len(names - t))
    return f"{name} takes no {sorted(names - closest)} (it takes {sorted(closest)})"


# --- the checks: each returns "file:line: `what`: why" for every problem in one guide ---------


def _block_calls(doc: Doc) -> list[Span]:
    """Calls written at the start of a line in a `text` block (an agent's tool calls), each up
    to its closing parenthesis, however many lines it takes."""
    calls = []
    for block in doc.blocks:
        if block.lang != "text":
            continue
        lines = block.text.splitlines()
        for i, line in enumerate(lines):
            if not re.match(r"[a-z_]+\(", line):
                continue
            text, depth, quote = "", 0, ""
            for ch in "\n".join(lines[i:]):
                text += ch
                if quote:
                    quote = "" if ch == quote else quote
                elif ch in "\"'":
                    quote = ch
                elif ch == "(":
                    depth += 1
                elif ch == ")":
                    depth -= 1
                    if depth == 0:
                        break
            calls.append(Span(block.line + 1 + i, " ".join(text.split())))
    return calls


def _mutated(name: str) -> str:
    """mutmut's name of a mutant (`knowledge.markdown.x_first_h1__mutmut_5`, as the mutation
    testing page explains survivors) stands for the function it mutates."""
    if (m := re.fullmatch(r"(.+)\.x_(\w+?)__mutmut_\d+", name)) is None:
        return name
    return f"{m.group(1)}.{m.group(2)}"


def python_names(doc: Doc) -> list[str]:
    problems = []
    for span in doc.spans + _block_calls(doc):
        text = span.text
        if DOTTED.match(text) and "(" not in text and not code.exists(_mutated(text)):
            problems.append(f"{doc.at(span.line)}: `{text}` does not exist")
        elif CALL.match(text) and (why := _call_problem(doc, text)):
            problems.append(f"{doc.at(span.line)}: `{text}`: {why}")
        elif (
            CLASS.match(text)
            and text not in ELSEWHERE.get(doc.path, {})
            and text not in code.definitions()
            and not any(code.resolve(f"{lib}.{text}") for lib in LIBRARY_CLASSES)
        ):
            problems.append(f"{doc.at(span.line)}: `{text}` is no class of Cairn's")
    return problems


PATH = re.compile(r"^(?:\./)?([\w.-]+)((?:/[\w.*-]+)+/?|/)$")


def _top() -> set[str]:
    return {p.name for p in ROOT.iterdir() if p.name not in (".git", ".venv", "var")}


def paths(doc: Doc) -> list[str]:
    problems, top = [], _top()
    found = [(s.line, s.text) for s in doc.spans]
    for block in doc.blocks:
        head = re.match(r"\s*#\s*([\w./-]+\.\w+)\b", block.text)
        if head:
            found.append((block.line + 1, head.group(1)))
            target = ROOT / head.group(1)
            if target.is_file() and target.suffix == ".py":
                shown = set(re.findall(r"^(?:async )?def (\w+)|^class (\w+)", block.text, re.M))
                missing = {n for pair in shown for n in pair if n} - code.defined_in(target)
                if missing:
                    problems.append(
                        f"{doc.at(block.line + 1)}: the block headed {head.group(1)} shows "
                        f"{sorted(missing)}, which that file does not define"
                    )
    lines = doc.text.splitlines()
    for line, text in found:
        m = PATH.match(text)
        if not m or m.group(1) not in top or "<" in text:
            continue
        if re.search(r"\bremoved\b|\bgit history\b", lines[line - 1] if line <= len(lines) else ""):
            continue  # a file named as gone
        if "*" in text:
            exists = any(ROOT.glob(text.rstrip("/")))
        else:
            exists = (ROOT / text).exists() or code.git_ignores(text)
        if not exists:
            problems.append(f"{doc.at(line)}: `{text}` is no file or folder of the checkout")
    return problems


def commands(doc: Doc) -> list[str]:
    problems = []
    targets, variables = code.make_targets()
    for span in doc.shell_lines:
        for m in re.finditer(r"manage\.py\s+([a-z][\w-]*)([^#`;&]*)", span.text):
            name, rest = m.group(1), m.group(2)
            if name not in code.commands():
                problems.append(f"{doc.at(span.line)}: `manage.py {name}` is no command")
                continue
            options, subs, choices = code.command_parser(name)
            words = rest.split()
            if (
                words
                and (subs or choices)
                and re.fullmatch(r"[a-z][\w-]*(?:\\?\|[a-z][\w-]*)*", words[0])
            ):
                known = set(subs) | set(choices)
                wrong = [w for w in re.split(r"\\?\|", words[0]) if w not in known]
                if wrong:
                    problems.append(
                        f"{doc.at(span.line)}: `manage.py {name} {words[0]}`: no {wrong} "
                        f"(it has {sorted(known)})"
                    )
            for flag in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", rest):
                if flag not in options:
                    problems.append(f"{doc.at(span.line)}: `manage.py {name}` has no {flag}")
        for m in re.finditer(r"(?:^|\s)make\s+((?:[A-Z_]+=\S*\s*|[a-z][\w-]*\s*)+)", span.text):
            for word in m.group(1).split():
                var = word.partition("=")[0] if "=" in word else None
                if var and var not in variables:
                    problems.append(f"{doc.at(span.line)}: the Makefile reads no {var}")
                elif not var and word not in targets:
                    problems.append(f"{doc.at(span.line)}: `make {word}` is no target")
    for span in doc.spans:
        m = re.match(r"^(--[a-z][\w-]*)", span.text)
        if m and m.group(1) not in code.every_option() | OTHER_FLAGS:
            problems.append(f"{doc.at(span.line)}: `{m.group(1)}` is no option of any command")
    return problems


def settings(doc: Doc) -> list[str]:
    problems, known = [], code.names_in_code() | READERS_OWN
    for m in code.SETTING.finditer(doc.text):
        name, after = m.group(0), doc.text[m.end() : m.end() + 2]
        line = doc.text.count("\n", 0, m.start()) + 1
        numbered = re.match(r"^(.*?)_\d+(?:_|$)", name)
        if after.startswith(("_*", "_<", "_…")) or name.endswith("_"):
            ok = any(k.startswith(name) for k in known)
        elif numbered:
            ok = numbered.group(1) in known or any(k.startswith(numbered.group(1)) for k in known)
        else:
            ok = name in known
        if not ok:
            problems.append(f"{doc.at(line)}: `{name}` is read by no code")
    defaults = code.settings_defaults()
    beside = re.compile(
        r"`((?:CAIRN|DJANGO)_[A-Z0-9_]+)`(?:\s+[a-z]+){0,2}\s*(?:\(|,\s*default\s+`?)(\d[\d,._]*\d|\d)\b"
    )
    for m in beside.finditer(doc.prose):
        name, written = m.group(1), m.group(2)
        line = doc.text.count("\n", 0, m.start()) + 1
        default = defaults.get(name, "").replace("_", "")
        try:
            same = float(written.replace(",", "").replace("_", "")) == float(default)
        except ValueError:
            continue  # the code's default is an expression (one per core, …)
        if not same:
            problems.append(
                f"{doc.at(line)}: `{name}` ({written}): the code's default is {defaults[name]}"
            )
    return problems


METHODS = re.compile(
    r"^((?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)(?:\|[A-Z]+)*)\s+(/\S*)(?:\s+(\{.*\}))?$"
)


def _served(patterns=None) -> set[str]:
    """The first path segments the site answers under (what an include at "" holds, too)."""
    firsts = {"mcp"}
    for p in get_resolver().url_patterns if patterns is None else patterns:
        first = str(p.pattern).strip("^").split("/")[0]
        if first == "" and hasattr(p, "url_patterns"):
            firsts |= _served(p.url_patterns)
        elif re.fullmatch(r"[\w.-]+", first):
            firsts.add(first)
    return firsts


def _url_problems(path: str, methods: list[str], body: str | None) -> list[str]:
    path = re.sub(r"<[^>]*>|\{[^}]*\}|…", "x1", path)
    path, _, query = path.partition("?")
    params = set(re.findall(r"(?:^|&)(\w+)=", query))
    head, _, last = path.rpartition("/")
    problems = []
    for one in [f"{head}/{alt}" for alt in last.split("|")] if "|" in last else [path]:
        if one.startswith(code.asgi_mounts()):
            continue
        api = one if one.startswith("/api/") else f"/api/v1{one}"
        # The most literal template that matches: /entries/lookup before /entries/{ref}.
        matches = sorted(
            ((tpl.count("{"), tpl, ops) for rx, tpl, ops in code.openapi_paths() if rx.match(api)),
            key=lambda m: m[0],
        )
        if (
            not matches
            and api.startswith("/api/")
            and any(tpl.startswith(api + "/") for _, tpl, _ in code.openapi_paths())
        ):
            continue  # a prefix of the API's paths: /api/v1
        if matches and (one.startswith("/api/") or methods):
            ops = matches[0][2]
            for method in methods or ["get"]:
                op = ops.get(method.lower())
                if op is None:
                    problems.append(f"no {method} {api} (it has {sorted(ops)})")
                    continue
                taken = {p["name"] for p in op.get("parameters", [])}
                if params - taken:
                    problems.append(f"{method} {api} takes no {sorted(params - taken)}")
                if body:
                    schema = next(iter(op.get("requestBody", {}).get("content", {}).values()), {})
                    ref = schema.get("schema", {}).get("$ref", "")
                    fields = code.openapi()["components"]["schemas"].get(ref.rsplit("/", 1)[-1], {})
                    extra = set(json.loads(body)) - set(fields.get("properties", {}))
                    if extra:
                        problems.append(f"{method} {api} reads no {sorted(extra)} in its body")
            continue
        try:
            match = resolve(one)
        except Resolver404:
            try:
                match = resolve(one + "/")
            except Resolver404:
                problems.append(f"{one} answers 404")
                continue
        if params and not one.startswith("/admin/"):
            # Read by the view's package (its views, forms or helpers), by name.
            package = ROOT / match.func.__module__.split(".")[0]
            source = "\n".join(f.read_text() for f in package.rglob("*.py"))
            unread = {p for p in params if f'"{p}"' not in source and f"'{p}'" not in source}
            if unread:
                problems.append(f"{one}'s view reads no {sorted(unread)}")
    return problems


def urls(doc: Doc) -> list[str]:
    problems, served = [], _served()
    found = []
    for span in doc.spans:
        m = METHODS.match(span.text)
        if m:
            found.append((span.line, m.group(2), m.group(1).split("|"), m.group(3), False))
        elif span.text.startswith("/") and " " not in re.sub(r"<[^>]*>", "", span.text):
            first = span.text.split("/")[1].split("?")[0]
            if first in served or span.text.endswith("/"):
                found.append((span.line, span.text, [], None, False))
    for m in re.finditer(r"https?://127\.0\.0\.1:8000(/[^\s)>\]`\"']*)", doc.text):
        found.append((doc.text.count("\n", 0, m.start()) + 1, m.group(1), [], None, True))
    for line, path, methods, body, ours in found:
        if path.split("/")[1].split("?")[0] not in served and not methods and not ours:
            continue
        problems += [
            f"{doc.at(line)}: `{path}`: {why}" for why in _url_problems(path, methods, body)
        ]
    return problems


def mcp(doc: Doc) -> list[str]:
    problems, tools = [], code.mcp_tools()
    for m in re.finditer(r"(\bno (?:MCP )?)?`(\w+)(\*?)` tools?\b", doc.prose):
        negated, name, star = m.group(1), m.group(2), m.group(3)
        line = doc.text.count("\n", 0, m.start()) + 1
        exists = any(t.startswith(name) for t in tools) if star else name in tools
        if exists == bool(negated):
            says = "there is no" if negated else "there is a"
            problems.append(f"{doc.at(line)}: says {says} `{name}{star}` tool: not so")
    # `name=` on its own: an argument of a tool, or of a function of Cairn's or transaction.atomic.
    given = set().union(*tools.values()) | (code.parameters(_library("atomic")) or set())
    given |= {n for takes in code.definitions().values() for t in takes if t for n in t}
    for span in doc.spans:
        m = re.fullmatch(r"([a-z]\w*)=\S*", span.text)
        if m and m.group(1) not in given:
            problems.append(f"{doc.at(span.line)}: `{span.text}` is no argument of Cairn's")
    return problems


def claims(doc: Doc) -> list[str]:
    problems = []
    tests_text = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("*.py"))
    requirements = "\n".join(p.read_text().lower() for p in (ROOT / "requirements").glob("*.txt"))
    for s in doc.sentences:
        if re.search(r"\ba test holds\b|\bheld by a test\b|\btests? holds? it\b", s.text):
            for n in re.findall(r"\b\d{1,3}(?:[,_]\d{3})+\b|\b\d{3,}\b", s.text):
                value = int(n.replace(",", "").replace("_", ""))
                forms = "|".join(map(re.escape, {str(value), f"{value:_}"}))
                if not re.search(rf"[<>]=?\s*(?:{forms})\b", tests_text):
                    problems.append(f"{doc.at(s.line)}: says a test holds {n}: none does")
        names = set(code.SETTING.findall(s.text))
        said = {
            t
            for word in re.findall(r"\bthe (\w+) task\b", s.text)
            if word.lower() not in ("celery", "same", "one", "next", "first", "last")
            for t in code.tasks()
            if word[:5].lower() in t.rsplit(".", 1)[-1]
        } | {t for t in code.tasks() if f"`{t}`" in s.text}
        for name in names:
            if said and not any(name in code.tasks()[t] for t in said):
                readers = [t for t, reads in code.tasks().items() if name in reads]
                problems.append(
                    f"{doc.at(s.line)}: ties {name} to {sorted(said)}, which do not read it"
                    + (f" ({', '.join(readers)} does)" if readers else "")
                )
    # The version a guide says Cairn is (or shows an answer naming) is pyproject.toml's.
    said = re.compile(r"(?:[Vv]ersion\W{0,4}|Cairn |\"version\": \"|checkout v)(\d+\.\d+\.\d+)\b")
    for m in said.finditer(doc.text):
        if m.group(1) != VERSION:
            line = doc.text.count("\n", 0, m.start()) + 1
            problems.append(f"{doc.at(line)}: says {m.group(0)!r}; this is Cairn {VERSION}")
    for m in CHECKERS.finditer(doc.text):
        if m.group(1) not in requirements:
            line = doc.text.count("\n", 0, m.start()) + 1
            problems.append(
                f"{doc.at(line)}: names {m.group(1)}, which requirements/ does not install"
            )
    return problems


def quotes(doc: Doc) -> list[str]:
    """A quoted line (`> …`) is an answer the code gives: each piece between `…` is written in
    Cairn's source or the MCP SDK's (which answers /mcp before Cairn does)."""
    problems, said = [], code.said()
    for number, line in enumerate(doc.prose.splitlines(), 1):
        if not line.startswith("> "):
            continue
        for piece in line[2:].split("…"):
            if len(piece.strip()) >= 6 and piece.strip() not in said:
                problems.append(f"{doc.at(number)}: quotes {piece.strip()!r}, which no code says")
    return problems


CHECKS = [python_names, paths, commands, settings, urls, mcp, claims, quotes]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_the_guides_name_only_what_exists(check):
    problems = [p for doc in docs() for p in check(doc)]
    assert not problems, (
        f"{len(problems)} line(s) of the guides name what the code does not have "
        f"({check.__name__}):\n  " + "\n  ".join(problems)
    )


# Lines that had drifted when this test was written (issue 47): put back, each must be caught.
DRIFTED = {
    "tools/list budget": (
        "docs/agents/mcp.md",
        "The whole `tools/list` stays within 16,000 characters (a test holds it).",
    ),
    "search_entries' old signature": (
        "docs/people/search.md",
        "Every surface calls one selector,\n`knowledge.search.search_entries(actor, query, *, "
        "project, subtopic, kinds, tags,\ntags_all, status, after, before, limit, mode, "
        "include_history, include_transcripts)`, which returns hits.",
    ),
    "entry_history/entry_diff's arguments": (
        "docs/concepts/history.md",
        "Agents get the same list from\n`history.selectors.entry_history(actor, ref)` and "
        "`entry_diff(actor, ref, from_version=…)`,\nwhich the MCP `history` tool calls.",
    ),
    "the word statistics' task": (
        "docs/operators/search.md",
        "- **Word statistics** (how many entries contain each word, for the idf) live in\n"
        "  `knowledge_lexemestat`; the embedding task recounts them at most every\n"
        "  `CAIRN_SEARCH_STATS_MAX_AGE` seconds and `reindex` recounts them at the end.",
    ),
    "a tool module that does not exist": (
        "docs/developers/style.md",
        "```python\n# mcp_api/tools/update.py: one argument model and one handler\n"
        "class UpdateArguments(ToolArguments):\n    id: EntryRef\n```\n",
    ),
    "a checker that does not run": (
        "docs/developers/style.md",
        "ruff (check + format, line length 100), mypy with django-stubs where it pays.",
    ),
    "project_update's old keyword": (
        "docs/concepts/note-types.md",
        'or in code with\n`project_update(actor=…, project="acme", schema_mode="strict")`.',
    ),
}


@pytest.mark.parametrize("name", DRIFTED)
def test_a_line_that_drifted_before_is_caught(name):
    path, text = DRIFTED[name]
    found = [p for check in CHECKS for p in check(Doc(path, text))]
    assert found, f"{name}: put back into {path}, nothing caught it"


# Made-up lines, one or more per check, that name what the code does not have: each must fail.
MADE_UP = [
    "Run `manage.py mirrors status`.",
    "Run `manage.py mirror statuses`.",
    "```sh\npython manage.py reindex --text-only | --embeddings-onl\n```\n",
    "Use `--no-such-flag`.",
    "`make test TEST_WORKER=0`",
    "`CAIRN_NO_SUCH` is nice.",
    "`CAIRN_EMBED_BATCH` (9) per call.",
    "`DELETE /api/v1/search`",
    "`GET /api/v1/search?qq=1`",
    '`PATCH /api/v1/projects/acme {"schema_moda": "strict"}`',
    "`/e/<id>/difff/`",
    "`/search/?qqq=…`",
    "There is no `search` tool.",
    "`nosucharg=true`",
    "`knowledge.services.nosuch`",
    "`NoSuchClass`",
    '```text\nupsert(project="p", titel="T", body="…")\n```\n',
    'The answer is `{"status": "ok", "version": "0.0.1"}`.',
    "> A message no code of Cairn's writes",
]


@pytest.mark.parametrize("text", MADE_UP)
def test_a_line_made_up_to_fail_is_caught(text):
    assert [p for check in CHECKS for p in check(Doc("docs/made-up.md", text))]
