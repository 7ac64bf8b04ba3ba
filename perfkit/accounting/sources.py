"""The storages' own counters a profile offers, found the same way in the lab and on a cluster: each storage data
is placed on says what its servers count of a run (Storage.server_counting)."""
from __future__ import annotations

from dataclasses import dataclass, field

from perfkit.storages import get_storage, placed
from perfkit.storages.base import Counted


@dataclass
class ServerSources:
    """The storages' own counters a profile offers: the sources read around each run (each with a `name`, the
    `storage` it counts, None for every storage, and `read()`), and what a run on a storage says instead: why that
    storage's own count is not read per run (`not_per_run`), why one counter of it is blank (`not_counted`)."""
    read: list = field(default_factory=list)
    not_per_run: dict[str, str] = field(default_factory=dict)  # storage -> why
    not_counted: dict[str, dict[str, str]] = field(default_factory=dict)  # storage -> {counter: why}

    def on(self, storage: str | None) -> ServerSources:
        """What a run on `storage` reads and says (None: every storage's): a snapshot costs round trips, and a run
        pays two."""
        if storage is None:
            return self
        return ServerSources([s for s in self.read if getattr(s, "storage", None) in (None, storage)],
                             {k: why for k, why in self.not_per_run.items() if k == storage},
                             {k: whys for k, whys in self.not_counted.items() if k == storage})


def server_sources(profile) -> ServerSources:
    """What the servers of every storage data is placed on count of a run, and what they do not, with why (each run
    then says it): on the lab, S3's request log and HDFS's NameNode and DataNode JMX."""
    found = ServerSources()
    for name in placed():
        counting = get_storage(name, profile).server_counting()
        if counting is None:
            continue
        found.read.extend(source if getattr(source, "storage", None) == name
                          else Counted(source.name, source.read, name) for source in counting.read)
        if counting.not_per_run:
            found.not_per_run[name] = counting.not_per_run
        if counting.not_counted:
            found.not_counted[name] = dict(counting.not_counted)
    return found
