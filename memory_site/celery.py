import contextlib
import os
from pathlib import Path

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
        _lower_own_autogroup(settings.CAIRN_WORKER_NICE)


def _lower_own_autogroup(nice: int) -> None:
    """Linux shares the CPU between sessions first ("autogroups") and only then by nice inside
    each one. `serve` starts the worker in a session of its own, so its nice alone ordered it
    against nothing: the worker took a full share beside the web processes and PostgreSQL (a
    quarter of the CPU during bench/shared_log.py). Lower the session's group too, but only
    when the worker leads it: the group then holds nothing else (an operator's shell, say)."""
    autogroup = Path("/proc/self/autogroup")
    if os.getsid(0) != os.getpid() or not autogroup.exists():
        return
    # Raising a nice needs no privilege; a refusal (/proc read-only, say) leaves the nice above.
    with contextlib.suppress(OSError):
        autogroup.write_text(str(nice))
