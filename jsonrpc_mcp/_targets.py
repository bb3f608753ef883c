"""Loading a serve target: ``path/to/file.py[:ATTR]`` or ``dotted.module[:ATTR]`` to a Server.

Its own module so that both the command line and ``serve --http --workers N`` (each worker loads
the target afresh) use it without importing each other.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any

__all__ = ["TargetError", "load_target", "user_traceback"]


class TargetError(Exception):
    """A serve target could not be loaded."""


def load_target(target: str) -> Any:
    """Load ``path/to/file.py[:ATTR]`` or ``dotted.module[:ATTR]``; ATTR defaults to ``server``.

    If the attribute is a callable that is not a server, it is called (a factory).
    """
    from .server import Server

    location, _, attr = target.rpartition(":")
    if not location or not attr.isidentifier():  # no ":ATTR" (a ":" may belong to the path itself)
        location, attr = target, ""
    named = bool(attr)
    attr = attr or "server"
    if location.endswith(".py") or os.path.exists(location):
        if not os.path.exists(location):
            raise TargetError(f"no such file: {location}")
        if not os.path.isfile(location):
            raise TargetError(f"{location} is not a Python file")
        directory = os.path.dirname(os.path.realpath(location))
        if directory not in sys.path:
            sys.path.insert(0, directory)
        module_name = f"_jsonrpc_mcp_target_{os.path.splitext(os.path.basename(location))[0]}"
        spec = importlib.util.spec_from_file_location(module_name, location)
        if spec is None or spec.loader is None:
            raise TargetError(f"cannot load {location}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[module_name]
            raise TargetError(f"loading {location} failed: {type(exc).__name__}: {exc}") from exc
    else:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(location)
        except ModuleNotFoundError as exc:
            if exc.name is not None and (location == exc.name or location.startswith(exc.name + ".")):
                raise TargetError(f"cannot import {location!r}: {exc}") from None
            raise TargetError(f"importing {location} failed: {type(exc).__name__}: {exc}") from exc
        except Exception as exc:
            raise TargetError(f"importing {location} failed: {type(exc).__name__}: {exc}") from exc
    try:
        obj = getattr(module, attr)
    except AttributeError:
        obj = None if named else _the_one_server(module, location, Server)
        if obj is None:
            raise TargetError(f"{location} has no attribute {attr!r}") from None
    if not isinstance(obj, Server) and callable(obj):
        try:
            obj = obj()
        except Exception as exc:
            raise TargetError(f"calling {location}:{attr}() failed: {type(exc).__name__}: {exc}") from exc
    if not isinstance(obj, Server):
        raise TargetError(f"{target} is a {type(obj).__name__}, not a jsonrpc_mcp.Server")
    return obj


def user_traceback(exc: BaseException) -> str:
    """The traceback of the target's own failure, as the user needs it: only the frames of their
    code (not importlib's nor this loader's); for a syntax error, just the offending line and caret."""
    import traceback

    if isinstance(exc, SyntaxError):
        return "".join(traceback.format_exception_only(type(exc), exc))
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if not frame.filename.startswith("<frozen importlib") and frame.filename != __file__
    ]
    if not frames:
        return "".join(traceback.format_exception_only(type(exc), exc))
    listed = "".join(traceback.format_list(frames))
    return (
        "Traceback (most recent call last):\n"
        + listed
        + "".join(traceback.format_exception_only(type(exc), exc))
    )


def _the_one_server(module: Any, location: str, server_type: type) -> Any:
    """Without ``:ATTR`` and no ``server`` attribute: the module's one Server, if it has exactly one."""
    found = sorted(name for name, value in vars(module).items() if isinstance(value, server_type))
    if len(found) == 1:
        return getattr(module, found[0])
    if found:
        choices = ", ".join(f"{location}:{name}" for name in found)
        raise TargetError(
            f"{location} defines {len(found)} servers ({', '.join(found)}): name one, e.g. {choices}"
        )
    raise TargetError(f"{location} has no attribute 'server' and defines no jsonrpc_mcp.Server")
