"""randori: prompt-injection and secure-code benchmarks for LLM agents."""
__version__ = "0.1.0"
