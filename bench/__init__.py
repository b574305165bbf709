"""Benchmarks: scripts, not tests. ``python -m bench`` (``make bench``) runs every ``bench_*.py``; results are kept in
docs/benchmarks.md."""
