from django.apps import AppConfig


class OpsConfig(AppConfig):
    """Timings, metrics and logs as an app: the OperationTiming model, its admin page and the
    Celery hooks that time background tasks."""

    name = "ops"
    label = "ops"
    verbose_name = "Cairn operations"

    def ready(self) -> None:
        from ops import tasks  # noqa: F401  (connects the Celery signals)
