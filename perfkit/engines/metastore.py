"""Whether the Hive metastore the engines register tables with answers."""
from __future__ import annotations

from urllib.parse import urlsplit

from perfkit.config import Profile
from perfkit.errors import ServiceError


def check_metastore(profile: Profile) -> None:
    """The Hive metastore accepts connections (a thrift call is the engines' job; this names a service that is down)."""
    import socket

    address = urlsplit(profile.metastore_uri)
    where = f"Hive metastore at {address.hostname}:{address.port}"
    try:
        with socket.create_connection((address.hostname, address.port or 9083), timeout=5):
            pass
    except OSError as err:
        reason = err.strerror or type(err).__name__
        fix = profile.provider.fix("hive-metastore", "check the profile's metastore_uri and that the service runs")
        raise ServiceError(where, f"not reachable ({reason})", fix) from None
