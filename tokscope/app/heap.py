"""Keeping the garbage collector off objects that live long: the one heap-freeze helper.

The explorer holds ~100k long-lived objects (the tokenizer, the document's columns, the input
pane's per-line lists); a full collection walks them all, in the middle of a keystroke.
:func:`freeze_long_lived` freezes them once for the app's life; :func:`frozen_heap` freezes what
exists for the length of a job (a training run allocates hundreds of thousands of small objects,
so the collector runs full passes while it trains). Unfreezing is all or nothing, so a job never
thaws a heap the app froze, and the app's thaw waits for no job.
"""

from __future__ import annotations

import contextlib
import gc
import threading

_lock = threading.Lock()
_app_frozen = False  # freeze_long_lived() is in force
_thresholds: tuple[int, int, int] | None = None
_jobs = 0  # frozen_heap() blocks running
_job_froze = False  # the first job froze the heap (and so the last one thaws it)


def freeze_long_lived() -> None:
    """Collect once, then keep what is alive out of the collector's passes until :func:`thaw`;
    full passes over what comes later run 10x less often.

    >>> freeze_long_lived(); gc.get_freeze_count() > 0
    True
    >>> thaw()
    """
    global _app_frozen, _thresholds
    with _lock:
        if _app_frozen:
            return
        _app_frozen = True
        gc.collect()
        gc.freeze()
        _thresholds = gc.get_threshold()
        gc.set_threshold(_thresholds[0], _thresholds[1], _thresholds[2] * 10)


def thaw() -> None:
    """Undo :func:`freeze_long_lived` (when the app ends)."""
    global _app_frozen, _thresholds
    with _lock:
        if not _app_frozen:
            return
        _app_frozen = False
        if _thresholds is not None:
            gc.set_threshold(*_thresholds)
            _thresholds = None
        if _jobs == 0:
            gc.unfreeze()


@contextlib.contextmanager
def frozen_heap():
    """Leave the objects that exist now out of full collections while the block runs.

    A heap that is already frozen (by the app, or by another job) is left as it is. Counting the
    frozen objects walks them all, so it is done once, on entry.

    >>> with frozen_heap():
    ...     gc.get_freeze_count() > 0
    True
    """
    global _jobs, _job_froze
    with _lock:
        if _jobs == 0:
            _job_froze = not _app_frozen and gc.get_freeze_count() == 0
            if _job_froze:
                gc.freeze()
        _jobs += 1
    try:
        yield
    finally:
        with _lock:
            _jobs -= 1
            if _jobs == 0 and _job_froze:
                _job_froze = False
                if not _app_frozen:
                    gc.unfreeze()
