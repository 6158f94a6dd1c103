"""Cairn settings: everything comes from the environment (see .env.example).

With no DATABASE_URL / CELERY_BROKER_URL, Cairn runs on an embedded PostgreSQL (with pgvector)
and an embedded Valkey broker under var/; a team sets both to its own servers.

DJANGO_SETTINGS_MODULE stays `memory_site.settings`; the settings live by concern in the modules
below, each reading its own variables. Importing them starts no server (the embedded PostgreSQL
starts on the first connection).
"""

from memory_site.settings.access import *  # noqa: F403  sign-in (OIDC) and security headers
from memory_site.settings.admin import *  # noqa: F403  the admin's theme (unfold) and its CSP
from memory_site.settings.backends import *  # noqa: F403  database and broker: team or embedded
from memory_site.settings.base import *  # noqa: F403  Django, the secret key, TLS, static files
from memory_site.settings.cairn import *  # noqa: F403  search, the mirror, limits, rendering
from memory_site.settings.operations import *  # noqa: F403  metrics, timings, sweeps, logs
