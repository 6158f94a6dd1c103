"""One error hierarchy for every surface: code, HTTP status and a message that says what to do.

REST maps these to RFC 7807 problem+json, MCP to a tool result with isError, the admin and
management commands to their own messages. Write messages for whoever must act on them.
"""


class KnowledgeError(Exception):
    code = "knowledge_error"
    http_status = 400

    def __init__(self, message: str, **data: object) -> None:
        super().__init__(message)
        self.message = message
        self.data = data

    def as_dict(self) -> dict:
        return {"code": self.code, "message": self.message, **self.data}


class ValidationFailed(KnowledgeError):
    code, http_status = "validation_failed", 422


class NotFound(KnowledgeError):
    code, http_status = "not_found", 404


class Forbidden(KnowledgeError):
    code, http_status = "forbidden", 403


class AlreadyExists(KnowledgeError):
    code, http_status = "already_exists", 409


class EntryConflict(KnowledgeError):
    """The entry changed since the version the caller read."""

    code, http_status = "entry_conflict", 409

    def __init__(self, *, entry_ref: str, expected_version: int, current_version: int) -> None:
        super().__init__(
            f"Entry {entry_ref} changed since version {expected_version} "
            f"(now {current_version}). Read it again and retry with "
            f"expected_version={current_version}.",
            entry=entry_ref,
            expected_version=expected_version,
            current_version=current_version,
        )


class SchemaMisfit(ValidationFailed):
    """A write refused because the entry does not fit its note type's schema (strict mode).
    `fields` lists each misfit: field, problem (missing, wrong_type, not_in_enum), expected."""

    code = "schema_misfit"
