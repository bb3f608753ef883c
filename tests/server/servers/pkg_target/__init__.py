"""A package target for ``serve pkg_target.app[:ATTR]``."""
