"""Accounts by name, for the commands: whom a token or a membership is for, and who acts.
Lookups of accounts, not reads of the memory, so they take no actor."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from knowledge.errors import NotFound, ValidationFailed


def user_by_name(username: str):
    """The user with this username, active or not."""
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NotFound(
            f"No user {username!r}. Users appear after their first sign-in "
            "(or manage.py createsuperuser)."
        )
    return user


def first_superuser():
    """The oldest active superuser, or None: whom an operator's command acts as by default."""
    users = get_user_model().objects.filter(is_superuser=True, is_active=True)
    return users.order_by("pk").first()


def principal_named(name: str) -> tuple[object | None, Group | None]:
    """Resolve `user:NAME`, `group:NAME` or a bare username / email / group name."""
    kind, sep, rest = name.partition(":")
    if sep and kind in ("user", "group"):
        name = rest
    else:
        kind = ""
    User = get_user_model()
    user = None
    if kind in ("", "user"):
        user = (
            User.objects.filter(username=name).first()
            or User.objects.filter(email__iexact=name).first()
        )
    group = Group.objects.filter(name=name).first() if kind in ("", "group") else None
    if user is not None and group is not None:
        raise ValidationFailed(
            f"{name!r} is both a user and a group; write user:{name} or group:{name}."
        )
    if user is None and group is None:
        what = {"user": "user", "group": "group"}.get(kind, "user or group")
        raise NotFound(
            f"No {what} {name!r}. Users appear after their first sign-in (or createsuperuser); "
            "groups come from the identity provider's groups claim or the admin."
        )
    return user, group
