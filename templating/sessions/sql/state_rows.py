"""The state rows of the database service: a scope's values written in one statement (one JSON document the
database splits into rows) and read back as one JSON document it joins from them, so
neither the rows nor their values go through Python one by one. `Statements` builds on these."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from ..base import APP, SESSION, USER
from .driver import dumps
from .schema import Tables, in_document, key_name, odd_keys

try:
    import sqlalchemy as sa
    from sqlalchemy.ext.asyncio import AsyncConnection
except ImportError:  # the sql extra is not installed: the service says so when it is made
    pass

__all__ = ["Owner", "StateRows"]

Owner = tuple[int, int]
"""Whose state rows: (the scope's index, the pk of the session's, user's or app's row)."""


# A write is one statement: each scope's values come as one JSON document {name: value}, which the database
# splits into rows. SQLite hands a scalar element out as an SQL value (a float through a double, whose text it
# shortens), so there each value comes wrapped in a list, whose text it keeps as written, and is taken out of
# it. A name that is a digest (`schema.DIGEST`) finds its key in a second document {name: the key as JSON
# text}. PostgreSQL cannot split a document holding a NUL (\u0000: its parser decodes every string it meets,
# and text holds no NUL), so such a scope's values come as three arrays instead: names, keys, values as JSON.
_PART = {
    "sqlite": (
        "SELECT :scope_{n} AS scope, :owner_{n} AS owner, j.key AS name, "
        "CASE WHEN substr(j.key, 1, 1) = char(65535) THEN json_extract(:long_keys_{n}, '$.\"' || j.key || '\"') "
        "END AS long_key, substr(j.value, 2, length(j.value) - 2) AS value, :written_{n} AS written "
        "FROM json_each(:doc_{n}) AS j"
    ),
    "postgresql": (
        "SELECT CAST(:scope_{n} AS smallint) AS scope, {owner} AS owner, j.key AS name, "
        "CASE WHEN left(j.key, 1) = chr(65535) THEN CAST(:long_keys_{n} AS json) ->> j.key END AS long_key, "
        "CAST(j.value AS text) AS value, {written} AS written FROM json_each(CAST(:doc_{n} AS json)) AS j"
    ),
    "arrays": (
        "SELECT CAST(:scope_{n} AS smallint) AS scope, {owner} AS owner, r.name, r.long_key, "
        "r.value, {written} AS written FROM unnest(CAST(:names_{n} AS text[]), "
        "CAST(:long_keys_{n} AS text[]), CAST(:values_{n} AS text[])) AS r(name, long_key, value)"
    ),
}
_UPSERT = (
    " ON CONFLICT (scope, owner, name) DO UPDATE SET long_key = excluded.long_key, value = excluded.value, "
    "written = excluded.written"
)


class StateRows:
    """The state rows' reads and writes on `tables`, in the SQL of `backend` ("sqlite" or "postgresql"); each
    method runs in the transaction of the connection it is given."""

    def __init__(self, tables: Tables, *, backend: str) -> None:
        self._tables = tables
        self.backend = backend
        self._writes: dict[tuple[tuple[str, ...], bool], Any] = {}
        self._creates: dict[tuple[tuple[str, ...], tuple[int, ...]], Any] = {}  # Statements.create_at_once's

    def _write(self, forms: tuple[str, ...], fresh: bool) -> Any:
        """The statement writing parts of those forms (`_PART`), in key order; an upsert unless `fresh`."""
        statement = self._writes.get((forms, fresh))
        if statement is None:
            owners = [(f"CAST(:owner_{n} AS bigint)", f"CAST(:written_{n} AS bigint)") for n in range(len(forms))]
            statement = self._writes[(forms, fresh)] = sa.text(self.insert_rows(forms, owners, fresh=fresh))
        return statement

    @staticmethod
    def insert_rows(
        forms: tuple[str, ...], owners: list[tuple[str, str]], *, fresh: bool, first: int = 0, where: str = "true"
    ) -> str:
        """The SQL inserting parts of those forms (`_PART`, their parameters numbered from `first`), each part's
        owner and revision given as SQL expressions (`owners`: PostgreSQL's; SQLite's parts take them as
        parameters), in key order, if `where` holds; an upsert unless `fresh`."""
        parts = " UNION ALL ".join(
            _PART[form].format(n=n, owner=owner, written=written)
            for n, (form, (owner, written)) in enumerate(zip(forms, owners, strict=True), start=first)
        )
        text = (
            "INSERT INTO templating_state (scope, owner, name, long_key, value, written) "
            f"SELECT scope, owner, name, long_key, value, written FROM ({parts}) AS written_rows "
            f"WHERE {where} ORDER BY scope, owner, name"  # WHERE: SQLite reads ON CONFLICT after it as an upsert
        )
        return text if fresh else text + _UPSERT

    def documents_of(self, parts: list[tuple[Owner, dict[str, Any], int]]) -> tuple[list[str], dict[str, Any]]:
        """The form (`_PART`) of each part that has values, and the parameters of them all: each part's values as
        one JSON document (or, on PostgreSQL, three arrays when a value holds a NUL), its owner and revision."""
        forms: list[str] = []
        parameters: dict[str, Any] = {}
        for owner, values, revision in parts:
            if not values:
                continue
            n = len(forms)
            named = values
            long_keys: dict[str, str] = {}
            if odd_keys(list(values)):
                named = {}
                for key, value in values.items():
                    name, long_key = key_name(key)
                    named[name] = value
                    if long_key is not None:
                        long_keys[name] = long_key
            parameters |= {f"scope_{n}": owner[0], f"owner_{n}": owner[1], f"written_{n}": revision}
            document = dumps({name: [value] for name, value in named.items()} if self.backend == "sqlite" else named)
            if self.backend == "postgresql" and "\\u0000" in document:  # (rare) a NUL in a value
                names = list(named)
                parameters |= {
                    f"names_{n}": names,
                    f"long_keys_{n}": [long_keys.get(name) for name in names],
                    f"values_{n}": [dumps(value) for value in named.values()],
                }
                forms.append("arrays")
            else:
                parameters |= {f"doc_{n}": document, f"long_keys_{n}": dumps(long_keys)}
                forms.append(self.backend)
        return forms, parameters

    async def write_values(
        self, conn: AsyncConnection, parts: list[tuple[Owner, dict[str, Any], int]], *, fresh: bool = False
    ) -> None:
        """Insert or replace the rows of each part's values (keys of one owner, written at its revision), all in
        one statement. `fresh`: the owners have no rows yet (a session being created), so nothing is replaced."""
        forms, parameters = self.documents_of(parts)
        if forms:
            await conn.execute(self._write(tuple(forms), fresh), parameters)

    def _document(self, c: Any = None) -> Any:
        """A scope's values as one JSON object text, joined by the database from its rows (of `c`, the columns of
        the state table or of an alias of it)."""
        c = self._tables.state.c if c is None else c
        if self.backend == "sqlite":
            quoted: Any = sa.func.json_quote(c.name)
            joined: Any = sa.func.group_concat(sa.func.coalesce(c.long_key, quoted) + ":" + c.value, ",")
        else:
            quoted = sa.cast(sa.func.to_json(c.name), sa.Text)
            joined = sa.func.string_agg(sa.func.coalesce(c.long_key, quoted) + ":" + c.value, ",")
        return sa.literal("{") + joined + sa.literal("}")

    def _rows_of(self, owners: Iterable[tuple[Owner, Collection[str] | None]]) -> Any:
        """The condition for the rows of each owner: all of them, or those of the given names."""
        c = self._tables.state.c
        conditions = []
        for (scope, pk), names in owners:
            condition = sa.and_(c.scope == scope, c.owner == pk)
            if names is not None:
                condition = sa.and_(condition, c.name.in_(list(names)))
            conditions.append(condition)
        return sa.or_(*conditions)

    async def read_values(self, conn: AsyncConnection, owners: list[Owner]) -> list[dict[str, Any]]:
        """The whole state of each owner, in one query, and a session's `initial` document in a second (decoded:
        the caller's own)."""
        if not owners:
            return []
        t = self._tables
        c = t.state.c
        query = (
            sa.select(c.scope, c.owner, self._document())
            .where(self._rows_of((owner, None) for owner in owners))
            .group_by(c.scope, c.owner)
        )
        texts = {(int(scope), int(pk)): text for scope, pk, text in await conn.execute(query)}
        values = [json.loads(texts[owner]) if owner in texts else {} for owner in owners]
        sessions = [pk for scope, pk in owners if scope == SESSION]
        if sessions:
            initial = sa.select(t.sessions.c.pk, self.initial_of(None)).where(
                t.sessions.c.pk.in_(sessions), t.sessions.c.initial.is_not(None)
            )
            documents = {int(pk): text for pk, text in await conn.execute(initial)}
            for number, (scope, pk) in enumerate(owners):
                if scope == SESSION and pk in documents:
                    values[number] = json.loads(documents[pk]) | values[number]
        return values

    def documents(self, names: tuple[Mapping[str, str] | None, ...] = (None, None, None)) -> list[Any]:
        """Columns for the query of a session's row (`session_row`): the JSON object text of each of its scopes'
        rows (`Scopes` order), all its values or those of the names given (NULL when there are none; `names`
        maps the name a key is stored under to the key), and of the session's `initial` document (the same keys
        of it), so that one statement reads a session's row and its state (`decoded`)."""
        t = self._tables
        c = t.state.c
        columns = []
        for index, owner in ((SESSION, t.sessions.c.pk), (USER, t.users.c.pk), (APP, t.apps.c.pk)):
            wanted = names[index]
            query = sa.select(self._document()).where(c.scope == index, c.owner == owner)
            if wanted is not None:
                query = query.where(c.name.in_(list(wanted))) if wanted else query.where(sa.false())
            columns.append(query.scalar_subquery().label(f"state_{index}"))
        wanted = names[SESSION]
        columns.append(self.initial_of(None if wanted is None else list(wanted.values())).label("initial"))
        return columns

    def initial_of(self, keys: Collection[str] | None) -> Any:
        """The session's `initial` document (of `templating_sessions`) as one JSON object text, whole or only
        those of `keys` it holds (SQLite finds each by its JSON path, PostgreSQL by its name in `lookup`)."""
        initial = self._tables.sessions.c.initial
        if keys is None:
            return initial
        found = [key for key in keys if in_document([key])]  # no other key is in a document
        if not found:
            return sa.null()
        # A key it holds adds `"key":value,` (NULL || text is NULL: a key it lacks adds nothing).
        if self.backend == "sqlite":
            values = [self._found(initial, key) for key in found]
        else:
            lookup = self._tables.sessions.c.lookup
            values = [lookup.op("->>")(sa.literal(key, sa.Text)) for key in found]
        parts = [
            sa.func.coalesce(sa.literal(dumps(key) + ":") + sa.cast(value, sa.Text) + ",", "")
            for key, value in zip(found, values, strict=True)
        ]
        joined: Any = parts[0]
        for part in parts[1:]:
            joined = joined + part
        return sa.literal("{") + sa.func.rtrim(joined, ",") + sa.literal("}")

    @staticmethod
    def _found(initial: Any, key: str) -> Any:
        """SQLite: the JSON text of a key's value in a document, or NULL: `->` (SQLite 3.38 on, one parse of the
        document), else `json_extract` of two paths, which gives `[value,value]` with the value as written."""
        path = f'$."{key}"'
        if sqlite3.sqlite_version_info >= (3, 38):
            return initial.op("->")(sa.literal(path, sa.Text))
        twice = sa.func.json_extract(initial, path, path)
        half = sa.func.length(twice).op("/")(2) - 1  # (2n + 3) / 2 - 1 = n, in integers
        return sa.case((sa.func.json_type(initial, path).is_not(None), sa.func.substr(twice, 2, half)))

    @staticmethod
    def decoded(row: Any) -> list[dict[str, Any]]:
        """The state of each scope that `documents` read, decoded (the caller's own): a session's rows override
        its `initial` document."""
        scopes = [json.loads(text) if text is not None else {} for text in (row.state_0, row.state_1, row.state_2)]
        if row.initial is not None:
            scopes[SESSION] = json.loads(row.initial) | scopes[SESSION]
        return scopes
