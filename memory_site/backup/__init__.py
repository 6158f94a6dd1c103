"""`manage.py backup` and `manage.py restore`: a snapshot of a whole installation (database dump,
mirror bundle, manifest) and bringing one back. Not the mirror's restore
(history.mirror_restore), which rebuilds the database from the git mirror alone.

- create.py: the snapshot (`backup`);
- restore.py: bringing it back (`backup_restore`), proven in a new database first;
- since.py: what the database that was here holds that the snapshot lacks (revisions, access
  taken away since), compared before the swap;
- database_swap.py: the new database beside the live one, and the swap.
"""

from memory_site.backup.create import BackupError, backup
from memory_site.backup.restore import RestoreResult, backup_restore, reopen_database

__all__ = ["BackupError", "RestoreResult", "backup", "backup_restore", "reopen_database"]
