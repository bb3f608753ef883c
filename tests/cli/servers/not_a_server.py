"""A Python file that defines no server."""

VALUE = 1
