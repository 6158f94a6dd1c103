"""Fixtures for the access tests: the matrix world and a real OIDC provider on loopback."""

from __future__ import annotations

import pytest

from tests.access.world import GUEST_GROUP


@pytest.fixture
def guest_groups(settings):
    settings.CAIRN_GUEST_GROUPS = [GUEST_GROUP]
