"""PostgreSQL's `create_session` as one statement (`Statements.create_at_once`): the app's and user's rows made or
moved to their next revision, the session's row, and the rows of each scope's values, which the server runs as a
transaction of its own (one round trip)."""

from __future__ import annotations

from ..base import APP, SESSION, USER
from .state_rows import StateRows

__all__ = ["create_sql"]

# The rows of `create_at_once`'s statement that own each scope's values, and the revision they are written at.
_OWNERS = {
    SESSION: ("(SELECT pk FROM session_row)", "CAST(1 AS bigint)"),
    USER: ("(SELECT pk FROM user_row)", "(SELECT revision FROM user_row)"),
    APP: ("(SELECT pk FROM app_row)", "(SELECT revision FROM app_row)"),
}


def _stored(index: int, owner: str) -> str:
    """SQL: the state of a user's or app's row as stored, one JSON object text (NULL for none)."""
    return (
        "(SELECT '{' || string_agg(coalesce(s.long_key, CAST(to_json(s.name) AS text)) || ':' || s.value, ',') "
        f"|| '}}' FROM templating_state AS s WHERE s.scope = {index} AND s.owner = {owner})"
    )


def _scope_row(index: int, table: str, keys: dict[str, str], after: str | None, *, writes: bool) -> list[str]:
    """The rows (WITH items) of `create_sql` that give the user's or app's row (`index`) as `{name}_row`: its pk,
    revision and stored state, made if missing (after a row of `after`, so rows are locked in order). If the
    create `writes` to it, an upsert moves it to its next revision (and locks it); else it is read, unlocked,
    and made only if missing, so creates that do not write to an app's state never wait on one another."""
    name = "app" if index == APP else "user"
    columns = ", ".join(keys)
    values = ", ".join(f"CAST(:{parameter} AS text)" for parameter in keys.values())
    source = f" FROM {after}_row" if after else ""
    if writes:
        return [
            f"{name}_row AS (INSERT INTO {table} AS r ({columns}, revision) SELECT {values}, 1{source} "
            f"ON CONFLICT ({columns}) DO UPDATE SET revision = r.revision + 1 "
            f"RETURNING r.pk, r.revision, {_stored(index, 'r.pk')} AS stored)"
        ]
    match = " AND ".join(f"r.{column} = CAST(:{parameter} AS text)" for column, parameter in keys.items())
    missing = f"NOT EXISTS (SELECT 1 FROM {name}_found)"
    return [
        f"{name}_found AS (SELECT r.pk, r.revision, {_stored(index, 'r.pk')} AS stored FROM {table} AS r "
        f"WHERE {match})",
        # Made by another writer since this statement began: nothing comes back, and the create is tried again.
        f"{name}_made AS (INSERT INTO {table} AS r ({columns}, revision) SELECT {values}, 0{source} "
        f"WHERE {missing} ON CONFLICT ({columns}) DO NOTHING RETURNING r.pk, r.revision, CAST(NULL AS text))",
        f"{name}_row AS (SELECT * FROM {name}_found UNION ALL SELECT * FROM {name}_made)",
    ]


def create_sql(forms: tuple[str, ...], present: list[int]) -> str:
    """PostgreSQL: the one statement of `create_at_once`, for values of those forms in the scopes `present`.
    Each row is written from the one before it (user from app, session from user, values once the session's
    row is made), so the app's row is locked before the user's, and nothing is written unless the session is."""
    rows = [
        *_scope_row(APP, "templating_apps", {"app_name": "app_name"}, None, writes=APP in present),
        *_scope_row(
            USER, "templating_users", {"app_name": "app_name", "user_id": "user_id"}, "app", writes=USER in present
        ),
        "session_row AS (INSERT INTO templating_sessions (user_pk, session_id, token, revision, event_count, "
        "last_update_time, initial, lookup) SELECT pk, CAST(:session_id AS text), CAST(:token AS text), 1, 0, "
        "CAST(:now AS double precision), CAST(:initial AS text), (SELECT jsonb_object_agg(j.key, "
        "CAST(j.value AS text)) FROM json_each(CAST(:initial AS json)) AS j) FROM user_row RETURNING pk)",
    ]
    # The session's values are new rows (a plain insert, twice as fast as an upsert); the user's and app's may
    # replace stored ones.
    made = "EXISTS (SELECT 1 FROM session_row)"
    fresh = 1 if present[:1] == [SESSION] else 0
    if fresh:
        values = StateRows.insert_rows(forms[:1], [_OWNERS[SESSION]], fresh=True, where=made)
        rows.append(f"session_values AS ({values})")
    if forms[fresh:]:
        owners = [_OWNERS[index] for index in present[fresh:]]
        values = StateRows.insert_rows(forms[fresh:], owners, fresh=False, first=fresh, where=made)
        rows.append(f"scope_values AS ({values})")
    return (
        f"WITH {', '.join(rows)} SELECT a.revision, a.stored, u.revision, u.stored "
        "FROM app_row AS a, user_row AS u, session_row"
    )
