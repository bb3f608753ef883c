"""The official conformance suite's runner (``run.py``) and the round-robin proxy it and the tests use."""
