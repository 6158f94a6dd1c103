"""`field__any=[…]`: `col = ANY(%s)`, the list sent as one array parameter whatever its length.

`__in` expands a list into one parameter each, so its SQL changes with the list's length (a
statement compiled once per shape could not take it), and an empty list compiles the whole
condition away. Registered on every field by KnowledgeConfig.ready()."""

from __future__ import annotations

from django.db.models import Field, Lookup


class AnyOf(Lookup):
    lookup_name = "any"
    prepare_rhs = False  # the list as given: the column's get_prep_value takes one value

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs} = ANY({rhs})", (*lhs_params, *rhs_params)

    def get_db_prep_lookup(self, value, connection):
        return "%s", [list(value)]


def register() -> None:
    Field.register_lookup(AnyOf)
