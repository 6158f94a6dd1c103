from django.apps import AppConfig


class SiteConfig(AppConfig):
    """The site itself as an app, so its own commands (serve, embedded, createadmin) load."""

    name = "memory_site"
    label = "site"
    verbose_name = "Cairn site"
