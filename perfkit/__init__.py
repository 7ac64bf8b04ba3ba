"""perfkit: measure the same work on different storage; tables, plots and shared reports."""

__version__ = "0.1.0"
