import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")

app = Celery("cairn")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def _yield_to_the_web(**kwargs) -> None:
    """Background work (embedding, the mirror) runs at a lower CPU priority than the web
    processes on the same machine: an agent waiting for its answer comes first, and the worker
    takes whatever CPU is left (bench/agents_mix.py). Set before the pool forks, so every
    process of the worker has it; CAIRN_WORKER_NICE=0 turns it off."""
    from django.conf import settings

    if settings.CAIRN_WORKER_NICE > 0:
        os.nice(settings.CAIRN_WORKER_NICE)
