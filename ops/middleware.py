"""One middleware for every Django request: a request id (X-Request-ID in and out) and, for the
REST API, the operation's timing keyed by method and route (`PATCH v1/entries/<ref>`).

Both halves of that key come from a fixed set: any caller may send any method and path, and a
metric series or a timings row per made-up one would grow without bound. Unknown methods and
paths that match no route are counted as `other`.
"""

from __future__ import annotations

from ops import metrics, timing
from ops.logs import REQUEST_ID, new_request_id

WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
KNOWN_METHODS = {"GET", "HEAD", "OPTIONS", *WRITE_METHODS}
OTHER = "other"


def method_label(method: str | None) -> str:
    return method if method in KNOWN_METHODS else OTHER


def route_label(request) -> str:
    """The URL pattern the request resolved to (`v1/entries/<ref>`), never the path it sent."""
    match = getattr(request, "resolver_match", None)
    return match.route.removeprefix("api/") if match and match.route else OTHER


class OperationsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        rid = new_request_id(request.headers.get("X-Request-ID", ""))
        token = REQUEST_ID.set(rid)
        try:
            if not request.path.startswith("/api/"):
                response = self.get_response(request)
            else:
                response = self._timed(request)
        finally:
            REQUEST_ID.reset(token)
        response["X-Request-ID"] = rid
        return response

    def _timed(self, request):
        size = None
        if request.method in WRITE_METHODS:  # the header, not the body: nothing read twice
            size = (
                int(request.META.get("CONTENT_LENGTH") or 0)
                if request.META.get("CONTENT_LENGTH", "").isdigit()
                else None
            )
        method = method_label(request.method)
        timer = timing.Timer("rest", f"{method} {OTHER}", content_bytes=size).start()
        try:
            response = self.get_response(request)
        except BaseException as exc:
            timer.stop(exc)
            raise
        timer.operation = f"{method} {route_label(request)}"
        if response.status_code >= 500:
            timer.outcome, timer.error = "error", f"HTTP {response.status_code}"
        elif response.status_code >= 400:
            timer.outcome, timer.error = "refused", f"HTTP {response.status_code}"
            if response.status_code == 401:
                metrics.auth_failed("rest")
        timer.stop()
        return response
