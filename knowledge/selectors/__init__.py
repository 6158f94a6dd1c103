"""Every read, scoped by the actor. Selectors never write.

`visible_projects` (knowledge/access.py) is the one place that decides what an actor may see;
every other selector (and search) starts from it, so access rules change there and nowhere else.
This package's modules split the reads by what they read; the common ones are re-exported here.
"""

from knowledge.access import (
    MAINTAIN_ROLES,
    WRITE_ROLES,
    maintained_projects,
    project_maintainers,
    project_role,
    signed_in,
    visible_entries,
    visible_projects,
    visible_projects_sql,
    writable_projects,
)
from knowledge.selectors.entries import (
    MEMORY_SCHEME,
    entry_get,
    entry_lookup,
    entry_not_found,
    entry_ref_filter,
    sources_check,
    strip_memory_scheme,
)
from knowledge.selectors.projects import (
    project_get,
    project_id_get,
    project_overview,
    project_ref_filter,
    project_refusal,
    project_summary,
    resolve_project,
    subtopic_tree,
)
from knowledge.selectors.revisions import entry_revision, entry_revisions, revisions_of

__all__ = [
    "MAINTAIN_ROLES",
    "MEMORY_SCHEME",
    "WRITE_ROLES",
    "entry_get",
    "entry_lookup",
    "entry_not_found",
    "entry_ref_filter",
    "entry_revision",
    "entry_revisions",
    "maintained_projects",
    "project_get",
    "project_id_get",
    "project_maintainers",
    "project_overview",
    "project_ref_filter",
    "project_refusal",
    "project_role",
    "project_summary",
    "resolve_project",
    "revisions_of",
    "signed_in",
    "sources_check",
    "strip_memory_scheme",
    "subtopic_tree",
    "visible_entries",
    "visible_projects",
    "visible_projects_sql",
    "writable_projects",
]
