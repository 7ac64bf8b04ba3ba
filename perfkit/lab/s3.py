"""A real S3-compatible server (versitygw, posix backend: objects are plain files).

Its clients always send requests to the lab's `s3` port. With the network `local` the server listens there itself;
behind an emulated network it listens on `s3_behind_proxy` and the network's proxy takes the `s3` port
(perfkit.lab.s3_network). A network change so moves this one Go process, up again in about a second, and none of
the clients: the five S3 clients that are JVMs took 36 s to restart together, and reading the endpoint only at
start, each had to.
"""
from __future__ import annotations

import re
from pathlib import Path

from perfkit.errors import PerfkitError
from perfkit.lab import tools
from perfkit.lab.process import Daemon, command_line, set_aside_if_large
from perfkit.lab.s3_network import current_network
from perfkit.lab.service import Service
from perfkit.lab.settings import BUCKET, HOST, LabPorts, lab_credentials, lab_s3_endpoint


class S3Server(Service):
    name = "s3"

    def __init__(self, home: Path, ports: LabPorts):
        super().__init__(home, ports)
        self.root = home / "s3"
        # both ports are the server's: it moves between them (the proxy, a daemon of the lab, may hold `s3`)
        self.daemons = [Daemon("s3", home, "versitygw",
                               ports={"s3": ports.s3, "s3_behind_proxy": ports.s3_behind_proxy})]

    @property
    def port(self) -> int:
        """Where the server listens for the network the lab emulates now."""
        return self.ports.s3_behind_proxy if current_network(self.home).emulated else self.ports.s3

    @property
    def endpoint(self) -> str:
        """The server's own address (behind an emulated network, not the one its clients use)."""
        return f"http://{HOST}:{self.port}"

    def serving_port(self) -> int | None:
        """The port the running server listens on, read from its command line; None when it is not running."""
        pid = self.daemon.pid()
        found = re.search(rf"--port {re.escape(HOST)}:(\d+)", command_line(pid)) if pid else None
        return int(found.group(1)) if found else None

    def addresses(self) -> dict[str, str]:
        clients = lab_s3_endpoint(self.ports, self.home)
        through = "" if clients.rstrip("/") == self.endpoint.rstrip("/") else f"; its clients go through {clients}"
        return {"s3": f"{self.endpoint} (bucket {BUCKET}{through})"}

    def start(self) -> None:
        creds = lab_credentials(create=True, home=self.home)
        (self.root / BUCKET).mkdir(parents=True, exist_ok=True)  # posix backend: a folder is a bucket
        if self.daemon.pid() is None:
            set_aside_if_large(s3_access_log(self.home))
            # keys through the environment, so they never show in `ps`
            self.daemon.start(self.argv(), env={"ROOT_ACCESS_KEY_ID": creds["access_key"],
                                                "ROOT_SECRET_ACCESS_KEY": creds["secret_key"]})
        self.wait_healthy(self.daemon, 30, "read the log; is another S3 server on that port?")

    def argv(self, daemon: Daemon | None = None) -> list[str]:
        # --access-log: the server's own line per request, which perfkit counts each run's S3 requests from
        return [str(tools.versitygw()), "--port", f"{HOST}:{self.port}", "--quiet",
                "--access-log", str(s3_access_log(self.home)), "posix", str(self.root)]

    def health(self) -> tuple[bool, str]:
        """A signed HEAD of the lab bucket: proves the server, the keys and the bucket at once."""
        import boto3
        from botocore.config import Config
        from botocore.exceptions import BotoCoreError, ClientError

        serving = self.serving_port()
        if serving not in (None, self.port):
            return False, (f"listens on {serving}, but the network {current_network(self.home).name} wants it on "
                           f"{self.port}: `perfkit lab network NAME` moves it")
        try:
            creds = lab_credentials(home=self.home)
            client = boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                                  aws_access_key_id=creds["access_key"], aws_secret_access_key=creds["secret_key"],
                                  config=Config(retries={"max_attempts": 1}, connect_timeout=2, read_timeout=5))
            client.head_bucket(Bucket=BUCKET)
        except (BotoCoreError, ClientError, PerfkitError) as err:
            return False, f"HEAD {BUCKET} failed: {str(err)[:80]}"
        return True, f"bucket {BUCKET} answers"


def s3_access_log(home: Path) -> Path:
    """Where the lab's S3 server logs each request it answers (perfkit.storages.s3_access_log reads it)."""
    return home / "logs" / "s3-access.log"
