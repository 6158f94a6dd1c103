import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from memory_site.embedded import VAR_DIR, write_private

PASSWORD_FILE = VAR_DIR / "admin-password.txt"


def ensure_admin(username: str = "admin", email: str = "") -> str | None:
    """Create the first superuser with a generated password; return it, or None if one exists."""
    users = get_user_model()
    if users.objects.filter(is_superuser=True).exists():
        return None
    password = secrets.token_urlsafe(12)
    users.objects.create_superuser(username=username, email=email, password=password)
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
            if get_user_model().objects.filter(username=username).exists():
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
