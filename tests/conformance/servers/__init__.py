"""Servers written with other MCP implementations, run through the conformance harness."""
