"""schemathesis over the OpenAPI schema with a valid write token: no input may cause a 5xx.

Bounded (CAIRN_FUZZ_EXAMPLES per operation, default 10) so it runs in the normal test command.
"""

import os

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error

from knowledge.actors import Actor
from knowledge.services import EntryFields, entry_upsert

EXAMPLES = int(os.environ.get("CAIRN_FUZZ_EXAMPLES", "10"))


@pytest.fixture
def _keep_test_connection():
    # The WSGI app runs inside the test's transaction: like Django's test client, stop the
    # request signals from closing that connection.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def bearer(owner, acme, make_token, _keep_test_connection):
    entry_upsert(
        actor=Actor.for_user(owner),
        project="acme",
        fields=EntryFields(title="Seed", body="# A\n\ntext"),
    )
    return make_token(name="fuzz")


# Loading the schema serves /api/openapi.json once; it needs no database.
schema = schemathesis.openapi.from_wsgi("/api/openapi.json", get_wsgi_application())


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_no_input_causes_a_server_error(case, bearer):
    case.call_and_validate(
        headers={"Authorization": f"Bearer {bearer}"}, checks=[not_a_server_error]
    )
