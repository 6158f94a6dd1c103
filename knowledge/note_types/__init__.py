"""Note types with schemas (Picoschema, as Basic Memory writes them): parse, validate, infer and
diff, all pure. The database side is knowledge.note_types.reads (reads) and the write
kernel's schema step (enforcement)."""

from knowledge.note_types.inference import REQUIRED, THRESHOLD, Drift, Inference, Usage, diff, infer
from knowledge.note_types.picoschema import (
    MAX_FIELDS,
    Field,
    Schema,
    SchemaError,
    parse_fields,
    read_schema,
    to_text,
)
from knowledge.note_types.validation import Check, Facts, Report, validate

__all__ = [
    "MAX_FIELDS",
    "REQUIRED",
    "THRESHOLD",
    "Check",
    "Drift",
    "Facts",
    "Field",
    "Inference",
    "Report",
    "Schema",
    "SchemaError",
    "Usage",
    "diff",
    "infer",
    "parse_fields",
    "read_schema",
    "to_text",
    "validate",
]
