"""The token -> actor cache: fewer reads per request, and a revoked token is refused at once,
in this process and in every other web process; a re-pointed or narrowed one has its new reach
on its next request."""

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.models import ApiToken
from knowledge.services import tokens
from knowledge.services.tokens import token_authenticate, token_create, token_revoke, token_update
from tests.factories import ProjectFactory

ROOT = Path(__file__).resolve().parents[2]

# Another web process: authenticates the secret once per line read from stdin.
OTHER_PROCESS = """
import os, sys
sys.path.insert(0, sys.argv[1])
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")
from django.conf import settings
settings.DATABASES["default"]["NAME"] = sys.argv[2]
import django
django.setup()
from knowledge.services import tokens
print("ready", flush=True)
for line in sys.stdin:
    actor = tokens.token_authenticate(sys.argv[3])
    print(("yes" if actor else "no") + f" cached={len(tokens._actors)}", flush=True)
"""


@pytest.mark.django_db
@pytest.mark.parametrize(
    "projects, seconds",
    [(None, 300), (["narrow"], 300), (None, 1)],
    ids=["every-project", "narrowed", "one-second-cache"],
)
def test_a_cached_actor_costs_one_primary_key_read(
    owner, settings, django_assert_num_queries, projects, seconds
):
    """A narrowed token's projects compare equal to its cached reach (not rebuilt on every
    request), and a cache of one second is a cache (only 0 turns it off)."""
    settings.CAIRN_TOKEN_CACHE_SECONDS = seconds
    ProjectFactory(slug="narrow")
    secret = token_create(actor=Actor.system(), user=owner, name="fast", projects=projects).secret
    first = token_authenticate(secret)  # builds the actor (and records last use)
    with django_assert_num_queries(1) as ctx:
        again = token_authenticate(secret)
    assert again is first
    assert "array_agg" not in ctx.captured_queries[0]["sql"].lower()


@pytest.mark.django_db
def test_revoked_expired_and_deactivated_are_refused_even_when_cached(owner, settings):
    def warm(name):
        created = token_create(actor=Actor.system(), user=owner, name=name)
        assert token_authenticate(created.secret) is not None
        return created

    a = warm("a")
    token_revoke(actor=Actor.for_user(owner), token_id=a.token.pk)
    assert token_authenticate(a.secret) is None
    assert tokens._cached_actor(ApiToken.hash_secret(a.secret)) is None  # forgotten, not kept
    b = warm("b")
    ApiToken.objects.filter(pk=b.token.pk).update(expires_at="2000-01-01T00:00:00Z")
    assert token_authenticate(b.secret) is None
    settings.CAIRN_TOKEN_MAX_DAYS = 30
    old = warm("old")
    ApiToken.objects.filter(pk=old.token.pk).update(
        created_at="2000-01-01T00:00:00Z", expires_at=None
    )
    assert token_authenticate(old.secret) is None  # older than the longest lifetime
    c = warm("c")
    owner.is_active = False
    owner.save()
    assert token_authenticate(c.secret) is None


@pytest.mark.django_db
def test_a_changed_label_or_superuser_flag_rebuilds_the_actor(owner):
    created = token_create(actor=Actor.system(), user=owner, name="t", agent_label="agent:a")
    assert token_authenticate(created.secret).agent == "agent:a"
    token_update(actor=Actor.for_user(owner), token_id=created.token.pk, name="t", agent_label="x")
    assert token_authenticate(created.secret).agent == "x"
    owner.is_superuser = not owner.is_superuser
    owner.save()
    assert token_authenticate(created.secret).user.is_superuser == owner.is_superuser


@pytest.mark.django_db
def test_the_cache_can_be_switched_off(owner, settings, django_assert_num_queries):
    settings.CAIRN_TOKEN_CACHE_SECONDS = 0
    secret = token_create(actor=Actor.system(), user=owner, name="off").secret
    token_authenticate(secret)
    with django_assert_num_queries(1) as ctx:
        token_authenticate(secret)
    assert "array_agg" in ctx.captured_queries[0]["sql"].lower()


@pytest.mark.django_db(transaction=True)
def test_a_token_revoked_here_is_refused_at_once_by_another_web_process(owner):
    created = token_create(actor=Actor.system(), user=owner, name="shared")
    other = subprocess.Popen(
        [
            sys.executable,
            "-c",
            OTHER_PROCESS,
            str(ROOT),
            connection.settings_dict["NAME"],
            created.secret,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert other.stdout.readline().strip() == "ready"

        def ask() -> str:
            other.stdin.write("auth\n")
            other.stdin.flush()
            return other.stdout.readline().strip()

        assert ask() == "yes cached=1"
        assert ask() == "yes cached=1"  # served from that process's cache
        token_revoke(actor=Actor.for_user(owner), token_id=created.token.pk)
        assert ask() == "no cached=0"  # the very next request, no waiting
    finally:
        other.stdin.close()
        other.wait(timeout=30)
    assert tokens.token_authenticate(created.secret) is None


@pytest.mark.django_db
def test_a_repointed_narrowed_token_loses_its_old_projects_on_the_next_request(owner):
    """A mirror restore re-points a narrowed token to the restored projects; a deleted project
    leaves it. The cached actor must not keep the old reach for its remaining minutes."""
    old, new = ProjectFactory(slug="old-place"), ProjectFactory(slug="new-place")
    created = token_create(actor=Actor.system(), user=owner, name="n", projects=["old-place"])
    assert token_authenticate(created.secret).project_ids == {old.pk}  # cached now
    created.token.projects.set([new])  # what the restore's re-pointing does
    assert token_authenticate(created.secret).project_ids == {new.pk}
    new.delete()
    assert token_authenticate(created.secret).project_ids == frozenset()  # nothing, not all
    ApiToken.objects.filter(pk=created.token.pk).update(scope="read")
    assert token_authenticate(created.secret).scopes == {"read"}


@pytest.mark.django_db
def test_a_cached_actor_answers_only_for_its_own_secret(owner):
    """Token ids are reused after a restore to an older snapshot: the cached actor of a secret
    whose row is gone must not pass the check of another token that took its id."""
    created = token_create(actor=Actor.system(), user=owner, name="first")
    assert token_authenticate(created.secret) is not None
    ApiToken.objects.filter(pk=created.token.pk).update(secret_hash="0" * 64)  # another's now
    assert token_authenticate(created.secret) is None


@pytest.mark.django_db
def test_a_cached_actor_still_records_its_last_use_once_a_minute(owner):
    created = token_create(actor=Actor.system(), user=owner, name="used")
    assert token_authenticate(created.secret) is not None  # cached now
    an_hour_ago = timezone.now() - timedelta(hours=1)
    ApiToken.objects.filter(pk=created.token.pk).update(last_used_at=an_hour_ago)
    assert token_authenticate(created.secret) is not None  # from the cache
    assert ApiToken.objects.get(pk=created.token.pk).last_used_at > an_hour_ago


@pytest.mark.django_db
def test_a_client_token_works_only_at_its_own_resource_cached_or_not(owner):
    """A token bound to one MCP resource (RFC 8707) is good there, on its first request and from
    the cache after it, and refused at any other endpoint either way."""
    mine, other = "https://cairn.test/mcp", "https://elsewhere.test/mcp"
    created = token_create(actor=Actor.system(), user=owner, name="client")
    ApiToken.objects.filter(pk=created.token.pk).update(resource=mine)
    assert token_authenticate(created.secret, resources=[other]) is None
    assert token_authenticate(created.secret, resources=[mine]) is not None  # built, cached
    assert token_authenticate(created.secret, resources=[mine]) is not None  # from the cache
    assert token_authenticate(created.secret, resources=[other]) is None
    assert token_authenticate(created.secret) is None
