"""`python -m perfkit.lab.fetch`: the lab's tools fetched and built once into the tool cache, before the lab starts.

`make report` runs it beside pip's install: on a fresh machine the Go builds (CPU-bound) and the Maven fetches take
minutes, pip's downloads minutes more, and neither needs the other. `perfkit.lab` imports only psutil, PyYAML and
requests of perfkit's dependencies, which the Makefile installs first."""
from __future__ import annotations

import sys

from perfkit.errors import PerfkitError
from perfkit.lab import Lab, tools


def main() -> int:
    try:
        tools.java_home()  # a missing Java named before minutes of fetching
        Lab.fetch_tools()
    except PerfkitError as err:
        print(f"perfkit: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
