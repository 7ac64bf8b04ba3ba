"""How long an engine's S3 client may retry one request: bounded, so a throttled read gives up, and is counted.

Left at their defaults, the clients retry a throttled request for hours: Hadoop 3.5's S3A sleeps before its retry
r (from 0) `interval x 2^(r+1) x a random 0.5-1.5` (RetryPolicies.exponentialBackoffRetry), for up to 20 throttle
retries (fs.s3a.retry.throttle.limit) from 100 ms (core-default.xml): 1.5 x 0.1 s x (2^21 - 2) = 3.6 days at worst;
and the AWS SDK under it retries each of those tries again (fs.s3a.attempts.maximum, 5). Spark was still retrying
after 6 minutes. (429 and 503 are S3A's throttle errors; other failures use fs.s3a.retry.limit, the same backoff.)

So a budget per S3 operation: half the run's time limit (query_timeout_s), or BUDGET_S without one. Half, because
one read of S3A's classic stream can be two retried operations (the seek that opens the object, then the read), so
a throttled read gives up, with S3's own error, before the run's limit would cancel it; and a Spark task that a
cancelled job leaves running (task threads are not interrupted) stops retrying soon after.
"""
from __future__ import annotations

BUDGET_S = 60.0  # no time limit: one S3 operation retries for at most a minute
INTERVAL_S = 0.5  # S3A's first wait, for throttled and other retries alike (its own default, as AWS advises)
S3A_THROTTLE_LIMIT, S3A_RETRY_LIMIT = 20, 7  # S3A's defaults: a budget never raises them
# AWS SDK v2 legacy mode: throttled retry r waits <= min(20, 0.5 x 2^r)
SDK_THROTTLED_BASE_S, SDK_MAX_BACKOFF_S = 0.5, 20.0


def budget_s(query_timeout_s: float | None) -> float:
    return query_timeout_s / 2 if query_timeout_s else BUDGET_S


def s3a_backoff_s(retries: int, interval_s: float = INTERVAL_S) -> float:
    """The longest S3A sleeps before giving up after `retries` retries: sum over r < retries of 1.5 x interval x
    2^(r+1) = 1.5 x interval x (2^(retries+1) - 2)."""
    return 1.5 * interval_s * (2 ** (retries + 1) - 2)


def s3a_retries(budget: float, most: int) -> int:
    """The most retries (up to `most`) whose longest backoff stays within the budget."""
    n = 0
    while n < most and s3a_backoff_s(n + 1) <= budget:
        n += 1
    return n


def s3a_retry_conf(query_timeout_s: float | None = None) -> dict[str, str]:
    """S3A's retry settings (Hadoop's names, without spark.hadoop.): the SDK makes one attempt per S3A try
    (attempts.maximum 0), so S3A retries alone, within the budget, and counts every throttled try in its
    store_io_throttled statistic. With no limit: 5 retries each, 46.5 s at most (the 6th would make it 94.5 s).

    The classic input stream: Hadoop 3.5's default `analytics` stream retries reads with code of its own, which S3A's
    statistics do not see (a count(*) made 4 GETs at the server, 0 in S3A's counters), and on this lab a read it got
    503 SlowDown for failed the query ("Could not read footer": EOFException) instead of being retried."""
    budget = budget_s(query_timeout_s)
    interval = f"{round(INTERVAL_S * 1000)}ms"
    return {"fs.s3a.input.stream.type": "classic", "fs.s3a.attempts.maximum": "0",
            "fs.s3a.retry.limit": str(s3a_retries(budget, S3A_RETRY_LIMIT)), "fs.s3a.retry.interval": interval,
            "fs.s3a.retry.throttle.limit": str(s3a_retries(budget, S3A_THROTTLE_LIMIT)),
            "fs.s3a.retry.throttle.interval": interval}


def sdk_backoff_s(retries: int) -> float:
    """The longest the AWS SDK v2 (legacy retry mode) sleeps in `retries` throttled retries: its equal-jitter
    backoff waits at most min(20 s, 0.5 s x 2^r) before retry r."""
    return sum(min(SDK_MAX_BACKOFF_S, SDK_THROTTLED_BASE_S * 2 ** r) for r in range(retries))


def trino_s3_retries(budget: float = BUDGET_S) -> dict[str, str]:
    """Trino's native S3 client (s3.max-error-retries, 10 by default: up to 111.5 s per request): the most retries
    within the budget. 7 for a minute: 0.5 + 1 + 2 + 4 + 8 + 16 + 20 = 51.5 s (an 8th would make it 71.5 s)."""
    n = 0
    while sdk_backoff_s(n + 1) <= budget:
        n += 1
    return {"s3.retry-mode": "LEGACY", "s3.max-error-retries": str(n)}
