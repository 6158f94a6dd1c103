"""The pytest plugin of every run `make mutants` makes (`-p tests.mutation.plugin`).

It narrows each run to the tests that judge the mutant under test (tests/mutation/scope.py:
its guarantee's tests, among those mutmut found reaching its function), or to every
guarantee's tests in the runs of no one mutant (mutmut's first runs, which name none).

mutmut tests mutants side by side, each in a process forked from one that loaded Django and the
tests, so what two runs could share is made each one's own: a test database
(test_cairn_mutants<N>, kept between runs as --reuse-db keeps test_cairn) and a temporary
directory, by the first slot whose lock is free. Tests that start a server outside the process
(the embedded broker) are left out, as tests/quick.py leaves out those that start processes:
two runs would share it.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from tests.mutation.scope import tests_for

SLOTS = 8  # mutmut's --max-children, and the processes that fork them, each hold one
_held: list = []  # this process's slot lock, held until it exits


def _slot(folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    for slot in range(SLOTS):
        lock = open(folder / f"slot-{slot}.lock", "w")  # noqa: SIM115 (held by the process)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            continue
        _held.append(lock)
        return slot
    raise RuntimeError(f"All {SLOTS} mutation slots in {folder} are taken; lower --max-children.")


def pytest_load_initial_conftests(early_config, parser, args):
    """mutmut's runs of no one mutant (its first ones) name no test: they get every guarantee's
    test files, so the whole suite is neither collected nor needed."""
    if not any(arg.startswith("tests/") for arg in args):
        args.extend(dict.fromkeys(test.split("::")[0] for test in tests_for(None)))


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    from django.conf import settings

    # mutmut runs the tests from its copy of the code (mutants/); the slots belong to the
    # checkout's var/, which the Makefile names.
    folder = Path(os.environ.get("CAIRN_LIVE_VAR_DIR") or "var").resolve() / "mutants"
    slot = _slot(folder)
    config.option.basetemp = str(folder / f"tmp-{slot}")
    for database in settings.DATABASES.values():  # the dicts Django's connections hold
        database.setdefault("TEST", {})["NAME"] = f"test_{database['NAME']}_mutants{slot}"


def _judging(item, tests: tuple[str, ...]) -> bool:
    return item.nodeid.startswith(tests) and "broker" not in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(config, items):
    under = os.environ.get("MUTANT_UNDER_TEST", "")
    tests = tests_for(under if "__mutmut_" in under else None)
    left = [item for item in items if not _judging(item, tests)]
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = [item for item in items if _judging(item, tests)]
