"""The fuzz finds the functions it must cover: a new pipeline on a caller's text cannot arrive
outside it (the three-way merge once did, and was quadratic).

A module that imports a text-processing library (re, difflib, yaml, cmark, nh3, Pygments) or one
of Cairn's own text primitives (diffs, merges, safe_yaml, markdown) takes text apart. Each of
its public functions is either run by a pipeline of the linear fuzz
(tests/hardening/pipelines.py COVERS) or of the parser fuzz (test_parsers_fuzz.TEXT_FUNCTIONS),
or is listed below with the reason it needs none. A function added to such a module, or a new
module that imports one of them, fails this test until it is fuzzed or explained.
"""

from __future__ import annotations

import ast

from tests.architecture.source import module_name, python_files, syntax_tree
from tests.hardening.pipelines import COVERS
from tests.hardening.test_parsers_fuzz import TEXT_FUNCTIONS

PRODUCT = ("knowledge", "history", "api", "mcp_api", "web", "memory_site", "ops")
TEXT_LIBRARIES = {"re", "difflib", "yaml", "cmarkgfm", "nh3", "pygments"}
TEXT_PRIMITIVES = {
    "knowledge.diffs",
    "knowledge.merges",
    "knowledge.safe_yaml",
    "knowledge.markdown",
}

# Modules whose text library serves their own fixed strings (SQL, names, versions), never a
# caller's text at a size the caller decides.
OWN_TEXT = {
    "knowledge.db.generation": "matches Cairn's own SQL statements against its table names",
    "knowledge.services._kernel.mirror_restore": "checks mirror ids and slugs of bounded fields",
    "history.mirror.git": "reads commit trailers Cairn wrote (one line each, bounded message)",
    "memory_site.backup.create": "reads pg_dump and git version strings",
    "memory_site.backup.restore": "reads a backup's manifest of counts and versions",
    "memory_site.oidc_config": "reads the operator's environment",
    "ops.logs": "makes request ids",
    "mcp_api.render": "formats answers from values the core bounded (titles, snippets)",
    "mcp_api.hints": "formats next moves from an error's bounded data",
    "web.templatetags.web": "formats bounded fields; bodies go through rendering (fuzzed)",
    "knowledge.admin.entry_form": "imports diffs for a bounded count; no public function",
}

# Public functions of the other text modules that need no fuzz, and why.
NOT_FUZZED = {
    "knowledge.search.second_stage.installed": "reads the package's weights file",
    "knowledge.search.second_stage.leads": "compares two scores",
    "knowledge.search.second_stage.reorder": "sorts scores",
    # no caller text, or text only as a key of a bounded field
    "history.file_format.entry_path": "joins safe_segment (fuzzed) of bounded fields",
    "history.file_format.alternate_path": "joins safe_segment (fuzzed) of bounded fields",
    "history.file_format.one_line_json": "json.dumps of bounded metadata",
    "history.file_format.iso_time": "formats a datetime",
    "history.file_format.parse_time": "fromisoformat of one frontmatter value",
    "history.file_format.entry_id_of": "reads one key of parsed frontmatter",
    "history.file_format.changed_lines": "line_opcodes (fuzzed) of two bodies",
    "history.importing.is_cairn": "looks up keys of parsed frontmatter",
    "history.importing.discover": "lists files of a folder",
    "history.importing.read_file": "size-checked read, then parse_markdown (fuzzed)",
    "history.importing.import_folder": "record_from (fuzzed) per file",
    "history.importing.report_json": "json.dumps of a report",
    "history.mirror.manifest.project_settings": "a project's fields",
    "history.mirror.manifest.manifest": "project rows to a dict",
    "history.mirror.manifest.render_manifest": "yaml.safe_dump of project settings",
    "history.mirror.manifest.sync_manifest": "render_manifest, then a git write",
    "history.mirror.manifest.manifest_current": "compares two rendered manifests",
    "history.mirror_restore.restoring.open_source": "opens a repository",
    "history.mirror_restore.restoring.read_projects": "parse_manifest (fuzzed)",
    "history.mirror_restore.restoring.revisions": "parse_markdown (fuzzed) per file",
    "history.mirror_restore.restoring.prepared": "checks parsed revisions",
    "history.mirror_restore.restoring.plan_lines": "formats counts",
    "history.mirror_restore.restoring.apply": "writes parsed revisions",
    "history.mirror_restore.restoring.mirror_restore": "plan, then apply",
    "history.selectors.revision_summary": "a revision's columns",
    "history.selectors.entry_history": "revision rows, capped",
    "history.selectors.correction_chain": "entry rows",
    "history.selectors.correction_diff": "unified_diff (fuzzed) of two bodies",
    "history.selectors.revision_text": "renders a revision file (bounded fields, a body)",
    "history.selectors.entry_diff": "unified_diff and side_by_side_html (fuzzed)",
    "history.selectors.mirror_state": "counts",
    "history.selectors.revision_count": "counts",
    "history.selectors.backlogs_by_day": "counts",
    "knowledge.admin.search.search_filters": "picks filters from bounded query parameters",
    "knowledge.graph.parsing.fence_after": "one _FENCE match (fuzzed in parse) a line",
    "knowledge.graph.parsing.added_lines": "startswith, endswith and fence_after: linear",
    "knowledge.graph.parsing.within_caps": "str.count and a line-anchored pattern with no overlap",
    "knowledge.graph.parsing.relation_type": "one relation's type, bounded by parse (fuzzed)",
    "knowledge.graph.parsing.split_link": "one link, bounded by parse (fuzzed)",
    "knowledge.graph.parsing.targets": "the links parse (fuzzed) finds",
    "knowledge.inputs.find_nul": "one str.find",
    "knowledge.inputs.url_schemes": "the allowed schemes from settings",
    "knowledge.inputs.url_scheme": "the scheme of one bounded URL",
    "knowledge.inputs.linkable_url": "one bounded URL",
    "knowledge.inputs.source_url": "one bounded URL",
    "knowledge.merges.find_replace": "one str.count; called for at most MAX_EDITS changes",
    "knowledge.note_types.picoschema.find_source": "one schema field's bounded source",
    "knowledge.note_types.picoschema.field_key": "one bounded field name",
    "knowledge.note_types.picoschema.to_text": "renders a parsed (bounded) schema",
    "knowledge.rendering.too_large": "len and one max over lines",
    "knowledge.rendering.render_markdown": "render_page_markdown (fuzzed) without a page",
    "knowledge.rendering.render_entry_body": "render_page_markdown (fuzzed) of a body",
    "knowledge.search.chunking.estimated_tokens": "len of a chunk",
    "knowledge.search.query.filter_expression": "SQL of a parsed (capped) query",
    "knowledge.search.query.check_query": "the query's caps: length first, then one scan",
    "knowledge.search.snippets.words_in": "lexemes_of (fuzzed) of one snippet",
    "knowledge.search.snippets.marked": "one bounded snippet",
    "knowledge.reads.conflicts.entry_conflict": "merge (fuzzed), diffs (fuzzed), capped rows",
    "knowledge.reads.conflicts.stale_write": "entry_conflict (above), then a flag read",
    "knowledge.selectors.entries.strip_memory_scheme": "one bounded reference",
    "knowledge.selectors.entries.entry_ref_filter": "one bounded reference",
    "knowledge.selectors.entries.entry_ref_parts": "one bounded reference",
    "knowledge.selectors.entries.entry_ref_q": "a condition of one bounded reference's parts",
    "knowledge.selectors.entries.entry_lookup": "one bounded reference",
    "knowledge.selectors.entries.entry_not_found": "close titles of one bounded reference",
    "knowledge.selectors.entries.entry_get": "one bounded reference",
    "knowledge.selectors.entries.sources_check": "bounded source fields",
    "knowledge.selectors.projects.project_ref_filter": "one bounded reference",
    "knowledge.selectors.projects.resolve_project": "one bounded reference",
    "knowledge.selectors.projects.project_id_get": "one bounded reference",
    "knowledge.selectors.projects.project_get": "one bounded reference",
    "knowledge.selectors.projects.project_refusal": "close slugs of one bounded reference",
    "knowledge.selectors.projects.subtopic_tree": "subtopic rows",
    "knowledge.selectors.projects.project_overview": "project rows",
    "knowledge.selectors.projects.project_summary": "project rows",
    "knowledge.reads.write_reports.fields_changed": "compares bounded fields",
    "knowledge.reads.write_reports.metadata_line": "formats bounded fields",
    "knowledge.reads.similar.similar_entries": "close titles of one bounded title",
    "knowledge.reads.similar.same_body_entries": "one hash lookup",
    "knowledge.reads.similar.kept_similar": "difflib over bounded titles; word sets",
    "knowledge.reads.similar.listed_same_body": "formats rows the lookup found",
    "knowledge.reads.write_reports.write_report": "body_change and heading_above (fuzzed)",
    "knowledge.services.entries_edit.entry_edit": "apply_edit (fuzzed) under a lock",
    "knowledge.services.entries_edit.entry_correct": "a write of bounded fields",
    "knowledge.services.entries_edit.entry_verify": "no text",
    # MCP authorization: sizes checked before the one anchored, linear pattern each applies
    "memory_site.oauth.registration.redirect_uri_problem": "length (1,000) checked, then one "
    "anchored scheme pattern",
    "memory_site.oauth.registration.check_registration": "count (10) before redirect_uri_problem; "
    "the body is at most 16 KB",
    "memory_site.oauth.documents.check_url": "urlsplit of an id refused past 255 characters",
    "memory_site.oauth.documents.address_allowed": "one resolved address",
    "memory_site.oauth.documents.public_address": "resolves one host name",
    "memory_site.oauth.documents.open_document": "reads at most 16 KB within 5 s",
    "memory_site.oauth.documents.parse_document": "json of at most 16 KB; max-age of one header",
    "memory_site.oauth.documents.document_client": "open_document and parse_document",
    "memory_site.oauth.views.authorize": "a fixed-length code_challenge pattern; state cut at "
    "1,000 characters",
    # runs and moves (issue 43): revisions' bodies go through merge and diffs (fuzzed), bounded
    "knowledge.reads.run_undo.plan_step": "merge (fuzzed) of three revisions of one entry",
    "knowledge.reads.run_undo.states": "revision rows, CHUNK entries at a time",
    "knowledge.reads.run_undo.title_taken": "one bounded title",
    "knowledge.reads.run_undo.undo_refusal": "project rows",
    "knowledge.reads.run_undo.touched_projects": "revision rows",
    "knowledge.reads.run_preview.run_preview": "plan_step and unified_diff (fuzzed), cut to "
    "MAX_DIFF_LINES lines of MAX_LINE_CHARS",
    "knowledge.runs.client_run": "one linear character class over one request header, kept to "
    "64 characters",
    "knowledge.runs.marked_by_client": "a prefix check",
    "knowledge.selectors.projects.may_leave": "a project row",
}


def _imports(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def text_functions() -> dict[str, list[str]]:
    """{module: its public functions} of every product module that takes text apart."""
    found: dict[str, list[str]] = {}
    for path in python_files(*(f"{package}/**/*.py" for package in PRODUCT)):
        tree = syntax_tree(path)
        imports = _imports(tree)
        libraries = {name.split(".")[0] for name in imports} & TEXT_LIBRARIES
        if not (libraries or imports & TEXT_PRIMITIVES):
            continue
        module = module_name(path)
        found[module] = [
            node.name
            for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and not node.name.startswith("_")
        ]
    return found


def covered() -> set[str]:
    return {name for names in COVERS.values() for name in names} | set(TEXT_FUNCTIONS)


def test_every_function_that_takes_text_apart_is_fuzzed_or_explained():
    modules = text_functions()
    assert "knowledge.merges" in modules  # the discovery sees the module that once escaped
    missing = [
        f"{module}.{name}"
        for module, names in sorted(modules.items())
        if module not in OWN_TEXT
        for name in names
        if f"{module}.{name}" not in covered() and f"{module}.{name}" not in NOT_FUZZED
    ]
    assert not missing, (
        "These functions take a caller's text apart and no fuzz runs them: add a pipeline to "
        "tests/hardening/pipelines.py (and its shapes to test_pipelines_linear.PIPELINES), or "
        "list them in NOT_FUZZED with the reason they need none:\n  " + "\n  ".join(missing)
    )


def test_the_lists_name_only_what_exists():
    """A pipeline that names a function that moved covers nothing: every name must resolve."""
    modules = text_functions()
    every = {f"{m}.{n}" for m, names in modules.items() for n in names}
    stale = sorted(
        name for name in {*NOT_FUZZED, *covered()} if name.rsplit(".", 1)[0] in modules
        and name not in every
    )  # fmt: skip
    stale += sorted(m for m in OWN_TEXT if m not in modules)
    assert not stale, f"Names in the fuzz's lists that are no text function: {stale}"
