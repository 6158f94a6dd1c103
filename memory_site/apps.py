from django.apps import AppConfig


class SiteConfig(AppConfig):
    """The site itself as an app: its own commands (serve, embedded, createadmin, metrics,
    search), the operation timings, and the Celery hooks that time background tasks."""

    name = "memory_site"
    label = "site"
    verbose_name = "Cairn site"

    def ready(self) -> None:
        from memory_site.ops import tasks  # noqa: F401  (connects the Celery signals)
