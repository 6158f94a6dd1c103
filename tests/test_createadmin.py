"""`createadmin` (and `serve`, through ensure_admin): the first superuser, including after a
`mirror restore` brought `admin` back as an inactive history author without a password."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from memory_site.management.commands.createadmin import ensure_admin

pytestmark = pytest.mark.django_db


def test_it_creates_the_first_superuser():
    password = ensure_admin()
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.is_active and admin.check_password(password)
    assert ensure_admin() is None  # once


def test_it_adopts_a_restored_author_without_a_password():
    restored = get_user_model()(username="admin", email="ops@example.org", is_active=False)
    restored.set_unusable_password()
    restored.save()
    password = ensure_admin()
    admin = get_user_model().objects.get(username="admin")
    assert admin.pk == restored.pk  # the same account: its history stays its own
    assert admin.is_active and admin.is_staff and admin.is_superuser
    assert admin.check_password(password) and admin.email == "ops@example.org"


def test_it_never_takes_over_someone_with_a_password(capsys):
    get_user_model().objects.create_user(username="admin", password="theirs", is_active=False)
    assert ensure_admin() is None
    with pytest.raises(CommandError, match="someone's account already"):
        call_command("createadmin")
    assert not get_user_model().objects.get(username="admin").is_superuser
