"""Stop Python code running in this thread at a deadline, or when a cancel event is set, without
tracing it.

A chat template is untrusted code that may loop without end, in loops that call nothing (so no
check inside the loop ever runs). :func:`interruptible` starts a watcher thread that waits for the
deadline (looking at the cancel event every 20 ms) and then raises :class:`TimeUp` or
:class:`Cancelled` in the watched thread, through CPython's ``PyThreadState_SetAsyncExc``: the
exception takes effect at the next bytecode the thread runs, inside the template's own loop. The
code runs at full speed meanwhile (a ``sys.settrace`` line hook made templates three times
slower). A long call into C (a huge string operation) is not interrupted: the size budget of
:mod:`.templates` refuses those before they start.

The watcher fires at most once, and only while the block runs: leaving the block takes the lock
the watcher fires under, and an exception fired as the block ended is raised and dropped there,
so nothing is raised after the block. Both exceptions derive from ``BaseException``, so no ``except Exception``
in the template machinery swallows them. Where ``PyThreadState_SetAsyncExc`` is missing (not
CPython), or a trace or profile hook is already set in the thread (a debugger, coverage: CPython
then may not let the watcher run during a tight loop), a ``sys.settrace`` hook checks the deadline
instead, and the previous hook is put back afterwards.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Interrupted", "TimeUp", "Cancelled", "interruptible"]


class Interrupted(BaseException):  # noqa: N818 - not an error: a stop
    """Raised in the watched code when it must stop."""


class TimeUp(Interrupted):
    """The deadline passed."""


class Cancelled(Interrupted):
    """The cancel event was set."""


def _async_raiser() -> tuple[Callable[[int, Any], int], Callable[[int, Any], int]] | None:
    """``(raise_in, clear_in)``: CPython's ``PyThreadState_SetAsyncExc`` with an exception class,
    and with NULL (clearing a pending one); ``None`` when the interpreter has no such call."""
    api = getattr(ctypes, "pythonapi", None)
    if api is None or not hasattr(api, "PyThreadState_SetAsyncExc"):
        return None
    raise_in = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)(("PyThreadState_SetAsyncExc", api))
    clear_in = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)(("PyThreadState_SetAsyncExc", api))
    return raise_in, clear_in


_RAISER = _async_raiser()

#: how often the watcher looks at the cancel event
POLL = 0.02


class _Watcher:
    __slots__ = ("cancel", "deadline", "done", "fired", "lock", "stop", "thread", "tid")

    def __init__(self, seconds: float, cancel: threading.Event | None) -> None:
        self.tid = threading.get_ident()
        self.deadline = time.monotonic() + seconds
        self.cancel = cancel
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.done = False
        self.fired = False
        self.thread = threading.Thread(target=self.run, name="tokscope-deadline", daemon=True)

    def run(self) -> None:
        assert _RAISER is not None
        while True:
            left = self.deadline - time.monotonic()
            wait = min(POLL, max(left, 0.0)) if self.cancel is not None else max(left, 0.0)
            if self.stop.wait(wait):
                return
            kind: type[Interrupted] | None = None
            if self.cancel is not None and self.cancel.is_set():
                kind = Cancelled
            elif time.monotonic() >= self.deadline:
                kind = TimeUp
            if kind is None:
                continue
            with self.lock:
                if not self.done:
                    _RAISER[0](self.tid, kind)
                    self.fired = True
            return

    def end(self) -> None:
        """Stop watching. An exception fired but not yet raised (the block ended just as the
        deadline passed) is raised and dropped here: CPython's way to clear a pending one would
        leave the interpreter's eval breaker set for good."""
        try:
            with self.lock:
                self.done = True
            if self.fired:
                for _ in range(1000):  # a pending exception is raised at the first backward jump
                    pass
        except Interrupted:
            pass
        self.stop.set()
        self.thread.join()


def _tracer(deadline: float, cancel: threading.Event | None) -> Callable[..., Any]:
    """The fallback: a ``sys.settrace`` hook that checks every 1,024 line and call events."""
    ticks = [0]

    def check() -> None:
        if cancel is not None and cancel.is_set():
            raise Cancelled
        if time.monotonic() > deadline:
            raise TimeUp

    def local(frame: Any, event: str, arg: Any) -> Any:
        ticks[0] += 1
        if not ticks[0] & 0x3FF:
            check()
        return local

    return local


class interruptible:  # noqa: N801 - used as a function: ``with interruptible(seconds):``
    """Run the block with a deadline ``seconds`` from now: :class:`TimeUp` is raised in it when it
    passes, :class:`Cancelled` when ``cancel`` is set; once the block has ended, neither is.

    >>> with interruptible(5):
    ...     sum(range(1000))
    499500
    >>> try:
    ...     with interruptible(0.05):
    ...         while True:
    ...             pass
    ... except TimeUp:
    ...     print("stopped")
    stopped
    """

    def __init__(self, seconds: float, cancel: threading.Event | None = None) -> None:
        self.seconds = seconds
        self.cancel = cancel
        self._watcher: _Watcher | None = None
        self._previous: Any = None

    def __enter__(self) -> None:
        if _RAISER is None or sys.gettrace() is not None or sys.getprofile() is not None:
            # no async exceptions here, or a debugger, coverage or a profiler hooks this thread
            # (then CPython may not let the watcher run in a tight loop): check by tracing instead
            self._previous = sys.gettrace()
            sys.settrace(_tracer(time.monotonic() + self.seconds, self.cancel))
            return
        self._watcher = _Watcher(self.seconds, self.cancel)
        self._watcher.thread.start()

    def __exit__(self, *exc: object) -> bool:
        if self._watcher is None:
            sys.settrace(self._previous)
        else:
            self._watcher.end()
        return False
