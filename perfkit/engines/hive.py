"""HiveServer2 through PyHive: the Spark Thrift Server in the lab, Hive on a cluster."""
from __future__ import annotations

from perfkit.engines import Engine, hive_ddl
from perfkit.errors import ServiceError


class QueryError(Exception):
    """A statement HiveServer2 refused, with its message and without the Java stack."""


def _server_message(err) -> str:
    status = getattr(err.args[0], "status", None) if err.args else None
    return getattr(status, "errorMessage", None) or str(err)[:500]


class HiveEngine(Engine):
    name = "hive"

    def __init__(self, profile):
        super().__init__(profile)
        self.conn = None

    def open(self) -> None:
        from pyhive import hive

        p = self.profile
        try:
            self.conn = hive.connect(p.hive_host, port=p.hive_port, username=p.hive_user, auth="NONE")
        except Exception as err:  # noqa: BLE001 - thrift raises transport errors of several types
            fix = "start the lab with `perfkit lab up`" if p.uses_lab else "check hive_host/hive_port in the profile"
            raise ServiceError(f"HiveServer2 at {p.hive_host}:{p.hive_port}", f"not reachable ({type(err).__name__})", fix) from None

    def execute(self, sql: str) -> list[tuple]:
        from pyhive.exc import OperationalError

        cursor = self.conn.cursor()
        try:
            cursor.execute(sql)
            return [tuple(row) for row in cursor.fetchall()] if cursor.description else []
        except OperationalError as err:
            raise QueryError(_server_message(err)) from None
        finally:
            cursor.close()

    def register_table(self, table, location, file_format, columns) -> None:
        for statement in hive_ddl(table, location, file_format, columns):
            self.execute(statement)

    def versions(self) -> dict[str, str]:
        try:
            return {"hiveserver2": str(self.execute("SELECT version()")[0][0])}
        except Exception:  # noqa: BLE001 - not every HiveServer2 has version()
            return {"hiveserver2": "?"}

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
