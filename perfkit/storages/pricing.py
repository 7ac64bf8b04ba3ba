"""What a dataset costs a month on each storage that prices itself (Storage.month_stored), with the prices' basis."""
from __future__ import annotations

import pandas as pd

from perfkit.prices import PriceTable
from perfkit.storages.registry import placed, storage_class


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
