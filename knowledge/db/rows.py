"""Rows → model instances as the ORM loads them: each field's converters applied (JSON parsed,
say), the fields left out deferred. The compiled querysets (compiled.py) read their rows with
`from_row`; `columns` serves a statement the ORM cannot say that returns a model's rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from django.db import connection, models

Converters = tuple[tuple[int, tuple, object], ...]  # (position, converters, expression)


def convert(row: Sequence, converters: Converters) -> list:
    """The row with each converted column's value as the field reads it."""
    values = list(row)
    for i, functions, expression in converters:
        for function in functions:
            values[i] = function(values[i], expression, connection)
    return values


def from_row(model: type[models.Model], names: Sequence[str], values: Sequence) -> models.Model:
    """An instance of `model` from the (converted) values of the fields `names` (attnames), as
    a queryset makes it: loaded from the database, the fields not named deferred."""
    return model.from_db(connection.alias, names, values)


@dataclass(frozen=True)
class Columns:
    """A model's columns in a SELECT, and how to make an instance of their values."""

    model: type[models.Model]
    sql: str  # `alias."col", …`
    names: tuple[str, ...]  # the fields' attnames, in that order
    converters: Converters

    def instance(self, values) -> models.Model:
        """An instance as the ORM would load it (its fields' from_db_value applied)."""
        return from_row(self.model, self.names, convert(values, self.converters))


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
