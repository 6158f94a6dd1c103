"""Reading a page's answer: its HTML, and the number of queries it cost."""

from __future__ import annotations


def html(response) -> str:
    return response.content.decode()


def queries(client, url: str) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)
