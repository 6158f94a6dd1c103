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
    ({kind, external_id}): the delete removes the links with the entry, an undelete relinks.

    And which run it belongs to: the API token that wrote it (its id, kept as a plain number so
    the row outlives the token's revocation, deletion or a restore without it), the agent label
    it wrote under, and the run: the id a client marked its writes with, or one Cairn gave the
    token's writes that follow each other with no gap longer than CAIRN_RUN_GAP_MINUTES
    (knowledge/services/_kernel/runs.py). A person's own edits belong to no run."""

    sources = models.JSONField(null=True, blank=True, editable=False)
    history_token_id = models.PositiveBigIntegerField(null=True, blank=True, editable=False)
    history_agent = models.CharField(max_length=120, blank=True, default="", editable=False)
    history_run = models.CharField(max_length=80, blank=True, default="", editable=False)

    class Meta:
        abstract = True
