"""Checks of experiment parameters, shared by every comparison's __post_init__.

Notebook parameters arrive as YAML values (`perfkit report -p k=v`), so any type can show up. Each check
refuses what it cannot use with one line, `name=value: what to give`, and returns the value in the type
the experiment works with (store it back: `self.rows = whole("rows", self.rows)`).
"""
from __future__ import annotations

import math
from numbers import Real
import os
import shutil
from datetime import date, datetime, time, timezone
from pathlib import Path

import numpy as np

from perfkit.compat import fromisoformat
from perfkit.errors import PerfkitError


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _refuse(name: str, value, want: str) -> PerfkitError:
    return PerfkitError(f"{name}={_shown(value)}: {want}")


def _text_number(name: str, value: str, want: str) -> PerfkitError:
    """YAML reads 1e5 (no dot) and '8' as text: say how to write the number."""
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):  # 'nan' and 'inf' parse, but are no answer either
        return _refuse(name, value, f"this is text, not a number: {want}")
    shown = int(number) if number.is_integer() else number
    return _refuse(name, value, f"this is text, not a number: write {name}={shown}")


def _is_number(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)  # numpy numbers too; bool is an int


def whole(name: str, value, minimum: int = 1, maximum: int | None = None, why: str = "") -> int:
    """A count. An int (numpy's too), or a float without a fraction such as 1e5 or 100000.0: a notebook
    writes 1e5 for 100000 and nothing is lost, so it is taken as the int. Never a bool, text, 8.5, NaN or inf."""
    want = f"give a whole number >= {minimum}" + (f" and <= {maximum:,}" if maximum is not None else "")
    want += f" ({why})" if why else ""
    if isinstance(value, str):
        raise _text_number(name, value, want)
    if not _is_number(value) or not math.isfinite(value) or value != int(value):
        raise _refuse(name, value, want)
    value = int(value)
    if value < minimum or (maximum is not None and value > maximum):
        raise _refuse(name, value, want)
    return value


def number(name: str, value, minimum: float | None = None, above: float | None = None,
           maximum: float | None = None, unit: str = "", none_means: str | None = None) -> float | None:
    """A finite real number within bounds (`minimum`/`maximum` inclusive, `above` exclusive).
    With `none_means` (e.g. "no limit"), None is accepted and returned."""
    bounds = [f">= {minimum:g}" if minimum is not None else "", f"> {above:g}" if above is not None else "",
              f"<= {maximum:g}" if maximum is not None else ""]
    want = " ".join(["give a number" + (f" of {unit}" if unit else ""), " and ".join(b for b in bounds if b)]).strip()
    want += f", or None for {none_means}" if none_means else ""
    if value is None and none_means:
        return None
    if isinstance(value, str):
        raise _text_number(name, value, want)
    if (not _is_number(value) or not math.isfinite(value) or (minimum is not None and value < minimum)
            or (above is not None and value <= above) or (maximum is not None and value > maximum)):
        raise _refuse(name, value, want)
    return float(value)


def flag(name: str, value) -> bool:
    """true or false; the text 'false' would otherwise count as true."""
    if isinstance(value, (bool, np.bool_)):  # numpy's bool is no bool subclass
        return bool(value)
    raise _refuse(name, value, "give true or false")


def text(name: str, value, empty_ok: bool = True, none_ok: bool = False) -> str | None:
    if value is None and none_ok:
        return None
    if not isinstance(value, str) or (not empty_ok and not value.strip()):
        raise _refuse(name, value, "give a non-empty text" if not empty_ok else "give a text")
    return value


def choice(name: str, value, choices) -> str:
    """One of a few names (a file format, an order, a metrics source)."""
    if not isinstance(value, str) or value not in choices:
        raise _refuse(name, value, f"use one of {', '.join(choices)}")
    return value


def _as_list(name: str, value, example: str) -> list:
    """A list or tuple as a list; a bare string or number is refused, never split into letters."""
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(",") if p.strip()] or [value]
        raise _refuse(name, value, f"one text, not a list: write {name}=[{', '.join(parts)}]")
    if not isinstance(value, (list, tuple)):
        raise _refuse(name, value, f"give a list, e.g. {name}={example}")
    return list(value)


def _once(name: str, items: list) -> None:
    twice = sorted({str(i) for i in items if items.count(i) > 1})
    if twice:
        raise _refuse(name, items, f"{', '.join(twice)} given more than once: give each once")


def names(name: str, value, choices=None, empty_ok: bool = False) -> list[str]:
    """A list of distinct names (engines, queries, storages, methods, protocols, volume ids), each one
    of `choices` when given."""
    known = list(choices) if choices is not None else None
    example = f"[{', '.join(known[:2])}]" if known else "[a, b]"
    items = _as_list(name, value, example)
    if not items and not empty_ok:
        raise _refuse(name, items, f"give at least one, e.g. {name}={example}")
    for i, item in enumerate(items):
        if not isinstance(item, str) or not item.strip():
            raise _refuse(f"{name}[{i}]", item, "give a name (text)")
    _once(name, items)
    unknown = [item for item in items if known is not None and item not in known]
    if unknown:
        raise _refuse(name, items, f"unknown {', '.join(unknown)}: choose from {', '.join(known)}")
    return items


def _distinct_list(name: str, value, example: str, each) -> list:
    """A non-empty list, each item checked by each(its name, item) and given once (named as given: 40, not 40.0)."""
    if _is_number(value):
        raise _refuse(name, value, f"one number, not a list: write {name}=[{value}]")
    items = _as_list(name, value, example)
    if not items:
        raise _refuse(name, items, f"give at least one, e.g. {name}={example}")
    checked = [each(f"{name}[{i}]", item) for i, item in enumerate(items)]
    _once(name, items)
    return checked


def numbers(name: str, value, minimum: float | None = None, above: float | None = None, unit: str = "",
            example: str = "[85, 40]") -> list[float]:
    """A non-empty list of distinct finite numbers within bounds (e.g. bandwidths)."""
    return _distinct_list(name, value, example,
                          lambda what, item: number(what, item, minimum=minimum, above=above, unit=unit))


def wholes(name: str, value, minimum: int = 1, maximum: int | None = None) -> list[int]:
    """A non-empty list of distinct whole numbers (e.g. concurrency levels)."""
    return _distinct_list(name, value, "[1, 4]", lambda what, item: whole(what, item, minimum, maximum))


def iso_time(name: str, value) -> str:
    """An ISO 8601 time as text with its zone (UTC when none is given); '' or None: not given.
    YAML reads 2026-11-20T14:00:00Z as a datetime and 2026-11-20 as a date: both are taken."""
    if value is None or value == "":
        return ""
    when = value
    if isinstance(when, date) and not isinstance(when, datetime):
        when = datetime.combine(when, time())
    if isinstance(when, str):
        try:
            when = fromisoformat(when.strip())
        except ValueError:
            pass
    if not isinstance(when, datetime):
        raise _refuse(name, value, f"give an ISO 8601 time, e.g. {name}=2026-11-20T14:00:00+00:00")
    return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).isoformat()


def memory_bytes() -> int:
    """This machine's physical memory."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_free_space(what: str, needed_bytes: int, folder: Path, fix: str) -> None:
    """Refuse to start writing `needed_bytes` into `folder` (or where it will be created) if they do not fit."""
    folder = Path(folder).absolute()
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    free = shutil.disk_usage(existing).free
    if needed_bytes > free:
        raise PerfkitError(f"{what} needs {_size(needed_bytes)} in {folder}, which has {_size(free)} free: {fix}")


def _size(n: int) -> str:
    return f"{n / 1e9:,.1f} GB" if n >= 1e9 else f"{n / 1e6:,.1f} MB"
