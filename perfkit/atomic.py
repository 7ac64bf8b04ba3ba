"""Replace a file whole or not at all: a reader sees the old content or the new one, never half a file."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text(path: Path | str, text: str, mode: int = 0o644) -> Path:
    """Write `text` to a temporary file beside `path`, fsync it, give it `mode` and move it over `path`.

    The temporary file is created exclusively and 0600 (mkstemp), so with mode=0o600 a secret is never readable by
    others, not even for an instant. On any failure (a full disk, Ctrl-C) the old file stays as it was and the
    temporary file is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
            os.fchmod(out.fileno(), mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
