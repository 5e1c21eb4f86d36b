"""The tables of the database service, version `SCHEMA_VERSION`, and how a database is prepared for it.

Tables (all prefixed `templating_`): one row per app and per app and user (the revision of their `app:` and
`user:` state), per session, per stored event, and one row per state key of each scope (its JSON text and
the scope revision that last wrote it), plus a schema-version row; times are epoch seconds in a double
column, the same on SQLite and PostgreSQL. A database holding another version, or
`templating_*` tables without one, is refused and left as it is: there is no migration.
"""

from __future__ import annotations

from dataclasses import dataclass

from .driver import SessionStoreError

try:
    import sqlalchemy as sa
    from sqlalchemy.ext.asyncio import AsyncConnection
except ImportError:  # the sql extra is not installed: the service says so when it is made
    pass

__all__ = ["SCHEMA_VERSION", "Owner", "Tables", "owners_of", "prepare", "tables"]

SCHEMA_VERSION = 2
"""The layout of the tables this package writes. A database holding another version is refused.

Version 2: state is one row per key (`templating_state_values`); version 1 kept each scope's
state as one JSON document, which every append decoded and wrote again whole."""


@dataclass(frozen=True)
class Tables:
    metadata: sa.MetaData
    schema: sa.Table
    apps: sa.Table
    users: sa.Table
    sessions: sa.Table
    events: sa.Table
    values: sa.Table


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
        "templating_app_states",
        metadata,
        sa.Column("app_name", sa.Text, primary_key=True),
        sa.Column("revision", sa.BigInteger, nullable=False),
    )
    users = sa.Table(
        "templating_user_states",
        metadata,
        sa.Column("app_name", sa.Text, primary_key=True),
        sa.Column("user_id", sa.Text, primary_key=True),
        sa.Column("revision", sa.BigInteger, nullable=False),
    )
    sessions = sa.Table(
        "templating_sessions",
        metadata,
        sa.Column("pk", big, primary_key=True, autoincrement=True),  # creation order
        sa.Column("app_name", sa.Text, nullable=False),
        sa.Column("user_id", sa.Text, nullable=False),
        sa.Column("session_id", sa.Text, nullable=False),
        sa.Column("token", sa.Text, nullable=False),  # new for every session created: tells copies apart
        sa.Column("revision", sa.BigInteger, nullable=False),
        sa.Column("event_count", sa.BigInteger, nullable=False),
        sa.Column("last_update_time", sa.Double, nullable=False),
        sa.UniqueConstraint("app_name", "user_id", "session_id", name="templating_sessions_key"),
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
    # One row per key of each scope, owned by (app_name, user_id, session_pk): a session's own keys by
    # its row's pk, a user's by (app, user, 0), an app's by (app, "", 0) (user ids are never blank).
    values = sa.Table(
        "templating_state_values",
        metadata,
        sa.Column("app_name", sa.Text, primary_key=True),
        sa.Column("user_id", sa.Text, primary_key=True),
        sa.Column("session_pk", sa.BigInteger, primary_key=True),
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("value", sa.Text, nullable=False),  # JSON text
        sa.Column("written", sa.BigInteger, nullable=False),  # the scope revision that last wrote it
    )
    return Tables(metadata, schema, apps, users, sessions, events, values)


Owner = tuple[str, str, int]
"""Who owns a row of state values: (app_name, user_id, session_pk), see `tables`."""


def owners_of(app_name: str, user_id: str, session_pk: int) -> tuple[Owner, Owner, Owner]:
    """The owners of a session's scopes, in the order of `Scopes`: the session, its user, its app."""
    return (app_name, user_id, session_pk), (app_name, user_id, 0), (app_name, "", 0)


async def prepare(conn: AsyncConnection, t: Tables, *, backend: str, url: str) -> None:
    """Create the tables if there are none, and check the schema version, in the transaction of `conn` (a write)."""
    if backend == "postgresql":  # DDL is transactional: one creator at a time
        await conn.execute(sa.text("SELECT pg_advisory_xact_lock(7240118)"))
    existing = set(await conn.run_sync(lambda sync: sa.inspect(sync).get_table_names()))
    version = None
    if t.schema.name in existing:
        version = (await conn.execute(sa.select(t.schema.c.version).where(t.schema.c.name == "sessions"))).scalar()
    foreign = sorted(existing & {table.name for table in (t.apps, t.users, t.sessions, t.events, t.values)})
    if version is None and foreign:  # checked before anything is created: nothing changes
        raise SessionStoreError(
            f"tables named templating_* exist in {url!r} without a schema version: written by "
            f"something else ({', '.join(foreign)})",
            url=url,
            help="use another database, or drop those tables if nothing needs them; nothing was changed",
        )
    if version is not None and version != SCHEMA_VERSION:
        older = (
            " (version 1 kept each scope's state as one JSON document; version 2 stores one row per "
            "state key, so that an append writes only the keys it changes)"
            if version == 1
            else ""
        )
        raise SessionStoreError(
            f"the session tables in {url!r} have schema version {version}, and this version of "
            f"templating reads version {SCHEMA_VERSION}{older}",
            url=url,
            help="use the templating version that wrote them, or another database; nothing was changed",
        )
    await conn.run_sync(t.metadata.create_all)
    if version is None:
        await conn.execute(t.schema.insert().values(name="sessions", version=SCHEMA_VERSION))
