"""`python -m perfkit ...`: the perfkit command of a Python that has no `perfkit` script (Spark 3.5.6's, the lab's)."""
from perfkit.cli import main

main()
