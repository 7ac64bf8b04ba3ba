"""What each run asked of the storage: requests and bytes, counted at the server and at the engine, kept apart.

A source (perfkit.accounting.sources) reads cumulative counters; a run's I/O is the difference of a snapshot
after it and one before (runs are serial). Counter names are perfkit's own (perfkit.accounting.counters), the
same for every source, so the two sides of one storage can be compared and priced (perfkit.prices)."""
