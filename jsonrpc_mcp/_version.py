"""The package version, in a module of its own so that any module can read it without importing the
facade (as h11/_version.py)."""

__version__ = "0.1.0"
