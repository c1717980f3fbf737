"""Cyclic garbage collection held off while a transcript is streamed.

Reading 100 MB of transcript allocates millions of dicts and strings, none of them in a
cycle, and each allocation burst triggers collections that walk every live object of the
process, the app's too: with a 10,000-memory tree alive, full collections took 100-300 ms
each, holding the GIL, which the app showed as frozen frames. Reference counting still
frees everything; the collector simply runs once the read is over.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_holders = 0
_was_enabled = False


@contextmanager
def collection_paused() -> Iterator[None]:
    """Disable the cyclic collector for the block (nested and threaded uses count)."""
    global _holders, _was_enabled
    with _lock:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _was_enabled:
                gc.enable()
