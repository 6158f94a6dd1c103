from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    verbose_name = "Knowledge"

    def ready(self) -> None:
        from django.db import connections
        from django.db.backends.signals import connection_created

        from knowledge.db import generation, lookups

        lookups.register()
        # Every write that can change a search's answer retires the kept ones (generation.py).
        connection_created.connect(generation.install)
        for conn in connections.all(initialized_only=True):
            generation.install(conn)
