"""Prices, with their basis: what a run's S3 requests cost, and the figures a storage prices its month with
(perfkit.storages.pricing).

The shipped table (aws-us-east-1.yml) is AWS's list prices, pinned and dated, each section with its source. A user's
file has the same shape; the figures it gives replace the shipped ones and the rest stay (a file that prices only
requests still prices storage), and its basis names the file. GB is 10^9 bytes, as AWS bills."""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import yaml

from perfkit.errors import PerfkitError

SHIPPED = "aws-us-east-1.yml"
GB = 1e9
# perfkit's request counters (perfkit.accounting.counters) -> the price of 1,000 of them
REQUEST_PRICES = {"s3_get": "get_per_1000", "s3_head": "head_per_1000", "s3_list": "list_per_1000",
                  "s3_put": "put_per_1000", "s3_copy": "copy_per_1000", "s3_delete": "delete_per_1000"}
FIGURES = {"s3": [*REQUEST_PRICES.values(), "storage_per_gb_month", "transfer_to_ec2_same_region_per_gb"],
           "ebs": ["st1_per_gb_month", "sc1_per_gb_month", "gp3_per_gb_month"]}
TEXTS = {"top": ["region", "currency", "as_of"], "s3": ["source", "storage_class"], "ebs": ["source"]}
SECTION_TEXTS = ("source",)  # in a section a storage ships (PriceTable.load's `more`): text, not a price
# the EBS volume types the table prices, by AWS's product names (what an EBS price is of: never "S3 Standard")
EBS_PRODUCTS = {"st1": "Throughput Optimized HDD", "sc1": "Cold HDD", "gp3": "General Purpose SSD"}


def ebs_product(volume_type: str = "st1") -> str:
    """'EBS st1 (Throughput Optimized HDD)'."""
    return f"EBS {volume_type} ({EBS_PRODUCTS[volume_type]})" if volume_type in EBS_PRODUCTS else f"EBS {volume_type}"


@dataclass(frozen=True)
class PriceTable:
    figures: dict  # {"s3": {...}, "ebs": {...}}: numbers
    texts: dict = field(default_factory=dict)  # region, currency, as_of, sources
    file: str | None = None  # the user's file, if any

    @classmethod
    def load(cls, path: str | Path | None = None, more: Mapping[str, dict] | None = None) -> PriceTable:
        """The shipped AWS list prices, with `more` beside them (sections of prices other storages ship:
        {section: {figure: price, "source": where from}}, perfkit.storages.pricing), and a user's file over both."""
        shipped = _read(resources.files("perfkit.prices").joinpath(SHIPPED).read_text(), SHIPPED, FIGURES)
        names = dict(FIGURES)
        for section, values in (more or {}).items():
            if section in shipped:  # a section of AWS's table, or a top-level key
                raise PerfkitError(f"price section {section!r} is shipped twice: name a storage's prices apart")
            shipped[section] = dict(values)
            names[section] = [name for name in values if name not in SECTION_TEXTS]
        if not path:
            return cls._of(shipped, None, names)
        path = Path(path).expanduser()
        try:
            text = path.read_text()
        except OSError as err:
            raise PerfkitError(f"price file {path}: cannot be read ({err.strerror}). Fix: give the path of a YAML "
                               "file shaped like perfkit/prices/aws-us-east-1.yml, or prices=None for the shipped "
                               "AWS list prices") from None
        own = _read(text, str(path), names)
        merged = {key: ({**shipped.get(key, {}), **value} if isinstance(value, dict) else value)
                  for key, value in {**shipped, **own}.items()}
        return cls._of(merged, str(path), names)

    @classmethod
    def _of(cls, data: dict, file: str | None, names: Mapping[str, list[str]]) -> PriceTable:
        where = file or SHIPPED
        figures = {}
        for section, figure_names in names.items():
            figures[section] = {name: _price(data.get(section, {}).get(name), f"{section}.{name}", where)
                                for name in figure_names}
        texts = {"region": data.get("region"), "currency": data.get("currency", "USD"), "as_of": data.get("as_of"),
                 **{f"{section}_source": data.get(section, {}).get("source") for section in names},
                 "storage_class": data.get("s3", {}).get("storage_class", "S3 Standard")}
        return cls(figures, texts, file)

    def basis(self) -> str:
        """One line for a report: whose prices, where, which class, as of when, from where."""
        t = self.texts
        if self.file:
            return f"prices from {self.file} ({t['currency']}; missing figures: AWS list prices, {t['region']})"
        more = "".join(f"; {section}: {t.get(f'{section}_source') or 'no source given'}"
                       for section in self.figures if section not in FIGURES)
        return (f"AWS list prices, {t['region']}, {t['storage_class']}, {t['currency']}, as of {t['as_of']} "
                f"({t['s3_source']}; {t['ebs_source']}{more})")

    def ebs_basis(self, volume_type: str = "st1") -> str:
        """basis() for an EBS volume's price: the EBS product, its page as the source (basis() names S3's class, which
        an EBS price is not of)."""
        t = self.texts
        if self.file:
            return (f"prices from {self.file} ({t['currency']}; missing figures: AWS list prices, {t['region']}, "
                    f"{ebs_product(volume_type)})")
        return (f"AWS list prices, {t['region']}, {ebs_product(volume_type)}, {t['currency']}, as of {t['as_of']} "
                f"({t['ebs_source']})")

    def request_cost(self, counts: Mapping[str, float]) -> float:
        """What these S3 requests cost; other counters (bytes, HDFS) are ignored. A NaN count (not measured) makes
        the cost NaN, never a silent 0."""
        total = 0.0
        for name, key in REQUEST_PRICES.items():
            n = counts.get(name, 0)
            if n is None or (isinstance(n, float) and math.isnan(n)):
                return math.nan
            total += n * self.figures["s3"][key] / 1000
        return total

    def ebs_per_gb_month(self, volume_type: str = "st1") -> float:
        key = f"{volume_type}_per_gb_month"
        if key not in self.figures["ebs"]:
            raise PerfkitError(f"EBS volume type {volume_type!r} has no price: choose one of "
                               f"{', '.join(k.split('_')[0] for k in self.figures['ebs'])}")
        return self.figures["ebs"][key]


def _read(text: str, where: str, names: Mapping[str, list[str]]) -> dict:
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as err:
        raise PerfkitError(f"price file {where} is not valid YAML ({str(err).splitlines()[0]}). Fix: correct it "
                           "(see perfkit/prices/aws-us-east-1.yml)") from None
    if not isinstance(data, dict):
        raise PerfkitError(f"price file {where}: expected a mapping of sections (s3:, ebs:), not {type(data).__name__}")
    known = {*TEXTS["top"], *names}
    for key, value in data.items():
        if key not in known:
            raise PerfkitError(f"price file {where}: unknown key {key!r}. Fix: use {', '.join(sorted(known))}")
        if key in names:
            if not isinstance(value, dict):
                raise PerfkitError(f"price file {where}: {key} must be a mapping of prices")
            allowed = {*names[key], *TEXTS.get(key, SECTION_TEXTS)}
            for name in value:
                if name not in allowed:
                    raise PerfkitError(f"price file {where}: unknown key {key}.{name}. Fix: use one of "
                                       f"{', '.join(sorted(allowed))}")
    return data


def _price(value, name: str, where: str) -> float:
    if value is None:
        raise PerfkitError(f"price file {where}: {name} is missing. Fix: give it (a number, 0 or more)")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise PerfkitError(f"price file {where}: {name} is {value!r}, not a number. Fix: give a price such as 0.005")
    if value < 0:
        raise PerfkitError(f"price file {where}: {name} is {value:g}, a negative price. Fix: give 0 or more")
    return float(value)
