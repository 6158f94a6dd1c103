"""Model instances from rows read by plain SQL, for the statements of a write that are written
by hand: building the ORM query cost more CPU than running it (bench/write_profile.py)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from django.db import connection, models


@dataclass(frozen=True)
class Columns:
    """A model's columns in a SELECT, and how to make an instance of their values."""

    model: type[models.Model]
    sql: str  # `alias."col", …`
    names: tuple[str, ...]  # the fields' attnames, in that order
    converters: tuple[tuple[int, tuple, object], ...]  # (position, converters, expression)

    def instance(self, values) -> models.Model:
        """An instance as the ORM would load it (its fields' from_db_value applied, e.g. JSON
        parsed); the fields left out are deferred (read on use)."""
        values = list(values)
        for i, converters, expression in self.converters:
            for convert in converters:
                values[i] = convert(values[i], expression, connection)
        return self.model.from_db(connection.alias, self.names, values)


@cache
def columns(
    model: type[models.Model], alias: str, leave_out: frozenset[str] = frozenset()
) -> Columns:
    """The model's concrete fields but `leave_out` (attnames) as columns of table `alias`."""
    fields = [f for f in model._meta.concrete_fields if f.attname not in leave_out]
    converters = tuple(
        (i, tuple(f.get_db_converters(connection)), f.get_col(alias))
        for i, f in enumerate(fields)
        if f.get_db_converters(connection)
    )
    return Columns(
        model,
        ", ".join(f'{alias}."{f.column}"' for f in fields),
        tuple(f.attname for f in fields),
        converters,
    )
