from django.apps import AppConfig


class SiteConfig(AppConfig):
    """The site itself as an app: its own commands (serve, embedded, createadmin, metrics,
    search, backup, restore), and the hooks that hand ops what it must not import (the memory's
    size and state)."""

    name = "memory_site"
    label = "site"
    verbose_name = "Cairn site"

    def ready(self) -> None:
        from knowledge.errors import KnowledgeError
        from knowledge.selectors.health import entry_count
        from memory_site import health
        from ops import metrics, timing

        timing.refused_errors = (KnowledgeError,)
        timing.memory_size = entry_count
        metrics.state_gauges = health.state_gauges
