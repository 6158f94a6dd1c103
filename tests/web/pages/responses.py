"""Reading a page's answer: its HTML, and the number of queries it cost."""

from __future__ import annotations


def html(response, status: int = 200) -> str:
    """The page's text, once it answered `status`: a test that looks for what a page leaves out
    would pass on an error page, a redirect to sign in or an empty answer too."""
    assert response.status_code == status, (
        f"{response.status_code} (expected {status}): {response.content[:300]!r}"
    )
    return response.content.decode()


def queries(client, url: str) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)
