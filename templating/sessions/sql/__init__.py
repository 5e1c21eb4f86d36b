"""Sessions in a database: SQLite embedded (one file, no server) or PostgreSQL (many workers, many machines).

[`DatabaseSessionService`][templating.DatabaseSessionService] stores what
[`InMemorySessionService`][templating.InMemorySessionService] keeps in memory, with the same interface,
semantics and errors: both are a [`SessionService`][templating.SessionService], which does every check and
applies every rule; this package only reads and writes rows, on SQLAlchemy 2's asyncio API
(`agent-prompt-templating[sql]`). Its modules: `driver` (the `sql` extra, URLs, errors, the service's event
loop), `schema` (the tables and their version), `state_rows` (state in bulk), `statements` (each primitive's
reads and writes in one transaction; PostgreSQL's one-statement create in `create_sql`) and `service`
(`DatabaseSessionService`: connections, transactions, timeouts).
"""

from __future__ import annotations

from .driver import SessionStoreError
from .schema import SCHEMA_VERSION
from .service import DEFAULT_STATEMENT_TIMEOUT, DatabaseSessionService

__all__ = ["DEFAULT_STATEMENT_TIMEOUT", "SCHEMA_VERSION", "DatabaseSessionService", "SessionStoreError"]
