"""Whether a handler can ever wait: an ``async def`` with no ``await`` in it runs to its end at once.

Theory of operation
-------------------
A coroutine gives the event loop control only at its own suspension points: ``await``, ``async
with`` and ``async for``, compiled to ``YIELD_VALUE`` (``YIELD_FROM`` before 3.11) after one of the
``GET_AWAITABLE`` family. A coroutine function whose code has none of them (``async def echo(message):
return message``, most tools) runs from its first step to its return in one go, whatever plain
functions it calls: nothing else runs meanwhile, so nothing (no client closing its response, no
timer) can cancel it half-way. A transport may then serve a request that runs only such a function
without setting up a cancel scope for it (see ``Router.cannot_wait``); the scope would never be
used.

Only the function's own code counts, read once per handler (``dis`` is imported at the first
question, not at start-up). Anything that is not plainly such a function answers False (it may
wait): a plain ``def`` (it runs in a worker thread), a callable object, a ``functools.partial``,
a function marked as a coroutine function that returns some other awaitable.
"""

from __future__ import annotations

import inspect
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._registry import _Handler

__all__ = ["never_waits"]

# the instructions of a suspension point, across the Python versions supported (3.10 on)
_SUSPENDING = frozenset(
    {
        "YIELD_VALUE",
        "YIELD_FROM",
        "SEND",
        "GET_AWAITABLE",
        "BEFORE_ASYNC_WITH",
        "GET_AITER",
        "GET_ANEXT",
        "END_ASYNC_FOR",
    }
)


def never_waits(handler: _Handler) -> bool:
    """Whether calling ``handler``'s function never waits (worked out once, kept on the handler)."""
    known = handler.never_waits
    if known is None:
        known = handler.never_waits = _code_never_waits(handler.fn)
    return known


def _code_never_waits(fn: Any) -> bool:
    function = fn.__func__ if isinstance(fn, types.MethodType) else fn
    if not isinstance(function, types.FunctionType):
        return False
    code = function.__code__
    if not code.co_flags & inspect.CO_COROUTINE:  # (async def: not merely marked as one)
        return False
    import dis  # only now: a server that is never asked does not pay for it at start-up

    return not any(instruction.opname in _SUSPENDING for instruction in dis.get_instructions(code))
