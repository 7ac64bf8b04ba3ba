"""A cold Trino cache in the lab is a fresh catalog, not a restart: what is created, dropped, kept and read."""
import stat
from dataclasses import replace

import pytest

from perfkit.config import load_profile
from perfkit.engines.trino import TrinoEngine
from perfkit.lab.settings import LabPorts
from perfkit.lab.trino import CACHE_CATALOG, TrinoServer
from perfkit.tiers.trino_cache import TrinoCache


class RecordingTrino(TrinoServer):
    """The lab's Trino with its SQL recorded, and CREATE CATALOG writing its file as the file catalog store does."""

    def __init__(self, home):
        super().__init__(home, LabPorts())
        self.asked: list[str] = []

    def query(self, sql):
        self.asked.append(sql)
        if sql.startswith("CREATE CATALOG"):
            name = sql.split()[2]
            (self.etc / "catalog").mkdir(parents=True, exist_ok=True)
            (self.etc / "catalog" / f"{name}.properties").write_text("s3.aws-secret-key=...\n")
        return []


@pytest.mark.usefixtures("tools_on_paper")
def test_each_emptying_makes_a_fresh_catalog_with_its_own_folder_and_drops_the_last(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    server = RecordingTrino(tmp_path)
    (server.cache_dir / "pages").mkdir(parents=True)
    (server.cache_dir / "pages" / "p1").write_bytes(b"x" * 1000)
    assert server.cache_catalog() == CACHE_CATALOG

    assert server.fresh_cache_catalog() == ("hive_cache_2", 1000)  # the pages the base catalog held
    create = server.asked[-1]
    assert create.startswith("CREATE CATALOG hive_cache_2 USING hive WITH (")
    assert f"\"fs.cache.directories\" = '{server.fresh_cache_dirs / 'hive_cache_2'}'" in create
    assert "\"fs.cache.enabled\" = 'true'" in create and "connector.name" not in create
    assert (server.fresh_cache_dirs / "hive_cache_2").is_dir() and server.cache_catalog() == "hive_cache_2"
    created = server.etc / "catalog" / "hive_cache_2.properties"
    assert stat.S_IMODE(created.stat().st_mode) == 0o600  # it holds the S3 keys
    assert not any(sql.startswith("DROP") for sql in server.asked)  # the configured catalog stays

    (server.fresh_cache_dirs / "hive_cache_2" / "p").write_bytes(b"y" * 300)
    assert server.fresh_cache_catalog() == ("hive_cache_3", 300)
    assert server.asked[-1] == "DROP CATALOG hive_cache_2"
    assert not (server.fresh_cache_dirs / "hive_cache_2").exists() and server.cache_catalog() == "hive_cache_3"

    server.write_config()  # a start: the configured catalogs only, the fresh ones and their pages gone
    assert server.cache_catalog() == CACHE_CATALOG and not server.fresh_cache_dirs.exists()
    assert sorted(p.name for p in (server.etc / "catalog").iterdir()) == [
        "hive.properties", f"{CACHE_CATALOG}.properties", "jmx.properties", "tpch.properties"]
    assert (server.etc / "config.properties").read_text().count("catalog.management=dynamic") == 1
    assert (server.etc / "catalog-store.properties").read_text() == f"catalog.config-dir={server.etc / 'catalog'}\n"


def test_the_tier_its_tables_and_the_engines_counters_follow_the_catalog_in_use(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path))
    profile = load_profile("lab")
    cache = TrinoCache(profile)
    tables = {"trips": cache.table("perfkit.trips_s3")}
    assert tables == {"trips": "hive_cache.perfkit.trips_s3"}

    server = TrinoServer(tmp_path, LabPorts())
    server.cache_catalog_file.parent.mkdir(parents=True, exist_ok=True)
    server.cache_catalog_file.write_text("hive_cache_4\n")  # what the last emptying left in use
    assert cache.catalog == "hive_cache_4"
    assert cache.current_tables(tables) == {"trips": "hive_cache_4.perfkit.trips_s3"}
    engine = TrinoEngine(profile)
    assert engine._catalogs_reading("trino-cache") == ["hive_cache_4"]
    assert engine._catalogs_reading(None) == [profile.trino_catalog, "hive_cache_4"]

    elsewhere = replace(profile, trino_cache_catalog="my_cache")  # a profile's own catalog is never replaced
    assert TrinoCache(elsewhere).catalog == "my_cache"
