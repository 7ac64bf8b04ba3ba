"""The lab's S3 at a distance: Toxiproxy between every S3 client and the S3 server, with the network profile's
round trip and bandwidths as its toxics. HDFS stays local, as with data locality on a cluster.

The proxy always runs with the lab (it is light). S3's clients always use the lab's `s3` port: while a profile emulates
a network the proxy listens there and the S3 server sits behind it on `s3_behind_proxy`; with `local` the proxy's
listener is off and the server takes the port itself (perfkit.lab.s3), so the clients reach it straight, as before.
The profile is kept in the lab home, so a restarted proxy gets its toxics back; the toxics live only in the proxy's
memory: `lab down` leaves no rule anywhere.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

from perfkit import atomic
from perfkit.errors import PerfkitError
from perfkit.kept_alive_http import KeptAliveHttp
from perfkit.lab import tools
from perfkit.lab.process import Daemon
from perfkit.lab.service import Service
from perfkit.lab.settings import HOST, LabPorts, checked_home
from perfkit.network import PROFILES, NetworkProfile, check

PROXY = "s3"  # the proxy's name in Toxiproxy
NETWORK_FILE = "s3-network.json"  # in the lab home: the profile the lab emulates


def current_network(home: Path) -> NetworkProfile:
    """The network profile the lab emulates now (`local` when none was set)."""
    path = checked_home(home) / NETWORK_FILE
    if not path.is_file():
        return PROFILES["local"]
    try:
        return check(NetworkProfile(**json.loads(path.read_text(encoding="utf-8"))))
    except (ValueError, TypeError) as err:
        raise PerfkitError(f"lab: the network setting {path} is unreadable ({err}). Fix: set it again with "
                           "`perfkit lab network PROFILE`") from None


def save_network(network: NetworkProfile, home: Path) -> None:
    atomic.write_text(checked_home(home) / NETWORK_FILE, json.dumps(network.as_dict()) + "\n")


def toxics(network: NetworkProfile) -> list[dict]:
    """Toxiproxy's toxics for a profile. Toxiproxy delays by whole milliseconds: half the round trip on the way to
    S3 (upstream), the rest and the jitter on the way back; bandwidth in KB/s (1 KB = 1000 bytes) per connection,
    both ways."""
    found = []
    going = int(network.rtt_ms) // 2
    coming = int(network.rtt_ms) - going
    if going:
        found.append(_toxic("rtt_upstream", "latency", "upstream", latency=going, jitter=0))
    if coming or network.jitter_ms:
        found.append(_toxic("rtt_downstream", "latency", "downstream", latency=coming, jitter=int(network.jitter_ms)))
    if network.per_connection_mb_s:
        rate = round(network.per_connection_mb_s * 1000)
        found += [_toxic(f"bandwidth_{way}", "bandwidth", way, rate=rate) for way in ("upstream", "downstream")]
    return found


def _toxic(name: str, kind: str, stream: str, **attributes) -> dict:
    return {"name": name, "type": kind, "stream": stream, "toxicity": 1.0, "attributes": attributes}


class TotalBandwidth:
    """All S3 connections together held to total_mb_s by the kernel: an HTB class on loopback for the proxy's port
    (Toxiproxy limits each connection only). Needs root and `tc`; traffic on other ports is not classified and passes
    untouched (HTB sends unclassified packets straight on). Only a qdisc this lab added is ever removed."""

    def __init__(self, home: Path, port: int):
        self.port, self.mark = port, home / "s3-network.tc"  # the mark: this lab added the qdisc

    def set(self, mb_s: float | None) -> None:
        self.clear()
        if not mb_s:
            return
        tc = shutil.which("tc")
        if os.geteuid() != 0 or not tc:
            raise PerfkitError(f"network total_mb_s={mb_s:g}: the lab holds all S3 connections to a total with the "
                               "kernel's traffic control, which needs root and `tc` (iproute2). Fix: run as root with "
                               "iproute2 installed, or leave total_mb_s out (per_connection_mb_s needs neither)")
        root = subprocess.run([tc, "qdisc", "show", "dev", "lo", "root"], capture_output=True, text=True).stdout
        if "noqueue" not in root and root.strip():
            raise PerfkitError(f"network total_mb_s: loopback already has a queueing discipline ({root.strip()}), "
                               "not the lab's: perfkit will not replace it. Fix: remove it, or leave total_mb_s out")
        rate = f"{mb_s * 8:g}mbit"
        self.mark.write_text("htb on lo\n")
        for argv in (["qdisc", "add", "dev", "lo", "root", "handle", "1:", "htb"],
                     ["class", "add", "dev", "lo", "parent", "1:", "classid", "1:1", "htb", "rate", rate, "ceil", rate],
                     *(["filter", "add", "dev", "lo", "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match",
                        "ip", way, str(self.port), "0xffff", "flowid", "1:1"] for way in ("sport", "dport"))):
            run = subprocess.run([tc, *argv], capture_output=True, text=True)
            if run.returncode:
                self.clear()
                raise PerfkitError(f"network total_mb_s: `tc {' '.join(argv)}` failed: {run.stderr.strip()}")

    def clear(self) -> None:
        if self.mark.exists():
            subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], capture_output=True)
            self.mark.unlink()


class S3Network(Service):
    name = "s3-network"
    needs = ("s3",)

    def __init__(self, home: Path, ports: LabPorts):
        super().__init__(home, ports)
        # its proxy's listener takes the s3 port only while a network is emulated: S3Server lists that port
        self.daemons = [Daemon("toxiproxy", home, "toxiproxy-server", ports={"toxiproxy": ports.toxiproxy})]
        self.config = home / "toxiproxy.json"
        self.total = TotalBandwidth(home, ports.s3)
        self._metrics = KeptAliveHttp()  # read around every run on S3 (perfkit.accounting): a round trip, kept

    @property
    def endpoint(self) -> str:
        """Where S3's clients send requests to go through the emulated network (the s3 port)."""
        return f"http://{HOST}:{self.ports.s3}"

    @property
    def api(self) -> str:
        return f"http://{HOST}:{self.ports.toxiproxy}"

    def addresses(self) -> dict[str, str]:
        if not current_network(self.home).emulated:
            return {"toxiproxy": f"API {self.api} (listens on {self.endpoint} while a network is emulated)"}
        return {"toxiproxy": f"{self.endpoint} -> S3 at {HOST}:{self.ports.s3_behind_proxy} (API {self.api})"}

    def argv(self, daemon: Daemon | None = None) -> list[str]:
        # -proxy-metrics: byte totals per proxy and direction at /metrics (every S3 client's traffic is counted)
        return [str(tools.toxiproxy()), "-host", HOST, "-port", str(self.ports.toxiproxy), "-proxy-metrics",
                "-config", str(self.config)]

    def start(self) -> None:
        if self.daemon.pid() is None:
            # the listener off at first: apply() opens it once the S3 server has left the s3 port
            atomic.write_text(self.config, json.dumps([{"name": PROXY, "listen": f"{HOST}:{self.ports.s3}",
                                                        "upstream": f"{HOST}:{self.ports.s3_behind_proxy}",
                                                        "enabled": False}]))
            self.daemon.start(self.argv(), env={"LOG_LEVEL": "warn"})  # not a line per API call and connection
        # the proxy answering is enough here: health() also wants the toxics, which apply() puts in next
        self.daemon.wait_until(self._answers, 20, "read the log; is another program on the Toxiproxy ports?")
        self.apply(current_network(self.home))

    def _answers(self) -> bool:
        try:
            return self._request("GET", f"/proxies/{PROXY}").get("name") == PROXY
        except PerfkitError:
            return False

    def apply(self, network: NetworkProfile) -> None:
        """Replace the proxy's toxics by the profile's (existing connections follow at once), and listen on the s3
        port while the profile emulates a network (the S3 server is then behind it: S3Server.port)."""
        proxy = self._request("GET", f"/proxies/{PROXY}")
        for toxic in proxy.get("toxics") or []:
            self._request("DELETE", f"/proxies/{PROXY}/toxics/{toxic['name']}")
        for toxic in toxics(network):
            self._request("POST", f"/proxies/{PROXY}/toxics", toxic)
        if bool(proxy.get("enabled")) != network.emulated:
            self._listen(network.emulated)
        self.total.set(network.total_mb_s)

    def close(self) -> None:
        """Turn the proxy's listener off (its connections end): the s3 port is free for the S3 server itself."""
        if self.daemon.pid() is not None:
            self._listen(False)

    def _listen(self, on: bool) -> None:
        self._request("POST", f"/proxies/{PROXY}", {"enabled": on})

    def stop(self) -> list[str]:
        self.total.clear()
        return super().stop()

    def proxied_bytes(self) -> dict[str, float]:
        """Bytes the proxy carried since it started, by direction: {'upstream': to S3, 'downstream': from S3}."""
        response = self._metrics.get(f"{self.api}/metrics", timeout=5)
        response.raise_for_status()
        text = response.content.decode()
        totals = {"upstream": 0.0, "downstream": 0.0}
        for line in text.splitlines():
            if line.startswith("toxiproxy_proxy_sent_bytes_total{") and f'proxy="{PROXY}"' in line:
                for way in totals:
                    if f'direction="{way}"' in line:
                        totals[way] += float(line.rsplit(" ", 1)[1])
        return totals

    def health(self) -> tuple[bool, str]:
        try:
            proxy = self._request("GET", f"/proxies/{PROXY}")
        except PerfkitError as err:
            return False, str(err)[:120]
        network = current_network(self.home)
        if bool(proxy.get("enabled")) != network.emulated:
            return False, (f"network {network.name} set, but the proxy's listener is "
                           f"{'on' if proxy.get('enabled') else 'off'}: `perfkit lab network {network.name}` sets it")
        have = sorted(t["name"] for t in proxy.get("toxics") or [])
        if have != sorted(t["name"] for t in toxics(network)):
            return False, f"network {network.name} set, but the proxy has toxics {have or 'none'}"
        if not network.emulated:
            return True, "network local: listener off, S3's clients reach the server itself"
        return True, f"network {network.describe()}"

    def _request(self, method: str, path: str, body: dict | None = None) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.api}{path}", data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                raw = response.read()
        except urllib.error.HTTPError as err:
            raise PerfkitError(f"Toxiproxy {method} {path}: {err.code} "
                               f"{err.read().decode(errors='replace')[:200]}") from None
        except (urllib.error.URLError, OSError) as err:
            raise PerfkitError(f"Toxiproxy at {self.api} is not answering ({err}). "
                               "Fix: perfkit lab up s3-network") from None
        return json.loads(raw) if raw.strip() else {}
