"""The extra columns every history row carries (django-simple-history `bases`)."""

from __future__ import annotations

from django.db import models


class RevisionBase(models.Model):
    """Extra columns on each history row (django-simple-history `bases`): the git mirror
    fills in the commit that holds it."""

    git_commit = models.CharField(max_length=40, blank=True, default="", db_index=True)

    class Meta:
        abstract = True


class EntryRevisionBase(RevisionBase):
    """An entry's history row also keeps, on a delete row only, the sources linked then
    ({kind, external_id}): the delete removes the links with the entry, an undelete relinks."""

    sources = models.JSONField(null=True, blank=True, editable=False)

    class Meta:
        abstract = True
