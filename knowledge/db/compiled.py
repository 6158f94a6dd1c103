"""A queryset compiled once per shape and bound per call.

For the small statements of a write, building and compiling a queryset cost more CPU than
running it (bench/write_path.py). So the ORM builds each statement once per *shape* (which
filters, which joins, which branches), with a stand-in wherever a call's value goes; compiling
records where each stand-in landed among the parameters and how a row becomes what the
queryset returns. Each call then only binds its values: the SQL is the ORM's own, and no
statement is written twice.

    def build(s: Stand) -> QuerySet:
        return Entry.objects.filter(project_id=s.int("project"), slug__any=s.texts("slugs"))

    found = compile_once(("entries_named", ...), build).rows(project=7, slugs=["a", "b"])

The key names everything that changes the SQL (the branches taken, a setting compiled in as a
constant); the values bound are never part of it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from django.core.exceptions import EmptyResultSet
from django.db import connection, models
from django.db.models import QuerySet
from django.db.models.query import get_related_populators

from knowledge.db.rows import Converters, convert, from_row
from ops.lru import BoundedCache, approx_size

# Stand-ins fit every integer column, signed or not: Django drops a lookup whose value is out of
# its field's range (PositiveIntegerField's starts at 0: `version__gt=-1` compiles to nothing),
# and no real id or version comes near 2**31 - 2**16.
_INT_BASE = 2**31 - 2**16
_LIST_BASE = _INT_BASE + 2**15  # the elements of ints(): expanded one by one, they are lost
_MARK = "\ue000"  # a private-use code point: no caller's text holds it around a name
_TIME_BASE = dt.datetime(2, 1, 1, tzinfo=dt.UTC)
# The compiled shapes of a process: a few dozen, each a statement and how to read its rows.
COMPILED_BYTES = 4 << 20
# What a reader holds besides its statement (converters, populators: shared Django objects).
_READER_BYTES = 4096


class StandInLost(Exception):
    """A stand-in did not come out of the compiler whole: it was compiled away (out of its
    field's range, an empty list) or folded into another value (a LIKE pattern, a list expanded
    by `__in`). Give that case its own shape, or pass the value another way (`__any`)."""


class Stand:
    """Hands the builder a stand-in for each named value: the same one each time a name is
    asked, distinct across names, and of the type the call will bind."""

    def __init__(self) -> None:
        self.handed: dict[str, Any] = {}

    def _hand(self, name: str, make: Callable[[int], Any]) -> Any:
        if name not in self.handed:
            self.handed[name] = make(len(self.handed))
        return self.handed[name]

    def int(self, name: str) -> int:
        return self._hand(name, lambda n: _INT_BASE + n)

    def text(self, name: str) -> str:
        return self._hand(name, lambda n: f"{_MARK}{name}{_MARK}")

    def time(self, name: str) -> dt.datetime:
        return self._hand(name, lambda n: _TIME_BASE + dt.timedelta(microseconds=n))

    def ints(self, name: str) -> list[int]:
        """For `__any`: one array parameter."""
        return self._hand(name, lambda n: [_LIST_BASE + n])

    def texts(self, name: str) -> list[str]:
        return self._hand(name, lambda n: [f"{_MARK}{name}{_MARK}"])

    def slots(self, params: Sequence) -> tuple[Slot, ...]:
        """Where each stand-in landed among the compiled parameters."""
        names = {_key(value): name for name, value in self.handed.items()}
        found: list[Slot] = []
        for i, param in enumerate(params):
            name = names.get(_key(param))
            if name is not None:
                # An int column's value goes to the driver typed (Int4(n)), as the ORM sends it.
                typed = type(param) if isinstance(param, int) and type(param) is not int else None
                found.append(Slot(i, name, typed))
            elif _holds_stand_in(param):
                raise StandInLost(f"a stand-in was folded into the parameter {param!r}")
        lost = set(self.handed) - {slot.name for slot in found}
        if lost:
            raise StandInLost(f"compiled away: {', '.join(sorted(lost))}")
        return tuple(found)


def _key(value: Any) -> Hashable:
    """What a parameter equal to a stand-in compares as (by type: True is no stand-in for 1)."""
    if isinstance(value, list):
        return ("list", *map(_key, value))
    if isinstance(value, int) and not isinstance(value, bool):
        return (int, int(value))  # the driver's Int4(n) too, as Django wraps an int column's
    try:
        hash(value)
    except TypeError:  # a dict, say: never a stand-in
        return ("object", id(value))
    return (type(value), value)


def _holds_stand_in(param: Any) -> bool:
    if isinstance(param, str):
        return _MARK in param
    if isinstance(param, int) and not isinstance(param, bool):
        return _INT_BASE <= param < _INT_BASE + 2**16
    if isinstance(param, list | tuple):
        return any(_holds_stand_in(p) for p in param)
    return False


class Slot(NamedTuple):
    """Where a call's value goes: its place among the parameters, its name, and the driver's
    type the ORM gives it (None: as it comes)."""

    position: int
    name: str
    typed: type | None


class Loaded(NamedTuple):
    """A model instance read by a compiled queryset, and its annotations (never set on it)."""

    obj: models.Model
    extra: dict[str, Any]


@dataclass(frozen=True)
class _Rows:
    """values_list rows: tuples, each column as the field reads it."""

    converters: Converters

    def __call__(self, rows: list) -> list:
        if not self.converters:
            return [tuple(row) for row in rows]
        return [tuple(convert(row, self.converters)) for row in rows]


@dataclass(frozen=True)
class _Objects:
    """Model rows as ModelIterable makes them (select_related included), annotations apart."""

    model: type[models.Model]
    names: tuple[str, ...]  # the model's own columns' attnames
    start: int
    end: int
    populators: tuple  # django's RelatedPopulator per select_related model
    annotations: tuple[tuple[str, int], ...]  # (name, column)
    converters: Converters

    def __call__(self, rows: list) -> list[Loaded]:
        found = []
        for raw in rows:
            row = convert(raw, self.converters) if self.converters else raw
            obj = from_row(self.model, self.names, row[self.start : self.end])
            for populator in self.populators:
                populator.populate(row, obj)
            found.append(Loaded(obj, {name: row[i] for name, i in self.annotations}))
        return found


def _nothing(rows: list) -> list:
    return []


@dataclass(frozen=True)
class Bound:
    """A compiled statement with one call's values: sent alone or with others
    (knowledge.db.round_trip.fetch_together), read by its compiled reader."""

    sql: str | None
    params: list
    read: Callable[[list], list]

    def ids(self) -> tuple[str, list]:
        """As a subquery of ids for a statement to embed: one that can match nothing selects no
        row."""
        if self.sql is None:
            return "SELECT NULL::bigint WHERE false", []
        return self.sql, self.params


@dataclass(frozen=True)
class Compiled:
    """The SQL of one shape, its parameters (a constant, or a slot a call's value fills) and
    how its rows are read. `sql` None: the queryset can match nothing (EmptyResultSet)."""

    sql: str | None
    params: tuple
    slots: tuple[Slot, ...]
    read: Callable[[list], list]

    def bind(self, **values: Any) -> Bound:
        """The statement with these values (a KeyError names a slot not given)."""
        params = list(self.params)
        for i, name, typed in self.slots:
            value = values[name]
            params[i] = value if typed is None or value is None else typed(value)
        return Bound(self.sql, params, self.read)

    def _run(self, values: dict) -> list:
        if self.sql is None:
            return []
        bound = self.bind(**values)
        with connection.cursor() as cursor:
            cursor.execute(bound.sql, bound.params)
            return self.read(cursor.fetchall())

    def rows(self, **values: Any) -> list:
        """A values_list queryset's rows (tuples); a model queryset's Loaded instances."""
        return self._run(values)

    def first(self, **values: Any) -> Any:
        found = self._run(values)
        return found[0] if found else None


_compiled: BoundedCache[Compiled] = BoundedCache(COMPILED_BYTES)


def compile_once(key: Hashable, build: Callable[[Stand], QuerySet]) -> Compiled:
    """`build(stand)`'s queryset, compiled the first time `key` is asked (the key must hold
    everything that changes the SQL). Compile inside the transaction that runs it:
    `select_for_update` refuses to compile in autocommit."""
    found = _compiled.get(key)
    if found is None:
        found = _compile(build)
        _compiled.put(key, found, size=approx_size((found.sql, found.params)) + _READER_BYTES)
    return found


def _compile(build: Callable[[Stand], QuerySet]) -> Compiled:
    stand = Stand()
    queryset = build(stand)
    compiler = queryset.query.get_compiler(connection=connection)
    try:
        sql, params = compiler.as_sql()
    except EmptyResultSet:
        return Compiled(None, (), (), _nothing)
    slots = stand.slots(params)
    return Compiled(sql, tuple(params), slots, _reader(queryset, compiler))


def _reader(queryset: QuerySet, compiler) -> Callable[[list], list]:
    fields = [column[0] for column in compiler.select[: compiler.col_count]]
    converters = tuple(
        (i, tuple(functions), expression)
        for i, (functions, expression) in sorted(compiler.get_converters(fields).items())
    )
    if queryset._fields is not None or compiler.klass_info is None:  # values_list
        return _Rows(converters)
    info, select = compiler.klass_info, compiler.select
    start, end = info["select_fields"][0], info["select_fields"][-1] + 1
    fetch_mode = queryset._fetch_mode
    assert not fetch_mode.track_peers, "a compiled reader's populators are shared across calls"
    return _Objects(
        model=info["model"],
        names=tuple(column[0].target.attname for column in select[start:end]),
        start=start,
        end=end,
        populators=tuple(get_related_populators(info, select, connection.alias, fetch_mode)),
        annotations=tuple(compiler.annotation_col_map.items()),
        converters=converters,
    )


def clear() -> None:
    """Forget every compiled shape (a test that changes what a shape compiles to)."""
    _compiled.clear()
