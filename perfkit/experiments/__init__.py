"""Experiments: each follows prepare -> run -> summarise, and writes one ResultSet per run."""
