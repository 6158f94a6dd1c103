"""RFC 7807 problem+json for every error the REST API returns, with the endpoints to try next."""

from __future__ import annotations

from django.db import InterfaceError, OperationalError
from django.http import Http404, JsonResponse
from ninja.errors import AuthenticationError, HttpError, ValidationError

from knowledge import limits
from knowledge.errors import EntryConflict, KnowledgeError, NotFound

PROBLEM = "application/problem+json"
# An error's data keys that REST names otherwise: a refused update's fields are the PATCH body.
REST_WORDS = {"update": "patch", "update_left_out": "patch_left_out"}


def problem(status: int, code: str, title: str, detail: str, **extra) -> JsonResponse:
    body = {
        "type": f"https://cairn.invalid/problems/{code}",
        "title": title,
        "status": status,
        "detail": detail,
        "code": code,
        **extra,
    }
    response = JsonResponse(body, status=status, content_type=PROBLEM)
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="cairn"'
    return response


def _title(code: str) -> str:
    return code.replace("_", " ").capitalize()


def next_moves(exc: KnowledgeError) -> str:
    """What a REST caller may do next, in endpoints (the core's messages name no surface)."""
    if isinstance(exc, NotFound) and "project" in exc.data:
        return (
            "GET /api/v1/projects lists the projects you can see; POST /api/v1/projects adds one."
        )
    if isinstance(exc, NotFound) and exc.data.get("context"):
        return (
            "GET /api/v1/search?q=… finds entries; GET /api/v1/entries lists the latest "
            "changes first; POST /api/v1/entries creates the entry."
        )
    if isinstance(exc, NotFound) and exc.data.get("deleted"):
        gone = exc.data["deleted"]
        return (
            f"POST /api/v1/entries/{gone['short_id']}/undelete with a reason brings it back as it "
            "was (same id, sources, kind, tags and history)."
        )
    if isinstance(exc, NotFound) and "run" in exc.data:
        return "GET /api/v1/runs lists the runs you may see (add days=… for older ones)."
    if exc.code == "run_changed":
        run = exc.data.get("run")
        return (
            f"GET /api/v1/runs/{run} shows the undo's preview again with its expected versions; "
            f"then POST /api/v1/runs/{run}/undo with them."
        )
    if isinstance(exc, NotFound) and "entry" in exc.data:
        return (
            "GET /api/v1/search?q=… finds entries; GET /api/v1/entries?project=… lists a "
            "project's entries."
        )
    if exc.data.get("reason") == "person_only":
        ref = exc.data.get("entry", "")
        return (
            f"POST /api/v1/entries/{ref}/verify accepts a signed-in browser session (with its "
            f"CSRF token), or verify it on the entry's page at /e/{ref}/."
        )
    if exc.code == "schema_misfit":
        return (
            f"GET /api/v1/projects/{exc.data.get('project')}/schemas/validate?note_type="
            f"{exc.data.get('schema')} shows the schema and the entries that do not fit."
        )
    if isinstance(exc, EntryConflict):
        ref, now = exc.data["entry"], exc.data["current_version"]
        if exc.data.get("both_changed") and "update" in exc.data:
            names = ", ".join(exc.data["both_changed"])
            return (
                f"Both changed {names} (fields shows theirs, patch yours): theirs stay unless "
                f"their writer agrees; decide what they should be, then PATCH "
                f"/api/v1/entries/{ref} with those fields and expected_version={now}."
            )
        if "merged_body" in exc.data:
            return (
                f"PATCH /api/v1/entries/{ref} with merged_body as body and "
                f"expected_version={now} keeps both changes (or POST /api/v1/entries/{ref}/edit "
                "with each of edits as a find_replace)."
            )
        return (
            f"GET /api/v1/entries/{ref} returns the current version; change only your lines "
            f"with POST /api/v1/entries/{ref}/edit (find_replace, expected_version={now})."
        )
    return ""


def register_error_handlers(api) -> None:
    @api.exception_handler(KnowledgeError)
    def knowledge_error(request, exc: KnowledgeError):
        # problem() names its own title and detail: an error's `title` (AlreadyExists of a
        # concurrent create) passed on as well raised TypeError, a 500 instead of the 409.
        data = {
            REST_WORDS.get(k, k): v
            for k, v in exc.data.items()
            if k not in ("code", "message", "title", "detail")
        }
        detail = " ".join(filter(None, [exc.message, next_moves(exc)]))
        return problem(exc.http_status, exc.code, _title(exc.code), detail, **data)

    @api.exception_handler(ValidationError)
    def validation_error(request, exc: ValidationError):
        errors = []
        for err in exc.errors:
            loc = [str(p) for p in err.get("loc", ())]
            # loc is (where, parameter name, field…): the field path is what a caller fixes.
            field = ".".join(loc[2:] if loc[:1] == ["body"] else loc[1:]) or ".".join(loc)
            message = limits.too_long(err) or err.get("msg", "")
            errors.append({"field": field, "message": message, "loc": loc})
        detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
        return problem(
            422,
            "validation_failed",
            "Validation failed",
            f"Invalid input — {detail}",
            errors=errors,
        )

    @api.exception_handler(AuthenticationError)
    def auth_error(request, exc):
        return problem(
            401,
            "unauthorized",
            "Unauthorized",
            "Send Authorization: Bearer <token> (create one with manage.py create_token or in "
            "the admin), or sign in and send the CSRF token.",
        )

    @api.exception_handler(OperationalError)
    @api.exception_handler(InterfaceError)
    def database_down(request, exc):
        response = problem(
            503,
            "database_unavailable",
            "Service unavailable",
            "Cairn's database is not answering right now (it may be restarting). Retry in a few "
            "seconds; if a write was cut off, GET the entry before sending it again.",
        )
        response["Retry-After"] = "5"
        return response

    @api.exception_handler(HttpError)
    def http_error(request, exc: HttpError):
        return problem(exc.status_code, "http_error", "Error", str(exc))

    @api.exception_handler(Http404)
    def not_found(request, exc):
        return problem(404, "not_found", "Not found", str(exc) or "Not found.")
