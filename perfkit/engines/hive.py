"""HiveServer2 through PyHive: the Spark Thrift Server in the lab, Hive on a cluster."""
from __future__ import annotations

import logging
import time
from contextlib import contextmanager

from perfkit.engines import Engine, QueryTimeout, hive_ddl
from perfkit.errors import ServiceError, root_cause

POLL_S = 0.01  # with a time limit the statement runs asynchronously and is polled this often


# thrift logs "Could not connect to any of [...]" (a traceback for an unknown host) before it raises;
# Python's last-resort handler prints that on stderr, ahead of perfkit's own message with the fix
THRIFT_LOGGER = "thrift.transport.TSocket"


@contextmanager
def _quiet(logger_name: str):
    logger = logging.getLogger(logger_name)
    was, logger.disabled = logger.disabled, True
    try:
        yield
    finally:
        logger.disabled = was


class QueryError(Exception):
    """A statement HiveServer2 refused, with its message and without the Java stack."""


def _server_message(err) -> str:
    status = getattr(err.args[0], "status", None) if err.args else None
    return root_cause(getattr(status, "errorMessage", None) or str(err), 500)


class HiveEngine(Engine):
    name = "hive"

    def __init__(self, profile):
        super().__init__(profile)
        self.conn = None

    def open(self) -> None:
        from pyhive import hive

        p = self.profile
        try:
            with _quiet(THRIFT_LOGGER):
                self.conn = hive.connect(p.hive_host, port=p.hive_port, username=p.hive_user, auth="NONE")
        except Exception as err:  # noqa: BLE001 - thrift raises transport errors of several types
            fix = "start it with `perfkit lab up hiveserver2`" if p.uses_lab else "check hive_host/hive_port in the profile"
            why = getattr(err, "inner", None) or err  # thrift keeps the socket error (refused, unknown host) inside
            raise ServiceError(f"HiveServer2 at {p.hive_host}:{p.hive_port}",
                               f"not reachable ({type(err).__name__}: {root_cause(why)})", fix) from None

    def execute(self, sql: str, timeout_s: float | None = None) -> list[tuple]:
        from pyhive.exc import OperationalError

        cursor = self.conn.cursor()
        try:
            if timeout_s:
                self._wait(cursor, sql, timeout_s)
            else:
                cursor.execute(sql)
            return [tuple(row) for row in cursor.fetchall()] if cursor.description else []
        except OperationalError as err:
            raise QueryError(_server_message(err)) from None
        finally:
            cursor.close()

    @staticmethod
    def _wait(cursor, sql: str, timeout_s: float) -> None:
        """Run asynchronously and poll: the thrift connection cannot be used from a second thread."""
        from TCLIService.ttypes import TOperationState

        running = (TOperationState.INITIALIZED_STATE, TOperationState.PENDING_STATE, TOperationState.RUNNING_STATE)
        deadline = time.monotonic() + timeout_s
        cursor.execute(sql, async_=True)
        while cursor.poll().operationState in running:
            if time.monotonic() > deadline:
                cursor.cancel()
                raise QueryTimeout(timeout_s)
            time.sleep(POLL_S)
        if time.monotonic() > deadline:  # the server may answer only when done: past the limit all the same
            raise QueryTimeout(timeout_s)

    def register_table(self, table, location, file_format, columns) -> None:
        self.drop_own_table(table)
        self.execute(hive_ddl(table, location, file_format, columns))

    def versions(self) -> dict[str, str]:
        try:
            return {"hiveserver2": str(self.execute("SELECT version()")[0][0])}
        except Exception:  # noqa: BLE001 - not every HiveServer2 has version()
            return {"hiveserver2": "?"}

    def close(self) -> None:
        """Close quietly: a server that died mid-run is already recorded in the runs, not raised again here."""
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # noqa: BLE001 - thrift raises transport errors of several types
                pass
            self.conn = None
