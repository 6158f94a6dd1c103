from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    verbose_name = "Knowledge"

    def ready(self) -> None:
        from knowledge.db import lookups

        lookups.register()
