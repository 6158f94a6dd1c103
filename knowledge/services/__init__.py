"""The only code that writes. Every surface (admin, REST, MCP, commands, tasks) calls these."""

from knowledge.services.entries import (
    UpsertResult,
    entry_delete,
    entry_move,
    entry_set_status,
    entry_update,
    entry_upsert,
)
from knowledge.services.memberships import membership_grant, membership_revoke
from knowledge.services.projects import project_create, project_update
from knowledge.services.subtopics import subtopic_ensure

__all__ = [
    "UpsertResult",
    "entry_delete",
    "entry_move",
    "entry_set_status",
    "entry_update",
    "entry_upsert",
    "membership_grant",
    "membership_revoke",
    "project_create",
    "project_update",
    "subtopic_ensure",
]
