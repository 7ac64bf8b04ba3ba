"""What newer Pythons have built in, for Python 3.9 (EMR 7's default): on the newer ones, the built-ins themselves."""
from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import IO, Any

if sys.version_info >= (3, 10):
    def zip_strict(*iterables: Iterable[Any]) -> Iterator[tuple]:
        """zip(..., strict=True): a ValueError when one iterable ends before the others."""
        return zip(*iterables, strict=True)
else:
    def zip_strict(*iterables: Iterable[Any]) -> Iterator[tuple]:
        """zip(..., strict=True): a ValueError, worded as 3.10's, when one iterable ends before the others."""
        iterators = [iter(it) for it in iterables]
        if not iterators:
            return

        def others(n: int) -> str:  # the arguments before argument n, as zip names them
            return "argument 1" if n == 2 else f"arguments 1-{n - 1}"

        while True:
            items = []
            for n, it in enumerate(iterators, 1):
                try:
                    items.append(next(it))
                except StopIteration:
                    if n > 1:
                        raise ValueError(f"zip() argument {n} is shorter than {others(n)}") from None
                    for m, later in enumerate(iterators[1:], 2):  # the first ended: every other must end too
                        try:
                            next(later)
                        except StopIteration:
                            continue
                        raise ValueError(f"zip() argument {m} is longer than {others(m)}") from None
                    return
            yield tuple(items)


if sys.version_info >= (3, 11):
    file_digest = hashlib.file_digest
else:
    def file_digest(fileobj: IO[bytes], digest: str) -> Any:
        """hashlib.file_digest: the hash object (named by `digest`) of the bytes of a file opened with "rb"."""
        h = hashlib.new(digest)
        for chunk in iter(lambda: fileobj.read(2**18), b""):
            h.update(chunk)
        return h


def fromisoformat(text: str) -> datetime:
    """datetime.fromisoformat, also taking 3.11's Z (UTC) after a time on older Pythons (2026-11-20T14:00:00Z)."""
    if sys.version_info < (3, 11) and isinstance(text, str) and text.endswith("Z") and len(text) > len("2026-11-20T"):
        text = text[:-1] + "+00:00"
    return datetime.fromisoformat(text)
