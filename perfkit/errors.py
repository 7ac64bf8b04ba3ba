"""The one error type users see: a message that names the thing and the fix."""
from __future__ import annotations

import re


class PerfkitError(Exception):
    """A failure the user can act on. The CLI prints the message alone and exits 1."""


class ServiceError(PerfkitError):
    """A lab service or a remote endpoint that cannot be used."""

    def __init__(self, service: str, problem: str, fix: str, log: str | None = None):
        self.service, self.problem, self.fix, self.log = service, problem, fix, log
        where = f" (log: {log})" if log else ""
        super().__init__(f"{service}: {problem}{where}. Fix: {fix}")


STACK_FRAME = re.compile(r"^\s*(at |\.\.\. \d+ more|Traceback|File \"|\^)")
_CAUSED_BY = re.compile(r"^\s*Caused by:\s*(.+)$")
ELLIPSIS = " ... "  # where shorten() took out the middle
_WRAPPERS = re.compile(r"^(An error occurred while calling [\w.]+\.?|:\s*)$")


def root_cause(error: BaseException | str, limit: int = 300) -> str:
    """One line: the innermost cause of a (py4j/Java/Hadoop CLI) error, without stack frames.

    A Java trace nests its causes as "Caused by: X: msg" lines; the last one is the root.
    Without any, the first line that is neither a stack frame nor a py4j wrapper is the message.
    """
    text = str(error) if not isinstance(error, str) else error
    lines = [line.strip() for line in text.splitlines()]
    causes = [m.group(1) for line in lines if (m := _CAUSED_BY.match(line))]
    if causes:
        message = causes[-1]
    else:
        meaningful = [line.lstrip(": ").strip() for line in lines
                      if line and not STACK_FRAME.match(line) and not _WRAPPERS.match(line)]
        message = meaningful[0] if meaningful else (type(error).__name__ if not isinstance(error, str) else "")
    return shorten(" ".join(message.split()), limit) or "no message"


def shorten(text: str, limit: int) -> str:
    """`text` in at most `limit` characters: its head and its tail around " ... ". The end of a cause is the part
    that says what went wrong ("... Checksum error", "... Connection refused"): cutting it off would hide it."""
    if len(text) <= limit:
        return text
    room = limit - len(ELLIPSIS)
    if room < 2:  # no room for both ends: the end alone
        return text[len(text) - limit:]
    tail = (room + 1) // 2
    return text[:room - tail] + ELLIPSIS + text[-tail:]
