import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from memory_site.embedded import VAR_DIR, write_private

PASSWORD_FILE = VAR_DIR / "admin-password.txt"


def ensure_admin(username: str = "admin", email: str = "") -> str | None:
    """Create the first superuser with a generated password; return it, or None if one exists.

    After `mirror restore`, `username` may already exist as a history author: an inactive
    account without a password. That account becomes the superuser (its history stays its own);
    any other existing account of that name is never taken over."""
    users = get_user_model()
    if users.objects.filter(is_superuser=True, is_active=True).exists():
        return None
    password = secrets.token_urlsafe(12)
    existing = users.objects.filter(**{users.USERNAME_FIELD: username}).first()
    if existing is None:
        users.objects.create_superuser(username=username, email=email, password=password)
    elif not existing.is_active and not existing.has_usable_password():
        existing.is_active = existing.is_staff = existing.is_superuser = True
        existing.email = existing.email or email
        existing.set_password(password)
        existing.save()
    else:
        return None
    write_private(PASSWORD_FILE, f"username: {username}\npassword: {password}\n")
    return password


class Command(BaseCommand):
    help = (
        "Create the first superuser with a generated password (printed once and stored in "
        "var/admin-password.txt). Does nothing when a superuser already exists."
    )

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")
        parser.add_argument("--email", default="")

    def handle(self, *args, username, email, **options):
        password = ensure_admin(username, email)
        if password is None:
            users = get_user_model()
            if not users.objects.filter(is_superuser=True, is_active=True).exists():
                raise CommandError(
                    f"{username!r} is someone's account already and no active superuser exists. "
                    "Pass --username with a new name (or use `manage.py createsuperuser`)."
                )
            if users.objects.filter(username=username).exists():
                self.stdout.write(
                    f"A superuser already exists. Forgot the password? Run "
                    f"`python manage.py changepassword {username}`."
                )
                return
            raise CommandError(
                "A superuser already exists. Create more with `python manage.py createsuperuser`."
            )
        self.stdout.write(
            self.style.SUCCESS(f"Created superuser {username!r} with password: {password}")
        )
        self.stdout.write(f"(also saved to {PASSWORD_FILE}; change it in the admin)")
