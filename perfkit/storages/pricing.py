"""What a dataset costs a month on each storage that prices itself (Storage.month_stored), and what a run's requests
cost (Storage.request_cost), at the shipped prices with the storages' own beside them, or a user's file."""
from __future__ import annotations

import math

import pandas as pd

from perfkit.prices import PriceTable
from perfkit.storages.registry import REGISTRY, placed, storage_class


def price_table(path=None) -> PriceTable:
    """The shipped prices, every registered storage's shipped_prices beside them, and the user's file (`path`) over
    both."""
    more = {}
    for name in REGISTRY:
        more.update(storage_class(name).shipped_prices or {})
    return PriceTable.load(path, more)


def request_cost(prices: PriceTable, counts) -> float:
    """What a run's requests cost: each storage data is placed on prices its own (a tier's fetches are S3's)."""
    costs = [cost for name in placed() if (cost := storage_class(name).request_cost(prices, counts)) is not None]
    return math.fsum(costs)


def monthly_storage_table(prices: PriceTable, bytes_: float, replication: int = 3,
                          volume_types: tuple[str, ...] = ("st1",)) -> pd.DataFrame:
    """One copy of `bytes_` for a month on every storage data is placed on, at each of `volume_types` where a storage
    sits on volumes (HDFS on EBS); a storage without a price is left out. attrs["basis"]: whose prices."""
    rows = {}
    for volume_type in volume_types:
        for name in placed():
            priced = storage_class(name).month_stored(prices, bytes_, replication, volume_type)
            if priced is not None:
                label, gb, cost = priced
                rows.setdefault(label, {"storage": label, "GB stored": gb,
                                        f"{prices.texts['currency']} per month": cost})
    table = pd.DataFrame(list(rows.values()))
    table.attrs["basis"] = prices.basis()
    return table
