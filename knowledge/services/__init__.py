"""The only code that writes. Every surface (admin, REST, MCP, web, commands, tasks) calls these.

Each public service opens one durable transaction and composes the steps in `_kernel`; none
calls another.
"""

from knowledge.services._kernel.oauth import IssuedTokens, TokenRefusal
from knowledge.services.embeddings import (
    entries_embed,
    entries_reindex_text,
    entry_embed,
    lexeme_stats_refresh,
)
from knowledge.services.entries import (
    entry_create,
    entry_delete,
    entry_move,
    entry_revert,
    entry_set_status,
    entry_update,
    entry_upsert,
)
from knowledge.services.entries_edit import (
    EDIT_OPERATIONS,
    apply_edit,
    entry_correct,
    entry_edit,
    entry_verify,
)
from knowledge.services.entries_tags import entry_retag
from knowledge.services.entries_undelete import entry_undelete
from knowledge.services.fields import EntryFields, ProjectFields
from knowledge.services.graph import entries_reindex_graph
from knowledge.services.imports import ImportItem, ImportOutcome, entries_import
from knowledge.services.memberships import (
    MembershipChange,
    membership_grant,
    membership_revoke,
    project_memberships_set,
)
from knowledge.services.mirror_restore import (
    RestoredRevision,
    RestoreReport,
    memory_restore,
)
from knowledge.services.oauth_clients import (
    ClientRegistration,
    SweepReport,
    oauth_client_document_save,
    oauth_client_register,
    oauth_client_revoke,
    oauth_clients_sweep,
)
from knowledge.services.oauth_grants import (
    oauth_client_disconnect,
    oauth_code_exchange,
    oauth_consent,
    oauth_grant_revoke,
    oauth_token_refresh,
    oauth_token_revoke,
)
from knowledge.services.projects import project_create, project_update
from knowledge.services.runs import UndoReport, run_undo
from knowledge.services.subtopics import subtopic_ensure
from knowledge.services.subtopics_move import subtopic_move
from knowledge.services.tokens import (
    CreatedToken,
    token_authenticate,
    token_create,
    token_revoke,
    token_update,
    user_access_revoke,
)
from knowledge.write_result import WriteResult

__all__ = [
    "EDIT_OPERATIONS",
    "ClientRegistration",
    "CreatedToken",
    "EntryFields",
    "ImportItem",
    "ImportOutcome",
    "IssuedTokens",
    "MembershipChange",
    "ProjectFields",
    "RestoreReport",
    "RestoredRevision",
    "SweepReport",
    "TokenRefusal",
    "UndoReport",
    "WriteResult",
    "apply_edit",
    "entries_embed",
    "entries_import",
    "entries_reindex_graph",
    "entries_reindex_text",
    "entry_correct",
    "entry_create",
    "entry_delete",
    "entry_edit",
    "entry_embed",
    "entry_move",
    "entry_retag",
    "entry_revert",
    "entry_set_status",
    "entry_undelete",
    "entry_update",
    "entry_upsert",
    "entry_verify",
    "lexeme_stats_refresh",
    "membership_grant",
    "membership_revoke",
    "memory_restore",
    "oauth_client_disconnect",
    "oauth_client_document_save",
    "oauth_client_register",
    "oauth_client_revoke",
    "oauth_clients_sweep",
    "oauth_code_exchange",
    "oauth_consent",
    "oauth_grant_revoke",
    "oauth_token_refresh",
    "oauth_token_revoke",
    "project_create",
    "project_memberships_set",
    "project_update",
    "run_undo",
    "subtopic_ensure",
    "subtopic_move",
    "token_authenticate",
    "token_create",
    "token_revoke",
    "token_update",
    "user_access_revoke",
]
