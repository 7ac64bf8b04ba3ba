"""Network profiles: how far S3 sits from the engines, for the lab to emulate (`perfkit lab network`, `network=`).

A profile names a round-trip time (with jitter) and bandwidths; the lab puts them between every S3 client and its S3
server (Toxiproxy). On a cluster S3 is where it is: no profile applies, and the calibration measures the real path.
"""
from __future__ import annotations

import difflib
import math
from dataclasses import asdict, dataclass

from perfkit.errors import PerfkitError

VALUES = ("rtt_ms", "jitter_ms", "per_connection_mb_s", "total_mb_s")  # what a user may set, in MB = 10^6 bytes


@dataclass(frozen=True)
class NetworkProfile:
    name: str
    rtt_ms: float = 0.0  # round trip added to every request: half on the way to S3, half on the way back
    jitter_ms: float = 0.0  # +/- around the round trip
    per_connection_mb_s: float | None = None  # None: no limit but the machine's
    total_mb_s: float | None = None  # all S3 connections together
    source: str = ""  # where the figures come from

    @property
    def emulated(self) -> bool:
        """S3's clients go through the emulator: every profile but `local` (one with nothing added measures the
        emulator's own hop, the zero point of a sweep)."""
        return self.name != "local" or any((self.rtt_ms, self.jitter_ms, self.per_connection_mb_s, self.total_mb_s))

    def describe(self) -> str:
        """e.g. 'ec2-s3: 20 ms round trip ± 4 ms, 85 MB/s per connection'; 'local: none (S3 on this machine)'."""
        if not self.emulated:
            return f"{self.name}: none (S3 on this machine, over loopback)"
        parts = [f"{_num(self.rtt_ms)} ms round trip" + (f" ± {_num(self.jitter_ms)} ms" if self.jitter_ms else "")]
        if self.per_connection_mb_s:
            parts.append(f"{_num(self.per_connection_mb_s)} MB/s per connection")
        if self.total_mb_s:
            parts.append(f"{_num(self.total_mb_s)} MB/s in all")
        return f"{self.name}: {', '.join(parts)}"

    def as_dict(self) -> dict:
        return asdict(self)


PROFILES = {
    "local": NetworkProfile("local", source="the lab as it is: S3 on this machine over loopback"),
    # Same-region S3 from EC2. AWS's S3 performance guidelines: about 85-90 MB/s per connection (one concurrent
    # request per 85-90 MB/s wanted); published time-to-first-byte measurements of S3 reach ~30 ms for small
    # objects; 20 ms round trip with 4 ms jitter sits inside that range (the server's own ~4 ms comes on top here).
    "ec2-s3": NetworkProfile("ec2-s3", rtt_ms=20, jitter_ms=4, per_connection_mb_s=85,
                             source="S3 from EC2 in the same region: ~20-30 ms to first byte, 85-90 MB/s per "
                                    "connection (AWS S3 performance guidelines)"),
    # The on-premises study's object store on a 10 GbE network: a LAN round trip plus the store's request handling
    # (~2 ms) and one connection near what one disk-backed object server streams. The link's 10 Gbit/s (1250 MB/s)
    # is no limit here: the emulator carries ~250 MB/s on this kind of machine, and a total would need root.
    "onprem-10gbe": NetworkProfile("onprem-10gbe", rtt_ms=2, jitter_ms=0, per_connection_mb_s=300,
                                   source="an S3-compatible object store on premises over 10 GbE: ~2 ms per "
                                          "request, 300 MB/s per connection"),
}


def network_profile(spec: str | dict | NetworkProfile | None) -> NetworkProfile:
    """A profile from its name, or from values: {'rtt_ms': 20, ...} (optionally with 'base': a name to start from)."""
    if isinstance(spec, NetworkProfile):
        return check(spec)
    if spec is None or spec == "":
        return PROFILES["local"]
    if isinstance(spec, str):
        if spec not in PROFILES:
            close = difflib.get_close_matches(spec, list(PROFILES), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise PerfkitError(f"network profile {spec!r} is unknown: {hint}use one of {', '.join(PROFILES)}, or "
                               f"give your own values ({', '.join(VALUES)})")
        return PROFILES[spec]
    if not isinstance(spec, dict):
        raise PerfkitError(f"network {spec!r}: give a profile name ({', '.join(PROFILES)}) or a mapping of "
                           f"{', '.join(VALUES)}")
    values = dict(spec)
    base = network_profile(values.pop("base", None) or "local")
    unknown = sorted(set(values) - set(VALUES), key=str)
    if unknown:
        raise PerfkitError(f"network: no setting {', '.join(map(repr, unknown))}: the settings are {', '.join(VALUES)}")
    given = ", ".join(f"{k}={_num(v) if isinstance(v, (int, float)) else v}" for k, v in values.items())
    name = f"{base.name} with {given}" if base.name != "local" and given else ("custom" if given else base.name)
    merged = {**base.as_dict(), **values, "name": name,
              "source": f"{base.name} with {given}" if base.name != "local" else "the user's own values"}
    return check(NetworkProfile(**merged))


def check(profile: NetworkProfile) -> NetworkProfile:
    """Refuse what no network has: a negative delay, a bandwidth of zero (nothing would ever arrive)."""
    for name in VALUES:
        value = getattr(profile, name)
        if value is None and name in ("per_connection_mb_s", "total_mb_s"):
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise PerfkitError(f"network {profile.name}: {name} = {value!r} is not a number: give a finite number")
        if name in ("rtt_ms", "jitter_ms") and value < 0:
            raise PerfkitError(f"network {profile.name}: {name} = {_num(value)} is negative: a delay is 0 ms or more")
        if name.endswith("_mb_s") and value <= 0:
            raise PerfkitError(f"network {profile.name}: {name} = {_num(value)} would never deliver a byte: give "
                               "a bandwidth above 0 MB/s, or leave it out for no limit")
    for name in ("rtt_ms", "jitter_ms"):  # Toxiproxy delays by whole milliseconds: say so rather than round
        if getattr(profile, name) != int(getattr(profile, name)):
            raise PerfkitError(f"network {profile.name}: {name} = {_num(getattr(profile, name))} is not a whole "
                               "number of milliseconds, the emulator's resolution: round it")
    if profile.jitter_ms > profile.rtt_ms / 2:
        raise PerfkitError(f"network {profile.name}: jitter_ms {_num(profile.jitter_ms)} is more than half of rtt_ms "
                           f"{_num(profile.rtt_ms)}: the jitter rides on the way back (half the round trip), which "
                           "cannot be shorter than 0 ms. Fix: a smaller jitter_ms or a longer rtt_ms")
    return profile


def _num(value: float) -> str:
    return f"{value:g}"
