"""The graph page a newcomer opens first, on the seeded demo: a connected graph whose labels a
person can read, with no node or label drawn over another."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect

from knowledge.models import Membership, Project, Role
from tests.factories import UserFactory
from tests.web.browser import PASSWORD, sign_in

# Pairs of nodes whose boxes (label included) overlap by more than a pixel each way.
OVERLAPS = """(() => {
  const boxes = window.cairnGraph.nodes().map(n => n.renderedBoundingBox({includeLabels: true}));
  const hits = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    if (a.x1 < b.x2 - 1 && b.x1 < a.x2 - 1 && a.y1 < b.y2 - 1 && b.y1 < a.y2 - 1) hits.push([i, j]);
  }
  return hits.length;
})()"""


@pytest.fixture
def demo(live_server):
    person = UserFactory(username="dana")
    person.set_password(PASSWORD)
    person.save()
    call_command("seed_demo", "--if-empty", stdout=open("/dev/null", "w"))  # noqa: SIM115
    for project in Project.objects.all():
        Membership.objects.update_or_create(
            project=project, user=person, defaults={"role": Role.VIEWER}
        )
    return live_server.url


def test_the_demo_graph_is_connected_and_no_label_covers_another(
    demo,
    page: Page,
    csp,
):
    page.set_viewport_size({"width": 1280, "height": 860})
    sign_in(page, demo)
    for _ in range(3):  # the layout starts from random positions: it must hold every time
        page.goto(f"{demo}/graph/")
        expect(page.locator("#graph-status")).to_contain_text("entries")
        page.wait_for_function("window.cairnGraph && window.cairnGraph.nodes().length > 0")
        nodes = page.evaluate("window.cairnGraph.nodes().length")
        lonely = page.evaluate("window.cairnGraph.nodes().filter(n => n.degree() === 0).length")
        assert nodes >= 8 and lonely <= 2, (nodes, lonely)  # the demo's notes link up
        assert page.evaluate(OVERLAPS) == 0
