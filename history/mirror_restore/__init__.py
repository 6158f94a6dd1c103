"""`manage.py mirror restore`: rebuild an empty database from the git mirror alone.

- plan.py: what a restore would do, said before it does it (the mirror is only as trustworthy
  as whoever can push to it);
- restoring.py: reading the mirror's manifest and revisions into records, then applying them
  through knowledge.services.memory_restore.

Not the backup's restore (memory_site.backup), which brings back a whole snapshot.
"""

from history.mirror_restore.plan import RestorePlan
from history.mirror_restore.restoring import (
    RestoreError,
    apply,
    mirror_restore,
    open_source,
    plan_lines,
    prepared,
    read_projects,
    revisions,
)

__all__ = [
    "RestoreError", "RestorePlan", "apply", "mirror_restore", "open_source", "plan_lines",
    "prepared", "read_projects", "revisions",
]  # fmt: skip
