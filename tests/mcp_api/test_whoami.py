"""whoami over the real MCP client: who the caller is, its token, its projects and roles; a
refusal names whom to ask."""

import pytest

from knowledge.models import Membership, Role
from ops.version import VERSION
from tests.factories import ProjectFactory, UserFactory
from tests.mcp_api.conftest import text

pytestmark = pytest.mark.usefixtures("acme")


def _ok(res):
    assert not res.is_error, text(res)
    return res


def test_whoami_names_the_user_agent_token_and_projects_with_roles(call, owner):
    other = ProjectFactory(slug="beta", name="Beta", sensitivity="internal")
    boss = UserFactory(username="bea")
    Membership.objects.create(project=other, user=boss, role=Role.MAINTAINER)
    res = _ok(call("whoami"))
    me = res.structured_content
    assert me["user"] == "owner"
    assert me["agent"] == "agent:pytest"
    assert me["token"]["scope"] == "write"
    roles = {p["slug"]: p["role"] for p in me["projects"]}
    assert roles == {"acme": "maintainer", "beta": "viewer"}
    assert "beta (Beta, internal): viewer; to write, ask bea, factory" in text(res)
    assert "You are owner, writing as agent:pytest (token 'test', scope write" in text(res)
    assert f"This is Cairn {VERSION}." in text(res) and me["version"] == VERSION

    refused = call("upsert", project="beta", title="T", body="x")
    assert refused.is_error
    assert "Ask one of its maintainers: bea, factory." in text(refused)
