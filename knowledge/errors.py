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
    """The entry changed since the version the caller read.

    `changes` lists the revisions since (version, at, by, reason), `diff` the body's changed
    lines between the two versions, `fields` the other fields changed ({name: {was, now}}).
    A partial edit or update that touches nothing changed since is not refused (it applies on
    the current version, knowledge.write_result.Rebased). `both_changed` names the fields
    both set (`update` holds the fields an update was given, `update_left_out` those too long to
    send back). For a whole body or an edit, `merged_body` applies the caller's own change to the
    text as it is now (and `edits`, the same as find/replace steps), or `conflicts` names the
    lines both changed (base line numbers, base, theirs, mine) and `keep_both` the find/replace
    steps that add the caller's lines after theirs. Long
    lists are cut to their first (newest) items, `changes_total` and `conflicts_total` counting
    them all."""

    code, http_status = "entry_conflict", 409

    def __init__(
        self, *, entry_ref: str, expected_version: int, current_version: int, **details: object
    ) -> None:
        changes = details.get("changes") or []
        who = "; ".join(
            f"v{c['version']} by {c['by']} at {c['at'][:16].replace('T', ' ')}"
            + (f" ({c['reason']})" if c["reason"] else "")
            for c in changes[-3:]
        )
        message = (
            f"Entry {entry_ref} changed since version {expected_version} (now "
            f"{current_version}){': ' + who if who else ''}. Your write was not applied: "
        )
        if details.get("both_changed"):
            names = ", ".join(details["both_changed"])  # type: ignore[arg-type]
            message += (
                f"you and they changed the same field(s) ({names}). Their values stay unless "
                f"their writer agrees; send only your other fields with expected_version="
                f"{current_version} (sending yours as they are would undo theirs)."
            )
        elif "merged_body" in details:
            message += (
                "your change and theirs touch different lines, so merged_body keeps both; send "
                f"it (or only your change) with expected_version={current_version}."
            )
        elif details.get("conflicts"):
            lines = ", ".join(c["lines"] for c in details["conflicts"])  # type: ignore[union-attr]
            if total := details.get("conflicts_total"):
                lines += f" and {total - len(details['conflicts'])} more"  # type: ignore[arg-type]
            message += (
                f"you and they changed the same lines ({lines} of version {expected_version}). "
                f"Both sides are below; theirs is in the current text (expected_version="
                f"{current_version}) and stays unless its writer agrees to change it."
            )
        else:
            message += (
                "read the current text, apply only your change to it, and send that with "
                f"expected_version={current_version}; sending your old text again would undo "
                "theirs."
            )
        super().__init__(
            message,
            entry=entry_ref,
            expected_version=expected_version,
            current_version=current_version,
            **details,
        )


class SchemaMisfit(ValidationFailed):
    """A write refused because the entry does not fit its note type's schema (strict mode).
    `fields` lists each misfit: field, problem (missing, wrong_type, not_in_enum), expected."""

    code = "schema_misfit"


class RunChanged(KnowledgeError):
    """Entries a run wrote changed since its undo was previewed: nothing was undone."""

    code, http_status = "run_changed", 409
