"""One run's I/O as its record keeps it: the storages' own count (`server`), the engine's (`engine`), which sources
counted each side, whether the counts are the run's own (`attributable`), why a side has no count (`missing`) and
why a counter the server's sources do not count is blank (`not_counted`).

The record's `io` stays JSON (RunIO.stored); everything that reads it goes through RunIO.of, which also reads runs of
an older perfkit (no I/O at all, or a not-counted counter stored among `missing` as "server.counter")."""
from __future__ import annotations

from dataclasses import dataclass, field

SIDES = ("server", "engine")


@dataclass
class RunIO:
    server: dict[str, float] | None = None  # None: not counted (why: missing["server"])
    engine: dict[str, float] | None = None
    sources: dict[str, str] = field(default_factory=dict)  # side -> the sources that counted it
    attributable: bool = True
    missing: dict[str, str] = field(default_factory=dict)  # side -> why it has no count
    not_counted: dict[str, str] = field(default_factory=dict)  # a counter of the server's side -> why it is blank

    @property
    def counted(self) -> bool:
        """Whether either side counted the run (runs of a perfkit before I/O accounting have neither)."""
        return self.server is not None or self.engine is not None

    def counts(self, side: str) -> dict[str, float]:
        """A side's counters; empty when the side did not count the run."""
        return getattr(self, side) or {}

    def drop(self, side: str, why: str) -> None:
        """The side's count is not the run's (another run overlapped it, or the engine was still busy): why."""
        setattr(self, side, None)
        self.missing[side] = why

    def gaps(self) -> list[tuple[str, str, str]]:
        """(side, counter, why) for each side with no count (counter "") and each counter left blank."""
        return ([(side, "", why) for side, why in self.missing.items()]
                + [("server", counter, why) for counter, why in self.not_counted.items()])

    def stored(self) -> dict:
        """The record's JSON: a side that did not count is absent, as in every record perfkit wrote; a run that no
        accounting looked at (it failed before its I/O was read) stores nothing."""
        if self == RunIO():
            return {}
        io: dict = {"sources": dict(self.sources), "missing": dict(self.missing), "attributable": self.attributable}
        io.update({side: dict(counts) for side in SIDES if (counts := getattr(self, side)) is not None})
        if self.not_counted:
            io["not_counted"] = dict(self.not_counted)
        return io

    @classmethod
    def of(cls, stored) -> RunIO:
        """A record's io (a dict; None or NaN for a run with none) as a RunIO."""
        if not isinstance(stored, dict):
            return cls()
        missing, not_counted = {}, dict(stored.get("not_counted") or {})
        for key, why in (stored.get("missing") or {}).items():
            side, _, counter = key.partition(".")
            if counter:  # an older record: "server.s3_bytes_read" among the sides
                not_counted[counter] = why
            else:
                missing[side] = why
        return cls(server=stored.get("server"), engine=stored.get("engine"), sources=dict(stored.get("sources") or {}),
                   attributable=bool(stored.get("attributable", True)), missing=missing, not_counted=not_counted)
