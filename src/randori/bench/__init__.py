"""Benchmark runs: cases, the runner, the results store, metrics and reports."""
