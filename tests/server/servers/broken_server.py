"""A target whose import fails (for the CLI tests)."""

raise RuntimeError("this target is broken on purpose")
