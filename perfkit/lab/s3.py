"""A real S3-compatible server (versitygw, posix backend: objects are plain files)."""
from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

from perfkit.lab import tools
from perfkit.lab.process import Daemon
from perfkit.lab.settings import BUCKET, HOST, LabPorts, lab_credentials


class S3Server:
    name = "s3"

    def __init__(self, home: Path, ports: LabPorts):
        self.home, self.ports = home, ports
        self.root = home / "s3"
        self.daemon = Daemon("s3", home, "versitygw")
        self.daemons = [self.daemon]

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.ports.s3}"

    def addresses(self) -> dict[str, str]:
        return {"s3": f"{self.endpoint} (bucket {BUCKET})"}

    def ports_needed(self) -> dict[str, int]:
        return {"s3": self.ports.s3}

    def start(self) -> None:
        creds = lab_credentials(create=True)
        (self.root / BUCKET).mkdir(parents=True, exist_ok=True)  # posix backend: a folder is a bucket
        if self.daemon.pid() is None:
            argv = [str(tools.versitygw()), "--port", f"{HOST}:{self.ports.s3}", "--quiet", "posix", str(self.root)]
            # keys through the environment, so they never show in `ps`
            self.daemon.start(argv, env={"ROOT_ACCESS_KEY_ID": creds["access_key"],
                                         "ROOT_SECRET_ACCESS_KEY": creds["secret_key"]})
        self.daemon.wait_until(lambda: self.health()[0], 30, "read the log; is another S3 server on that port?")

    def stop(self) -> list[str]:
        return [self.daemon.name] if self.daemon.stop() else []

    def health(self) -> tuple[bool, str]:
        try:
            urllib.request.urlopen(self.endpoint, timeout=2)
        except urllib.error.HTTPError as err:  # an S3 error document: the server is up (unsigned request)
            return err.code in (400, 403), f"HTTP {err.code}"
        except OSError as err:
            return False, f"no answer ({err})"
        return True, "answering"
