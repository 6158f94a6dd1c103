"""Revision fields shared by every historical model (django-simple-history `bases`)."""

from django.db import models


class RevisionBase(models.Model):
    """Extra columns on each history row: the git mirror fills in the commit that holds it."""

    git_commit = models.CharField(max_length=40, blank=True, default="", db_index=True)

    class Meta:
        abstract = True
