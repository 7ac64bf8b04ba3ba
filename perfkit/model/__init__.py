"""Models that carry a lab's measurements to another data size, network and price (issue 71)."""
