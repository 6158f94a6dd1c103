"""The write kernel: the steps every write takes, shared by the public services.

Private package, public names: only `knowledge.services` modules import it. No step opens a
transaction of its own (the public service's durable one holds them all) or calls a public
service. An entry write is: `lock_entry` (one lookup, one row lock) → `check_version` →
`apply_changes` / `place_entry` → `save_entry` (validate, stamp, save the revision with who and
why, refresh the full-text data and the graph, queue the background work on commit).
"""

from knowledge.services._kernel.checks import (
    check_body_size,
    check_limits,
    check_status,
    clean,
    normalize_kind,
    normalize_tags,
    normalize_title,
    record,
    require_write,
)
from knowledge.services._kernel.entries import (
    HIDDEN_SENSITIVITIES,
    NOT_SEARCHABLE_KINDS,
    TEXT_FIELDS,
    Saved,
    apply_changes,
    check_version,
    delete_entry,
    ensure_path,
    identity_taken,
    link_sources,
    new_entry,
    place_entry,
    save_entry,
    upsert_entry,
)
from knowledge.services._kernel.locks import lock_by_identity, lock_entry
from knowledge.services._kernel.memberships import (
    MembershipChange,
    check_role,
    keep_a_maintainer,
    principal,
    set_memberships,
)
from knowledge.services._kernel.projects import (
    LATER_SETTINGS,
    check_project_names,
    create_project,
    lock_project,
    project_taken,
    require_create_project,
    schema_library_for,
    update_project,
)
from knowledge.services._kernel.runs import new_run_id
from knowledge.services._kernel.text import index_text, text_vector
from knowledge.services._kernel.undelete import lock_delete_row, place_of, restore_deleted

__all__ = [
    "HIDDEN_SENSITIVITIES",
    "LATER_SETTINGS",
    "NOT_SEARCHABLE_KINDS",
    "TEXT_FIELDS",
    "MembershipChange",
    "Saved",
    "apply_changes",
    "check_body_size",
    "check_limits",
    "check_project_names",
    "check_role",
    "check_status",
    "check_version",
    "clean",
    "create_project",
    "delete_entry",
    "ensure_path",
    "identity_taken",
    "index_text",
    "keep_a_maintainer",
    "link_sources",
    "lock_by_identity",
    "lock_delete_row",
    "lock_entry",
    "lock_project",
    "new_entry",
    "new_run_id",
    "normalize_kind",
    "normalize_tags",
    "normalize_title",
    "place_entry",
    "place_of",
    "principal",
    "project_taken",
    "record",
    "require_create_project",
    "require_write",
    "restore_deleted",
    "save_entry",
    "schema_library_for",
    "set_memberships",
    "text_vector",
    "update_project",
    "upsert_entry",
]
