"""Every pipeline a write or a read runs on a caller's text, and the shapes that have hurt one.

`prepare(pipeline, shape, n)` builds the input of size n (in the watchdog's child, so the test
process never holds it) and returns the call to time: tests/hardening/test_pipelines_linear.py
times it at n and 4n. A pipeline's call catches the refusal it is allowed to give (a clear
error is an answer); anything else it raises fails the measurement.
"""

from __future__ import annotations

from pathlib import Path

# --- shapes: text of about n units ---------------------------------------------------------

SHAPES = {
    "repeated_lines": lambda n: "the same line of text\n" * n,
    "long_line": lambda n: "word " * n,
    "long_word": lambda n: "x" * (5 * n),
    "space_runs": lambda n: "- [" + " " * (5 * n) + "x\n# a" + " \t" * n + "b#",
    # 300 levels deep, then again: the text grows linearly with n, and nests past every limit
    "nested_lists": lambda n: "".join("  " * (i % 300) + "- item\n" for i in range(n // 2)),
    "nested_quotes": lambda n: ">" * n + " deep\n",
    "nested_brackets": lambda n: "[" * n + "x" + "]" * n,
    "nested_emphasis": lambda n: "*_" * n + "x" + "_*" * n,
    "open_emphasis": lambda n: "**a " * n,
    "many_links": lambda n: "".join(f"see [[Target {i}]] and " for i in range(n // 4)),
    "open_links": lambda n: "[[" * n + "x",
    "many_observations": lambda n: "".join(
        f"- [cat{i % 50}] fact {i} #tag{i % 7} (ctx)\n" for i in range(n // 8)
    ),
    "unclosed_fence": lambda n: "```\n" + "`x` [[a]]\n" * n,
    "fence_pairs": lambda n: "```\n~~~\n" * n,
    "backtick_runs": lambda n: "x " + "`" * n + " " * n,
    "html_nesting": lambda n: "<div>" * (n // 4) + "x",
    "headings": lambda n: "".join(f"## Heading {i % 10}\ntext\n" for i in range(n // 4)),
    "table": lambda n: "|a|b|\n|-|-|\n" + "|x|y|\n" * n,
    "code_blocks": lambda n: "```python\nx = [1, 2, 3]\n```\n" * (n // 6),
    "hashes": lambda n: "#" * (5 * n) + " x",
    "parens": lambda n: "- [a] x " + "(" * n + ")" * n,
    "quotes": lambda n: '"' + '-"a" OR ' * n,
}


def shape_text(shape: str, n: int) -> str:
    return SHAPES[shape](n)


# --- YAML shapes (schemas, frontmatter, the manifest) ---------------------------------------


def yaml_aliases(levels: int) -> str:
    """The billion laughs: each level a list of nine aliases of the one before."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def enum_aliases(levels: int) -> str:
    """The billion laughs inside one enum: reading its values as text expands every level."""
    inner = ["&a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels + 1):
        inner.append(f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "status(enum): [" + ", ".join(inner) + "]\n"


YAML_SHAPES = {
    "aliases": lambda n: yaml_aliases(8),
    "enum_aliases": lambda n: enum_aliases(8),
    "deep_flow": lambda n: "k: " + "[" * n + "]" * n + "\n",
    "deep_block": lambda n: "k:\n" + "".join("  " * i + "- \n" for i in range(n // 10)),
    "many_keys": lambda n: "".join(f"key{i}: value {i}\n" for i in range(n)),
    "long_scalar": lambda n: "k: '" + "x" * (20 * n) + "'\n",
    # deep_flow and deep_block pass the depth bound at any useful n (safe_yaml stops reading
    # there): this nests as deep as it may, again and again, so the larger input is all read.
    "deep_flows": lambda n: "k: [" + ", ".join(["[" * 28 + "]" * 28] * (n // 60)) + "]\n",
}


def yaml_text(shape: str, n: int) -> str:
    return YAML_SHAPES[shape](n)


# --- pipelines: (shape, n) → the call to time -------------------------------------------------


def _refusals():
    import yaml

    from history.file_format import FrontmatterError
    from knowledge.errors import ValidationFailed
    from knowledge.note_types import SchemaError

    return (yaml.YAMLError, FrontmatterError, SchemaError, ValidationFailed, ValueError)


def _as_text(value) -> str:
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list | tuple):
        return "\n".join(map(_as_text, value))
    return value if isinstance(value, str) else ""


def _tolerant(fn, *args, text: str | None = None, judge=None, **kwargs):
    """The call of fn(*args, **kwargs), a refusal taken as an answer; its `text` is its input
    (the str and bytes arguments), for the linear reference pass; its `outcome()` says what the
    last call gave ("answered", judge(result) when given, or the refusal), so a test can tell
    an input that was processed from one a bound cut short."""
    refused = _refusals()
    last: dict = {}

    def call():
        try:
            last["result"] = fn(*args, **kwargs)
        except refused as error:
            last["result"] = error.with_traceback(None)  # not the frames and what they hold

    def outcome() -> str:
        result = last.get("result")
        if isinstance(result, Exception):
            return f"refused: {type(result).__name__}: {str(result)[:80]}"
        return judge(result) if judge else "answered"

    call.text = (
        text if text is not None else "\n".join(_as_text(a) for a in (*args, *kwargs.values()))
    )
    call.outcome = outcome
    return call


def graph_parse(shape, n):
    from knowledge.graph.parsing import parse

    return _tolerant(parse, shape_text(shape, n))


def render(shape, n):
    from knowledge.rendering import TOO_LARGE_NOTE, render_page_markdown, too_large

    text = shape_text(shape, n)

    def judge(html: str) -> str:
        if TOO_LARGE_NOTE not in html[:200]:
            cut = '<div class="highlight">' in html and "<pre><code>" in html
            return "rendered, highlighting cut" if cut else "rendered"
        return "plain text: too large" if too_large(text) else "plain text: too deep"

    return _tolerant(render_page_markdown, text, judge=judge)


def _rewritten(shape, n) -> tuple[str, str]:
    """(old, new): the shape, and the shape with every line changed (a body replaced by another
    of the same shape, the worst case for a diff)."""
    old = shape_text(shape, n)
    return old, "\n".join(line[::-1] + "!" for line in old.split("\n"))


def body_change(shape, n):
    from knowledge.reads.write_reports import body_change as fn

    return _tolerant(fn, *_rewritten(shape, n))


def heading_above(shape, n):
    from knowledge.reads.write_reports import heading_above as fn

    old = shape_text(shape, n)
    return _tolerant(fn, old + "\n## new\n", old)


def report_top(shape, n):
    """An append's report lists its facts from the body's top (the graph step's
    shown_from_the_top), parsing more of it until it holds enough: a fact and a link at the
    shape's end make it read all of it, the worst case."""
    from knowledge.graph.parsing import parse
    from knowledge.services._kernel.graph import shown_from_the_top as fn

    body = shape_text(shape, n) + "\n\n- [note] the last fact\n- see [[The last]]\n"
    whole = parse(body)
    old = {(o.category, o.content, tuple(o.tags), o.context) for o in whole.observations}
    relations = {(r.type, r.target.lower()) for r in whole.relations}
    return _tolerant(
        fn, body, 20, old=old, new={}, relations=relations, targets={}, links={}, text=body
    )


def line_diff(shape, n):
    from knowledge.diffs import line_opcodes

    old, new = _rewritten(shape, n)
    return _tolerant(line_opcodes, old.split("\n"), new.split("\n"))


def unified_diff(shape, n):
    from history.selectors import unified_diff as fn

    return _tolerant(fn, *_rewritten(shape, n), old_label="a", new_label="b")


def side_by_side(shape, n):
    from history.selectors import side_by_side_html

    return _tolerant(side_by_side_html, *_rewritten(shape, n), old_label="a", new_label="b")


def schema_read(shape, n):
    from knowledge.note_types import read_schema

    body = f"```yaml\n{yaml_text(shape, n)}```\n"
    return _tolerant(read_schema, title="t", metadata=None, body=body)


_SCHEMA = "```yaml\nname: string\nrole?: string\nstatus?(enum): [a, b]\nworks_at?: Org\n```\n"


def schema_validate(shape, n):
    from knowledge.note_types import Facts, read_schema, validate

    schema = read_schema(title="t", metadata=None, body=_SCHEMA)
    text = shape_text(shape, n)
    return _tolerant(
        lambda: validate(schema, Facts.of(body=text, metadata={"role": "x"})), text=text
    )


def schema_infer(shape, n):
    from knowledge.note_types import Facts, infer

    text = shape_text(shape, n)
    return _tolerant(
        lambda: infer("t", [Facts.of(body=text), Facts.of(body=text[::-1])]), text=text * 2
    )


def _frontmatter(shape, n) -> str:
    return f"---\n{yaml_text(shape, n)}---\nbody\n"


def mirror_parse(shape, n):
    from history.file_format import parse_markdown

    return _tolerant(parse_markdown, _frontmatter(shape, n).encode())


def mirror_with_key(shape, n):
    from history.file_format import with_key

    return _tolerant(with_key, _frontmatter(shape, n).encode(), "title", "x")


def manifest_parse(shape, n):
    from history.mirror.manifest import parse_manifest

    return _tolerant(parse_manifest, yaml_text(shape, n).encode())


def safe_yaml(shape, n):
    from knowledge.safe_yaml import load_yaml

    return _tolerant(load_yaml, yaml_text(shape, n))


def import_record(shape, n):
    from history.file_format import parse_markdown
    from history.importing import record_from

    raw = f"---\ntitle: ''\ntags: {shape_text('long_line', n // 10).strip()!r}\n---\n"
    raw += shape_text(shape, n)

    def call():
        front, body = parse_markdown(raw)
        record_from(front, body, Path("p/note.md"))

    return _tolerant(call, text=raw)


def _every_other(text: str, mark: str, odd: bool) -> str:
    return "\n".join(
        line + mark if i % 2 == odd else line for i, line in enumerate(text.split("\n"))
    )


def merge(shape, n):
    """A stale write whose changes sit between theirs, line after line: all of them merge."""
    from knowledge.merges import merge as fn

    base = shape_text(shape, n)
    return _tolerant(fn, base, _every_other(base, "!", False), _every_other(base, "?", True))


def merge_clash(shape, n):
    """Both sides changed every line: every line is a clash."""
    from knowledge.merges import merge as fn

    base = shape_text(shape, n)
    theirs, mine = (base.replace("\n", mark + "\n") + mark for mark in ("!", "?"))
    return _tolerant(fn, base, theirs, mine)


def search_query(shape, n):
    from knowledge.search.query import parse

    return _tolerant(parse, shape_text(shape, n))


def snippet(shape, n):
    from knowledge.search.snippets import highlight

    words = ["word", "line", "text", "fact", "target", "x", "item"]
    return _tolerant(highlight, shape_text(shape, n), words)


def second_stage(shape, n):
    from knowledge.search import second_stage as stage

    text = shape_text(shape, n)

    def call():
        found = stage.Candidate(similarities=(0.9,), lexemes=frozenset({"'x'"}), body=text)
        stage.features("which " + text, [(1, 1.0)], {1: 1.0}, {"'x'": 1.0}, {1: found})
        return stage.date_used(text, text, "2026-01-01")

    return _tolerant(call, text=text)


def chunking(shape, n):
    from knowledge.search.chunking import chunk_text

    return _tolerant(chunk_text, shape_text(shape, n))


def edit_section(shape, n):
    from knowledge.services.entries_edit import apply_edit

    body = shape_text(shape, n) + "\n## Last\nend\n"
    return _tolerant(apply_edit, body, operation="replace_section", section="Last", content="x")


def headings(shape, n):
    from knowledge.markdown import first_h1

    return _tolerant(first_h1, shape_text(shape, n))


def inputs(shape, n):
    from knowledge.inputs import str_list, when

    text = shape_text(shape, n)

    def call():
        str_list(text)
        str_list("[" + text)
        when(text)

    return _tolerant(call, text=text * 2)


# What each pipeline above runs, as "module.function": the functions the fuzz covers, which
# tests/hardening/test_pipelines_discovered.py holds against the functions that take text.
COVERS = {
    "graph_parse": ["knowledge.graph.parsing.parse"],
    "render": ["knowledge.rendering.render_page_markdown"],
    "body_change": ["knowledge.reads.write_reports.body_change"],
    "heading_above": ["knowledge.reads.write_reports.heading_above"],
    "report_top": ["knowledge.services._kernel.graph.shown_from_the_top"],
    "line_diff": ["knowledge.diffs.line_opcodes", "knowledge.diffs.changed_line_count"],
    "unified_diff": [
        "history.selectors.unified_diff",
        "knowledge.diffs.unified_diff",
        "knowledge.diffs.grouped_opcodes",
    ],
    "side_by_side": ["history.selectors.side_by_side_html"],
    "schema_read": [
        "knowledge.note_types.picoschema.read_schema",
        "knowledge.note_types.picoschema.yaml_block",
        "knowledge.note_types.picoschema.parse_fields",
        "knowledge.note_types.picoschema.parse_field",
        "knowledge.note_types.picoschema.parse_key",
    ],
    "schema_validate": ["knowledge.note_types.validation.validate"],
    "schema_infer": ["knowledge.note_types.inference.infer"],
    "mirror_parse": ["history.file_format.parse_markdown"],
    "mirror_with_key": ["history.file_format.with_key"],
    "manifest_parse": ["history.mirror.manifest.parse_manifest"],
    "safe_yaml": ["knowledge.safe_yaml.load_yaml"],
    "import_record": ["history.importing.record_from"],
    "merge": [
        "knowledge.merges.merge",
        "knowledge.merges.changes",
        "knowledge.merges.clashes",
        "knowledge.merges.touches",
    ],
    "merge_clash": ["knowledge.merges.merge"],
    "search_query": ["knowledge.search.query.parse"],
    "snippet": ["knowledge.search.snippets.highlight"],
    "second_stage": [
        "knowledge.search.second_stage.features",
        "knowledge.search.second_stage.is_when",
        "knowledge.search.second_stage.dated",
        "knowledge.search.second_stage.date_used",
    ],
    "chunking": ["knowledge.search.chunking.chunk_text"],
    "edit_section": ["knowledge.services.entries_edit.apply_edit"],
    "headings": ["knowledge.markdown.first_h1"],
    "inputs": ["knowledge.inputs.str_list", "knowledge.inputs.when"],
}


# --- the test's own checks: a pipeline that must fail it ------------------------------------


def capped(shape, n):
    """A linear pass over at most the first 20,000 characters: a bound that cuts the larger
    input short, which the test must notice (its time does not grow)."""
    from tests.watchdog import linear_pass

    text = shape_text(shape, n)
    return _tolerant(lambda: linear_pass(text[:20_000]), text=text)


def quadratic(shape, n):
    """Each line compared with every line before it: n² work, which the test must fail."""
    lines = shape_text(shape, n).split("\n")

    def call():
        return sum(lines[:i].count(line) for i, line in enumerate(lines))

    return _tolerant(call, text="\n".join(lines))


def prepare(pipeline: str, shape: str, n: int):
    return globals()[pipeline](shape, n)
