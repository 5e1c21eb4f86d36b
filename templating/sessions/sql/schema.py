"""The tables of the database service, version `SCHEMA_VERSION`, how a state key is stored, and how a database
is prepared for them.

Tables (all prefixed `templating_`): one row per app and per user of an app (the revision of their `app:` and
`user:` state), per session, per stored event, and one row per state key of each scope (its JSON text and the
scope revision that last wrote it), plus a schema-version row; times are epoch seconds in a double column, the
same on SQLite and PostgreSQL. A session's row also holds the state it was created with, as one JSON object text
(`initial`), when its keys allow it (`in_document`): its rows, written by later appends, override it. A database
of version 3 is brought to version 4 when opened (two added columns, nothing else changed); one holding another
version, or `templating_*` tables without one, is refused and left as it is.

A state key is stored under a name that fits any index: the key itself, or, for a key PostgreSQL cannot index
or hold as text (longer than `MAX_KEY_NAME` characters, or holding a NUL), a digest of it, with the key itself
in a column of its own (`key_name`). So every service takes exactly the keys the in-memory one does.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection
from dataclasses import dataclass

from .driver import SessionStoreError, dumps

try:
    import sqlalchemy as sa
    from sqlalchemy.dialects import postgresql as sa_postgresql
    from sqlalchemy.ext.asyncio import AsyncConnection
except ImportError:  # the sql extra is not installed: the service says so when it is made
    pass

__all__ = [
    "DIGEST",
    "MAX_KEY_NAME",
    "SCHEMA_VERSION",
    "Tables",
    "in_document",
    "key_name",
    "odd_keys",
    "prepare",
    "tables",
]

SCHEMA_VERSION = 4
"""The layout of the tables this package writes. A database of version 3 is upgraded when opened; one holding
another version is refused.

Version 4: a session's row holds the state it was created with as one JSON document (`initial`), which rows
written later override, so that a create writes one value, not a row per key; version 3: state rows belong to
a scope's row by its number (a session's, a user's, an app's), keys that no index takes are stored under a
digest, and ids are bounded; version 2 kept app and user names in every state row and the key itself as the
index; version 1 kept each scope's state as one JSON document, which every append
decoded and wrote again whole."""

MAX_KEY_NAME = 256
"""The longest state key (in characters) stored under its own name; a longer one is stored under its digest.
At most 4 bytes a character: well within PostgreSQL's limit on an index row (about 2,700 bytes)."""

DIGEST = "\uffff"
"""The first character of a digest name (then 64 hex digits). A key starting with it is stored under its
digest too, so a name is a key's own exactly when it does not start with this."""


@dataclass(frozen=True)
class Tables:
    metadata: sa.MetaData
    schema: sa.Table
    apps: sa.Table
    users: sa.Table
    sessions: sa.Table
    events: sa.Table
    state: sa.Table


def tables() -> Tables:
    """The schema, version `SCHEMA_VERSION`."""
    metadata = sa.MetaData()
    big = sa.BigInteger().with_variant(sa.Integer(), "sqlite")  # SQLite numbers its rowid only for INTEGER
    schema = sa.Table(
        "templating_schema",
        metadata,
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("version", sa.Integer, nullable=False),
    )
    apps = sa.Table(
        "templating_apps",
        metadata,
        sa.Column("pk", big, primary_key=True, autoincrement=True),
        sa.Column("app_name", sa.Text, nullable=False, unique=True),
        sa.Column("revision", sa.BigInteger, nullable=False),
    )
    users = sa.Table(
        "templating_users",
        metadata,
        sa.Column("pk", big, primary_key=True, autoincrement=True),
        sa.Column("app_name", sa.Text, nullable=False),
        sa.Column("user_id", sa.Text, nullable=False),
        sa.Column("revision", sa.BigInteger, nullable=False),
        sa.UniqueConstraint("app_name", "user_id", name="templating_users_key"),
    )
    sessions = sa.Table(
        "templating_sessions",
        metadata,
        sa.Column("pk", big, primary_key=True, autoincrement=True),  # creation order
        sa.Column("user_pk", sa.BigInteger, nullable=False),  # its user's row, and through it its app's
        sa.Column("session_id", sa.Text, nullable=False),
        sa.Column("token", sa.Text, nullable=False),  # new for every session created: tells copies apart
        sa.Column("revision", sa.BigInteger, nullable=False),
        sa.Column("event_count", sa.BigInteger, nullable=False),
        sa.Column("last_update_time", sa.Double, nullable=False),
        # The state the session was created with, one JSON object text (NULL: in rows), which its rows override;
        # on PostgreSQL `lookup` holds it too, as a jsonb object of each value's JSON text, where a turn finds a
        # key without parsing the rest (a string keeps a value's text exactly, which a jsonb number would not).
        sa.Column("initial", sa.Text, nullable=True),
        sa.Column("lookup", sa.Text().with_variant(sa_postgresql.JSONB(), "postgresql"), nullable=True),
        sa.UniqueConstraint("user_pk", "session_id", name="templating_sessions_key"),
    )
    events = sa.Table(
        "templating_events",
        metadata,
        sa.Column("session_pk", sa.BigInteger, primary_key=True),
        sa.Column("seq", sa.BigInteger, primary_key=True),  # append order within the session
        sa.Column("event_id", sa.Text, nullable=False),
        sa.Column("timestamp", sa.Double, nullable=False),
        sa.Column("data", sa.JSON, nullable=False),  # the whole event, as Event.model_dump()
        sa.UniqueConstraint("session_pk", "event_id", name="templating_events_id"),
    )
    # One row per key of each scope: `scope` is its index in `Scopes` (SESSION, USER, APP), `owner` the pk of
    # that session's, user's or app's row, `name` the key's (`key_name`); `long_key` holds the key as JSON text
    # when the name is its digest. SQLite keeps the rows in the primary key's order itself (no rowid table beside it).
    state = sa.Table(
        "templating_state",
        metadata,
        sa.Column("scope", sa.SmallInteger, primary_key=True, autoincrement=False),
        sa.Column("owner", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("long_key", sa.Text, nullable=True),
        sa.Column("value", sa.Text, nullable=False),  # JSON text
        sa.Column("written", sa.BigInteger, nullable=False),  # the scope revision that last wrote it
        sqlite_with_rowid=False,
    )
    return Tables(metadata, schema, apps, users, sessions, events, state)


def key_name(key: str) -> tuple[str, str | None]:
    """The name a state key is stored under, and its `long_key` column: `(key, None)` for a key any index takes,
    else its digest and the key as JSON text (which holds a NUL as `\\u0000`)."""
    if len(key) <= MAX_KEY_NAME and "\x00" not in key and not key.startswith(DIGEST):
        return key, None
    return DIGEST + hashlib.sha256(key.encode("utf-8")).hexdigest(), dumps(key)


# What JSON escapes in a key (with ensure_ascii=False): a key holding none of it is written as it is, so a JSON path
# (SQLite's `$."key"`) finds it in a document.
_ESCAPED = re.compile(r'["\\\x00-\x1f]')


def in_document(keys: Collection[str]) -> bool:
    """Whether a session created with these keys keeps its state as one JSON document (`initial`): when a
    JSON path finds each key as written (else one row per key)."""
    return bool(keys) and _ESCAPED.search("".join(keys)) is None


def odd_keys(keys: list[str]) -> list[str]:
    """Those of `keys` stored under a digest (`key_name`), found with a few passes in C when there are none."""
    if not keys:
        return []
    if max(map(len, keys)) <= MAX_KEY_NAME:
        joined = "".join(keys)
        if "\x00" not in joined and DIGEST not in joined:
            return []
    return [key for key in keys if key_name(key)[1] is not None]


async def prepare(conn: AsyncConnection, t: Tables, *, backend: str, url: str) -> None:
    """Create the tables if there are none, and check the schema version, in the transaction of `conn` (a write)."""
    if backend == "postgresql":  # DDL is transactional: one creator at a time
        await conn.execute(sa.text("SELECT pg_advisory_xact_lock(7240118)"))
    existing = set(await conn.run_sync(lambda sync: sa.inspect(sync).get_table_names()))
    version = None
    if t.schema.name in existing:
        version = (await conn.execute(sa.select(t.schema.c.version).where(t.schema.c.name == "sessions"))).scalar()
    ours = {table.name for table in t.metadata.sorted_tables if table is not t.schema}
    older = {"templating_app_states", "templating_user_states", "templating_state_values"}  # versions 1 and 2
    foreign = sorted(existing & (ours | older))
    if version is None and foreign:  # checked before anything is created: nothing changes
        raise SessionStoreError(
            f"tables named templating_* exist in {url!r} without a schema version: written by "
            f"something else ({', '.join(foreign)})",
            url=url,
            help="use another database, or drop those tables if nothing needs them; nothing was changed",
        )
    upgraded = version == 3
    if upgraded:  # two nullable columns added: every stored session reads as it did
        kind = "jsonb" if backend == "postgresql" else "TEXT"
        await conn.execute(sa.text("ALTER TABLE templating_sessions ADD COLUMN initial TEXT"))
        await conn.execute(sa.text(f"ALTER TABLE templating_sessions ADD COLUMN lookup {kind}"))
        await conn.execute(t.schema.update().where(t.schema.c.name == "sessions").values(version=SCHEMA_VERSION))
        version = SCHEMA_VERSION
    if version is not None and version != SCHEMA_VERSION:
        changed = {
            1: (
                " (version 1 kept each scope's state as one JSON document; version 2 stores one row per state "
                "key, so that an append writes only the keys it changes)"
            ),
            2: (
                " (version 3 stores state keys of any length and with NUL characters, and bounds ids to "
                "256 characters, so that PostgreSQL takes every state the in-memory service takes)"
            ),
        }
        raise SessionStoreError(
            f"the session tables in {url!r} have schema version {version}, and this version of "
            f"templating reads version {SCHEMA_VERSION}{changed.get(version, '')}",
            url=url,
            help="use the templating version that wrote them, or another database; nothing was changed",
        )
    await conn.run_sync(t.metadata.create_all)
    if backend == "postgresql" and (version is None or upgraded):
        # Stored out of line but not compressed: compressing a large created state took most of a create's time
        # on the server (pglz), for documents that are mostly read whole.
        await conn.execute(
            sa.text(
                "ALTER TABLE templating_sessions ALTER COLUMN initial SET STORAGE EXTERNAL, "
                "ALTER COLUMN lookup SET STORAGE EXTERNAL"
            )
        )
    if version is None:
        await conn.execute(t.schema.insert().values(name="sessions", version=SCHEMA_VERSION))
