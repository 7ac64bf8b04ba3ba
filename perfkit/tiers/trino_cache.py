"""Trino's file-system cache as a tier: a catalog of its own over the shared metastore, read only by Trino."""
from __future__ import annotations


from perfkit.errors import PerfkitError
from perfkit.tiers.base import Counters, Tier


class TrinoCache(Tier):
    """Trino's file-system cache, over the same tables as the plain hive catalog."""

    name = "trino-cache"
    service = "trino"
    engines = ("trino",)
    reads_backing_table = True
    STATS = "io.trino.filesystem.alluxio:type=alluxiocachestats,name={c},catalog={c}"

    @property
    def catalog(self) -> str:
        """The catalog in use now: the profile's, or (in the lab) the fresh one its last emptying made."""
        return self.profile.provider.trino_cache_catalog(self.profile)

    def unavailable(self) -> str | None:
        if not self.catalog:
            return ("the profile names no Trino catalog with the file-system cache (trino_cache_catalog): add one "
                    "(fs.cache.enabled=true) to the cluster's Trino and name it in the profile")
        return None

    def table(self, registered: str) -> str:
        """The S3 table `registered` (database.table) read through the cache catalog."""
        return f"{self.catalog}.{registered}"

    def empty(self) -> str:
        """Trino's cache emptied by the profile's provider: in the lab a fresh catalog with an empty cache folder
        takes over (pages deleted under a running Trino are neither read nor cached again); on a cluster it says it
        cannot. Tables registered before are read through the new catalog with current_tables()."""
        return self.profile.provider.empty_trino_cache()

    def current_tables(self, tables: dict[str, str]) -> dict[str, str]:
        """`tables` (catalog.database.table, as table() gave them) read through the catalog in use now."""
        return {name: self.table(qualified.split(".", 1)[1]) for name, qualified in tables.items()}

    def snapshot(self, engine=None) -> dict[str, float]:
        """The cache's counters and, as Trino reads S3 itself on a miss, its throttled and retried S3 requests."""
        found = super().snapshot(engine)
        return {**found, **self.copy.snapshot(engine, storage=self.name)} if found else found

    def counters(self, engine=None) -> Counters:
        """Trino's own cache counters, summed over its nodes (JMX, through the jmx catalog)."""
        if engine is None or engine.name != "trino":
            raise PerfkitError("trino-cache counters are read through a Trino engine")
        table = 'jmx.current."' + self.STATS.format(c=self.catalog) + '"'
        row = engine.execute('SELECT sum("cachereads.alltime.total"), sum("externalreads.alltime.total") '
                             f'FROM {table}')[0]
        return Counters(int(row[0] or 0), int(row[1] or 0))
