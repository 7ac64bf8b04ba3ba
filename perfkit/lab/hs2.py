"""A HiveServer2 endpoint's health: real Hive and the Spark Thrift Server both speak its thrift protocol."""
from __future__ import annotations

from perfkit.lab.process import port_in_use
from perfkit.lab.settings import HOST


def connect(port: int, timeout_s: float, host: str = HOST):
    """pyhive's own connect waits forever on a port that accepts but never answers (another program on it)."""
    import thrift_sasl
    from pyhive import hive
    from thrift.transport.TSocket import TSocket

    sock = TSocket(host, port)
    sock.setTimeout(timeout_s * 1000)
    # what hive.connect(auth="NONE") builds, with the time limit on its socket
    sasl = thrift_sasl.TSaslClientTransport(lambda: hive.get_installed_sasl(
        host=host, sasl_auth="PLAIN", username="perfkit", password="x"), "PLAIN", sock)
    return hive.connect(thrift_transport=sasl, username="perfkit")


def select_one(port: int, timeout_s: float, host: str = HOST) -> tuple[bool, str]:
    """(healthy, detail): `SELECT 1` answered within timeout_s."""
    if not port_in_use(host, port):
        return False, "port not open"
    try:
        with connect(port, timeout_s, host) as conn:
            cursor = conn.cursor()
            cursor.execute("SELECT 1")
            cursor.fetchall()
    except Exception as err:  # noqa: BLE001 - any failure means "not healthy yet"
        return False, f"SELECT 1 failed: {str(err)[:80]}"
    return True, "SELECT 1 ok"
