#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")
    if sys.argv[1:] == ["--version"]:
        # Cairn's version, not only Django's (which `manage.py version` still prints).
        import platform

        import django

        from ops.version import VERSION

        print(
            f"Cairn {VERSION} (Django {django.get_version()}, Python {platform.python_version()})"
        )
        return
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
