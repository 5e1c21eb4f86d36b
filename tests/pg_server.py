"""A throw-away PostgreSQL server for the tests and the benchmark: ``initdb`` + ``pg_ctl`` in a temp directory.

The binaries are found on ``PATH`` or under ``/usr/lib/postgresql/*/bin`` (Debian's ``postgresql``
package; the newest version wins). PostgreSQL refuses to run as root, so under root the server runs
as the unprivileged ``postgres`` user (which that package creates), in a directory it owns; as a
normal user it runs as that user. It listens on 127.0.0.1 on a free port, with a password (so URLs
carry one, as real ones do), fsync off (nothing in it has to survive a power cut), and is stopped and
deleted by :meth:`PostgresServer.stop`.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

USER, PASSWORD = "templating", "pg-secret-7"


def find_binaries() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``, or ``None``."""
    on_path = shutil.which("initdb"), shutil.which("pg_ctl")
    if on_path[0] and on_path[1] and Path(on_path[0]).parent == Path(on_path[1]).parent:
        return Path(on_path[0]).parent

    def version(path: str) -> tuple[int, ...]:
        return tuple(int(part) for part in re.findall(r"\d+", path))

    for directory in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True):
        if (Path(directory) / "initdb").is_file() and (Path(directory) / "pg_ctl").is_file():
            return Path(directory)
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class PostgresServer:
    """A running throw-away server; :meth:`url` names a database on it."""

    binaries: Path
    root: Path
    port: int
    account: pwd.struct_passwd | None  # whom the server runs as, when we are root
    _created: set[str] = field(default_factory=set)

    @classmethod
    def start(cls, binaries: Path) -> PostgresServer:
        account = None
        if os.geteuid() == 0:
            try:
                account = pwd.getpwnam("postgres")
            except KeyError:
                raise RuntimeError(
                    "PostgreSQL does not run as root, and there is no 'postgres' user to run it as "
                    "(Debian's postgresql package creates one)"
                ) from None
        # Not under pytest's tmp_path: its parents are private to root, and the server's user must reach this.
        root = Path(tempfile.mkdtemp(prefix="templating-pg-"))
        if account is not None:
            os.chown(root, account.pw_uid, account.pw_gid)
        (root / "pwfile").write_text(PASSWORD + "\n", encoding="utf-8")
        if account is not None:
            os.chown(root / "pwfile", account.pw_uid, account.pw_gid)
        server = cls(binaries=binaries, root=root, port=0, account=account)
        server._run(
            "initdb",
            "-D",
            str(root / "data"),
            "-U",
            USER,
            "--pwfile",
            str(root / "pwfile"),
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        last_error: Exception | None = None
        for _ in range(3):  # the free port can be taken between finding it and the server binding it
            server.port = _free_port()
            options = (
                f"-p {server.port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=100"
            )
            try:
                server._run(
                    "pg_ctl",
                    "-D",
                    str(root / "data"),
                    "-l",
                    str(root / "log"),
                    "-o",
                    options,
                    "-w",
                    "-t",
                    "600",
                    "start",
                )
            except RuntimeError as error:
                last_error = error
                continue
            return server
        server.stop()
        raise RuntimeError(f"the throw-away PostgreSQL server did not start: {last_error}")

    def _run(self, program: str, *args: str) -> None:
        extra: dict[str, Any] = {}
        if self.account is not None:
            extra = {"user": self.account.pw_uid, "group": self.account.pw_gid, "extra_groups": []}
        env = {**os.environ, "LC_ALL": "C", "HOME": str(self.root)}
        result = subprocess.run(
            [str(self.binaries / program), *args],
            capture_output=True,
            text=True,
            check=False,
            cwd=self.root,
            env=env,
            timeout=900,  # a bound on a hang (pg_ctl waits up to 600 s itself), never a verdict
            **extra,
        )
        if result.returncode != 0:
            log = self.root / "log"
            tail = log.read_text(encoding="utf-8", errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{program} failed ({result.returncode}): {result.stderr.strip()}\n{tail}")

    def url(self, database: str = "postgres", *, driver: str = "postgresql+asyncpg") -> str:
        return f"{driver}://{USER}:{PASSWORD}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """Create an empty database (dropping one of that name first); return its asyncpg URL."""
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
            raise ValueError(f"not a plain database name: {name!r}")

        async def create() -> None:
            import asyncpg  # the sql extra's driver

            conn = await asyncpg.connect(
                user=USER, password=PASSWORD, host="127.0.0.1", port=self.port, database="postgres"
            )
            try:
                await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
                await conn.execute(f"CREATE DATABASE {name}")
            finally:
                await conn.close()

        asyncio.run(create())
        self._created.add(name)
        return self.url(name)

    def fresh_database(self, name: str) -> str:
        """An empty database of that name: created the first time, emptied (every table dropped) after."""
        if name not in self._created:
            return self.create_database(name)

        async def empty() -> None:
            import asyncpg

            conn = await asyncpg.connect(user=USER, password=PASSWORD, host="127.0.0.1", port=self.port, database=name)
            try:
                await conn.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
            finally:
                await conn.close()

        asyncio.run(empty())
        return self.url(name)

    def stop(self) -> None:
        if (self.root / "data" / "postmaster.pid").exists():
            with contextlib.suppress(RuntimeError):
                self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)
