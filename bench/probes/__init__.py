"""Measured once, decided something: ``python -m bench.probes.<name>`` (bench/README.md)."""
