"""A real S3-compatible server (versitygw, posix backend: objects are plain files)."""
from __future__ import annotations

from pathlib import Path

from perfkit.errors import PerfkitError
from perfkit.lab import tools
from perfkit.lab.process import Daemon, set_aside_if_large
from perfkit.lab.service import Service
from perfkit.lab.settings import BUCKET, HOST, LabPorts, lab_credentials, lab_s3_endpoint


class S3Server(Service):
    name = "s3"

    def __init__(self, home: Path, ports: LabPorts):
        super().__init__(home, ports)
        self.root = home / "s3"
        self.daemons = [Daemon("s3", home, "versitygw", ports={"s3": ports.s3})]

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.ports.s3}"

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
        return [str(tools.versitygw()), "--port", f"{HOST}:{self.ports.s3}", "--quiet",
                "--access-log", str(s3_access_log(self.home)), "posix", str(self.root)]

    def health(self) -> tuple[bool, str]:
        """A signed HEAD of the lab bucket: proves the server, the keys and the bucket at once."""
        import boto3
        from botocore.config import Config
        from botocore.exceptions import BotoCoreError, ClientError

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
    """Where the lab's S3 server logs each request it answers (perfkit.accounting.s3_access_log reads it)."""
    return home / "logs" / "s3-access.log"
