"""Each list change and resource update stored once in a session's standalone stream, for :mod:`._redis`.

Theory of operation
-------------------
Every copy of a session (one per instance that served it) hears of a list change or a resource
update: the instance that made the change tells its own copies, and publishes it on the bus for the
others. The notice must reach the client once, through the session's standalone stream in Redis,
which its GET connection follows wherever it is. Two mechanisms make it so:

* **Who sends** (an optimisation: one copy writes, the others stay quiet): the session's *teller*
  (``<prefix>:teller:<id>``) sends the notices; a copy that is not the teller leaves them to it and
  looks again once a dead teller's heartbeat would have expired (it may have died before storing
  one). The election is a lease on a heartbeat key, so it can be wrong: an instance starved of CPU
  longer than the heartbeat's life looks dead, another copy takes over, and both send.
* **What lands** (the guarantee): each change gets an id where it is made (``<instance>.<n>``),
  carried in the bus message every instance receives. A copy's notice carries the ids of the
  changes it tells that no earlier notice of that copy told (list changes come in bursts, and
  each copy coalesces its own bursts); it is stored by one Lua script that marks each id for the
  session (``SET NX`` on ``<prefix>:told:<session id>:<change id>``, short-lived) and appends the
  notice (``XADD``) only if one of them was new. Whichever copies send and whenever, each change is
  stored once: a late copy's notice (a teller wrongly replaced, a copy looking again) is a no-op.

So nothing is lost (a copy looks again when the teller may be dead) nor doubled (the marks). A
notice with no id (one no change announced on this instance, e.g. from a server it is not hub of)
is stored as before, by the teller. Redis down: every copy sends it (twice rather than never).
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict, deque

import orjson

from ..server._subscriptions import _LIST_CHANGED
from ..wire import RESOURCE_UPDATED

__all__ = [
    "ALIVE_MS",
    "NOTICES",
    "STOP_TELLING",
    "TELLS",
    "ChangeLog",
    "list_key",
    "notice_key",
    "resource_key",
]

NOTICES = (b'"notifications/resources/updated"', b'list_changed"')  # heard by every copy of a session
ALIVE_MS = 2000  # an instance's heartbeat key outlives its last refresh by this much
MARK_TTL = 600  # seconds a change's mark stays: far longer than any copy's notice may lag behind it
# whether this copy (ARGV[1]: its tag) sends a notice: it is the teller, or there is no live teller
# and it becomes the teller (for ARGV[3] seconds)
TELLS = """
local teller = redis.call('GET', KEYS[1])
if teller == ARGV[1] then return 1 end
if teller and redis.call('EXISTS', ARGV[2] .. teller) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
return 1
"""
STOP_TELLING = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
"""
_KEPT = 64  # changes remembered per notice key (a copy's notice lagging further behind: fewer ids)
_KEYS = 256  # notice keys remembered (the least recently changed forgotten first)


def list_key(kind: str) -> str | None:
    """The notice key of a change of registry ``kind``: its list_changed method (None: no notice)."""
    entry = _LIST_CHANGED.get(kind)
    return entry[2] if entry is not None else None


def resource_key(uri: str) -> str:
    """The notice key of an update of resource ``uri``."""
    return f"{RESOURCE_UPDATED} {uri}"


def notice_key(message: bytes) -> str | None:
    """The notice key of an encoded notification (None: not a notice)."""
    try:
        decoded = orjson.loads(message)
    except orjson.JSONDecodeError:
        return None
    method = decoded.get("method") if type(decoded) is dict else None
    if method == RESOURCE_UPDATED:
        params = decoded.get("params")
        uri = params.get("uri") if type(params) is dict else None
        return resource_key(uri) if type(uri) is str else None
    return method if type(method) is str and method.endswith("list_changed") else None


class ChangeLog:
    """The ids of the last changes this instance heard of (its own and the others'), by notice key,
    each with a sequence number; a session's copy remembers, per key, the last one its notices
    covered (:meth:`since`). Written from any thread (a sync tool changes a list in a worker)."""

    def __init__(self, instance: str) -> None:
        self._instance = instance
        self._ids = itertools.count(1)
        self._seq = 0
        self._log: OrderedDict[str, deque[tuple[int, str]]] = OrderedDict()
        self._lock = threading.Lock()

    def new_change(self, key: str | None) -> str:
        """A change made here: its id (for the bus message), heard of here too."""
        change_id = f"{self._instance}.{next(self._ids)}"
        if key is not None:
            self.heard(key, change_id)
        return change_id

    def heard(self, key: str, change_id: str) -> None:
        """A change announced by a notice of ``key`` (made here, or by another instance)."""
        with self._lock:
            self._seq += 1
            log = self._log.get(key)
            if log is None:
                log = self._log[key] = deque(maxlen=_KEPT)
                if len(self._log) > _KEYS:
                    self._log.popitem(last=False)
            else:
                self._log.move_to_end(key)
            log.append((self._seq, change_id))

    def now(self) -> int:
        """The sequence number of the last change heard of (a new copy's notices start after it)."""
        return self._seq

    def since(self, key: str, after: int) -> tuple[list[str], int]:
        """The ids of the changes of ``key`` heard of after sequence number ``after``, and the
        sequence number to remember (the last of them)."""
        with self._lock:
            log = self._log.get(key)
            if not log:
                return [], after
            ids = [change_id for seq, change_id in log if seq > after]
            return ids, max(after, log[-1][0])
