"""HiBench's SQL-workload tables, uservisits and rankings, made by Spark from row ids alone.

From HiBench (repository Intel-bigdata/HiBench):
- scales: conf/workloads/sql/{scan,aggregation,join}.conf, `hibench.scan.<scale>.uservisits` / `.pages`;
- schemas: the workloads' Hive scripts (bin/functions/*, prepare_sql_join etc.):
  rankings (pageURL STRING, pageRank INT, avgDuration INT),
  uservisits (sourceIP STRING, destURL STRING, visitDate STRING, adRevenue DOUBLE, userAgent STRING,
              countryCode STRING, languageCode STRING, searchWord STRING, duration INT);
- values: autogen/src/main/java/HiBench/Visit.java and HiveData.java: sourceIP a.b.c.d with a, d in 1..254 and
  b, c in 0..254; destURL a page drawn uniformly from the pages; visitDate uniform from 1970-01-01 to
  2012-05-01 (yyyy-MM-dd text); adRevenue a float in [0, 1); duration 1..10; avgDuration 1..99; pageRank the
  number of links pointing at the page (HiBench draws link targets from a Zipf distribution).

Where perfkit differs, and why: every value is a hash of (seed, column, row id) instead of java.util.Random's
stream per map task, so the rows are the same whatever the partitioning and no task reads another's output
(HiBench needs two MapReduce jobs and a shuffle to give visits their URL). pageRank is drawn from a Pareto
law (alpha 1.5: heavy-tailed like Zipf link counts) instead of counting generated links. URLs are 16 to 64
characters of a hash, and user agents, country/language codes and search words come from short built-in
lists rather than HiBench's dictionary files.
"""
from __future__ import annotations

from perfkit.errors import PerfkitError

# scale -> (uservisits, pages): HiBench's conf/workloads/sql/scan.conf; aggregation.conf and join.conf agree up to
# gigantic, and differ at bigdata (aggregation 1e9 / 1e8, join 5e9 / 1.2e8): one size per scale here, scan's
SCALES = {
    "tiny": (1_000, 120),
    "small": (100_000, 12_000),
    "large": (1_000_000, 120_000),
    "huge": (10_000_000, 1_200_000),
    "gigantic": (100_000_000, 12_000_000),
    "bigdata": (2_000_000_000, 10_000_000),
}
TABLES = ("uservisits", "rankings")
USERVISITS_COLUMNS = [("sourceip", "string"), ("desturl", "string"), ("visitdate", "string"),
                      ("adrevenue", "double"), ("useragent", "string"), ("countrycode", "string"),
                      ("languagecode", "string"), ("searchword", "string"), ("duration", "int")]
RANKINGS_COLUMNS = [("pageurl", "string"), ("pagerank", "int"), ("avgduration", "int")]

USER_AGENTS = ["Mozilla/5.0 (Windows NT 10.0; Win64; x64)", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7)",
               "Mozilla/5.0 (X11; Linux x86_64)", "Mozilla/5.0 (iPhone; CPU iPhone OS 16_0 like Mac OS X)",
               "Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1)", "Opera/9.80 (Windows NT 6.0) Presto/2.12",
               "Googlebot/2.1 (+http://www.google.com/bot.html)", "curl/7.68.0"]
COUNTRY_LANGUAGES = ["USA,en-US", "GBR,en-GB", "DEU,de-DE", "FRA,fr-FR", "ESP,es-ES", "ITA,it-IT", "BRA,pt-BR",
                     "CHN,zh-CN", "JPN,ja-JP", "KOR,ko-KR", "IND,hi-IN", "RUS,ru-RU", "MEX,es-MX", "CAN,fr-CA",
                     "NLD,nl-NL", "SWE,sv-SE"]
SEARCH_WORDS = ["storage", "hadoop", "benchmark", "weather", "news", "football", "recipes", "flights", "music",
                "movies", "cloud", "database", "shoes", "laptop", "garden", "travel", "books", "games"]
DAYS = 15_461  # 1970-01-01 .. 2012-05-01, Visit.java's date range


def scale_rows(scale: str) -> tuple[int, int]:
    """(uservisits rows, pages) of a HiBench scale name."""
    if scale not in SCALES:
        raise PerfkitError(f"scale {scale!r}: HiBench's scales are {', '.join(SCALES)}")
    return SCALES[scale]


def _uniform(seed: int, column: int):
    """A value in [0, 1) per row, fixed by (seed, column, id) alone."""
    from pyspark.sql import functions as F

    return F.pmod(F.xxhash64(F.col("id"), F.lit(seed), F.lit(column)), F.lit(1 << 53)) / float(1 << 53)


def _url(seed: int, page):
    """A page's URL: 16 to 64 hash characters; the same text in rankings and in the visits that point at it."""
    from pyspark.sql import functions as F

    digest = F.sha2(F.concat_ws(":", F.lit(str(seed)), F.lit("url"), page.cast("string")), 256)
    length = F.lit(16) + F.pmod(F.xxhash64(page, F.lit(seed)), F.lit(49))
    return digest.substr(F.lit(1), length)


def _pick(values: list[str], u):
    from pyspark.sql import functions as F

    return F.element_at(F.array(*[F.lit(v) for v in values]), (F.floor(u * len(values)) + 1).cast("int"))


def rankings_frame(spark, scale: str, seed: int = 42, partitions: int | None = None):
    from pyspark.sql import functions as F

    _, pages = scale_rows(scale)
    rows = spark.range(0, pages, numPartitions=partitions or max(1, pages // 500_000))
    pareto = F.floor(F.pow(F.lit(1.0) - _uniform(seed, 1), F.lit(-1 / 1.5)))
    return rows.select(_url(seed, F.col("id")).alias("pageurl"),
                       F.least(pareto, F.lit(2**31 - 1)).cast("int").alias("pagerank"),
                       (F.floor(_uniform(seed, 2) * 99) + 1).cast("int").alias("avgduration"))


def uservisits_frame(spark, scale: str, seed: int = 42, partitions: int | None = None):
    from pyspark.sql import functions as F

    visits, pages = scale_rows(scale)
    rows = spark.range(0, visits, numPartitions=partitions or max(1, visits // 1_000_000))
    u = {k: _uniform(seed + 1, k) for k in range(11)}
    ip = F.concat_ws(".", *[(F.floor(u[k] * span) + low).cast("int").cast("string")
                            for k, span, low in [(1, 254, 1), (2, 255, 0), (3, 255, 0), (4, 254, 1)]])
    page = F.floor(u[0] * pages).cast("long")
    country = F.split(_pick(COUNTRY_LANGUAGES, u[8]), ",")
    return rows.select(
        ip.alias("sourceip"),
        _url(seed, page).alias("desturl"),
        F.date_format(F.date_add(F.lit("1970-01-01").cast("date"), F.floor(u[5] * DAYS).cast("int")),
                      "yyyy-MM-dd").alias("visitdate"),
        u[6].cast("float").cast("double").alias("adrevenue"),  # HiBench's Random.nextFloat(), in a DOUBLE column
        _pick(USER_AGENTS, u[7]).alias("useragent"),
        country.getItem(0).alias("countrycode"),
        country.getItem(1).alias("languagecode"),
        _pick(SEARCH_WORDS, u[9]).alias("searchword"),
        (F.floor(u[10] * 10) + 1).cast("int").alias("duration"),
    )
