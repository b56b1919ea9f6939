"""How a batch of texts is worked through: a plain loop in this process, or worker processes when
the batch is big enough to gain from them; never threads (the work is Python's, and threads would
only take turns at the interpreter lock).

* :func:`plan` is the decision, pure: how many processes (this one included) for a batch of so
  many characters and items on so many usable CPUs; 1 is the plain loop.
* :func:`probe` checks that decision against the batch itself before any worker starts: it works
  the batch's first texts here until :data:`PROBE_SECONDS` of CPU time have gone, and the rest
  goes to workers only when, at that speed, they would save more than starting them costs
  (:data:`START_SECONDS`). A tokenizer fast enough to work the rest in about that time keeps the
  loop, so a batch is not slower than the loop for lack of work to share.
* :func:`idle_cpus` and :func:`fork_context` measure what :func:`plan` needs: the CPUs this
  process may run on (``os.sched_getaffinity``, a container's quota) that nothing else keeps busy,
  and whether a ``fork`` is safe here (the platform has it and this process runs no other thread). Without ``fork`` a batch takes the loop unless
  the caller asks for processes: then workers start afresh and are sent the function pickled
  (our own objects, to our own processes).
* :func:`map_in_processes` applies a function to each item in worker processes, this process
  taking its share; the results come back in order. A worker inherits the function through
  ``fork`` (nothing pickled) and gets its items a slice at a time through its own pipe, so this
  process always knows what each worker holds: an error in a worker is raised here, as the
  worker raised it, once; a worker that dies is a :class:`WorkerDied`; Ctrl+C (which reaches the
  whole process group) is ignored by the workers and raised here as one ``KeyboardInterrupt``;
  in every case the workers are stopped before the call returns. ``tokscope count -j`` starts
  its workers with the same helpers (:func:`start_quietly`, :func:`serve_quietly`,
  :func:`death`).

>>> plan(chars=5_000, items=100, cpus=8, forks=True)
1
>>> plan(chars=3_000_000, items=1_000, cpus=2, forks=True)
2
>>> plan(chars=3_000_000, items=1_000, cpus=2, forks=False)
1
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["PROBE_SECONDS", "PROCESS_CHARS", "START_SECONDS", "WorkerDied", "death", "fork_context", "idle_cpus",
           "map_in_processes", "plan", "probe", "slices", "start_quietly", "serve_quietly", "usable_cpus"]

#: The characters (or ids) each process must have for a batch to go to worker processes: below
#: it, starting a worker (a fork, the results sent back) costs more than it saves (bench/README.md).
PROCESS_CHARS = 256 << 10
#: Slices per process: small enough that a process done early takes another, big enough that
#: sending one costs little next to working it.
SLICES_PER_PROCESS = 4

#: True in a worker process (a worker never starts workers of its own).
_in_worker = False


class WorkerDied(RuntimeError):
    """A worker process ended (killed, out of memory) before sending back its results."""


def plan(*, chars: int, items: int, cpus: int, forks: bool, process_chars: int | None = None) -> int:
    """How many processes (this one included) should work a batch of ``items`` texts holding
    ``chars`` characters in all on ``cpus`` idle CPUs: 1 (the plain loop) unless workers can be
    forked and each process gets at least ``process_chars`` characters (:data:`PROCESS_CHARS`).

    >>> [plan(chars=c, items=10_000, cpus=4, forks=True) for c in (100_000, 600_000, 5_000_000)]
    [1, 2, 4]
    >>> plan(chars=5_000_000, items=1, cpus=4, forks=True), plan(chars=5_000_000, items=3, cpus=1, forks=True)
    (1, 1)
    """
    if not forks or items < 2 or cpus < 2:
        return 1
    per_process = PROCESS_CHARS if process_chars is None else process_chars
    return max(1, min(cpus, items, chars // max(1, per_process)))


#: CPU seconds of a batch worked in this process before workers are decided on (:func:`probe`)
PROBE_SECONDS = 0.01
#: What starting workers for a batch and taking their results back costs this process, in seconds
#: (the fork, the copies its pages then take, the results sent back: bench/README.md); workers are
#: started only when they would save more than this
START_SECONDS = 0.07


def probe(items: Sequence[Any], work: Callable[[Sequence[Any]], list[Any]], processes: int, *,
          size: Callable[[Any], int] = len, clock: Callable[[], float] = time.process_time) -> tuple[list[Any], int, bool]:
    """``(results, n, share)``: ``work`` (a plain loop over a list of items) done here on the first
    ``n`` items, in runs that double, until :data:`PROBE_SECONDS` of ``clock`` have gone or the
    batch is done; ``share`` says whether the other items should go to ``processes`` processes:
    at the speed measured (by ``size``, characters), they would take long enough that sharing
    them saves more than :data:`START_SECONDS`.

    >>> ticks = iter(range(100))
    >>> slow = lambda part: [len(x) for x in part]
    >>> results, n, share = probe(["ab"] * 20, slow, 2, clock=lambda: next(ticks) * 0.005)
    >>> results, n, share   # 0.01 s for 6 characters: the other 34 would take 0.057 s, sharing saves 0.028
    ([2, 2, 2], 3, False)
    >>> ticks = iter(range(100))
    >>> probe(["ab"] * 200, slow, 2, clock=lambda: next(ticks) * 0.005)[1:]   # the other 394: 0.66 s
    (3, True)
    """
    out: list[Any] = []
    n = done = 0
    run = 1
    start = clock()
    elapsed = 0.0
    while n < len(items):
        part = items[n:n + run]
        out.extend(work(part))
        n += len(part)
        done += sum(map(size, part))
        elapsed = clock() - start
        if elapsed >= PROBE_SECONDS:
            break
        run *= 2
    if n >= len(items):
        return out, n, False
    rest = sum(map(size, items[n:]))
    rest_seconds = elapsed * rest / max(1, done)
    return out, n, rest_seconds * (1 - 1 / max(1, processes)) > START_SECONDS


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity mask where the platform has one, no more
    than a container's CPU quota (cgroup v2 ``cpu.max``) where one is set.

    >>> usable_cpus() >= 1
    True
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    quota = _cgroup_quota()
    return max(1, min(cpus, quota)) if quota is not None else cpus


def _cgroup_quota(path: str = "/sys/fs/cgroup/cpu.max") -> int | None:
    """Whole CPUs of a cgroup v2 quota (``"150000 100000"`` is 1), or None when there is none."""
    try:
        with open(path, encoding="ascii") as f:
            fields = f.read().split()
        return None if fields[0] == "max" else int(fields[0]) // int(fields[1])
    except (OSError, ValueError, IndexError, ZeroDivisionError):
        return None


def idle_cpus() -> int:
    """The usable CPUs (:func:`usable_cpus`) that other processes do not keep busy: the load
    average of the last minute taken off, this process's own share of it given back. A worker on
    a busy CPU only takes turns with this process (and on a machine shared through equal CPU
    shares per group of processes, two processes get no more time than one), so a batch goes to
    workers only where CPUs are idle.

    >>> 0 <= idle_cpus() <= usable_cpus()
    True
    """
    cpus = usable_cpus()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average here: count every CPU
        return cpus
    return max(0, min(cpus, int(cpus - load + 1)))


def fork_context() -> Any:
    """The ``fork`` multiprocessing context where there is one and a fork is safe (this process
    runs no other thread, and is not itself a worker); ``None`` otherwise."""
    import multiprocessing

    if _in_worker or "fork" not in multiprocessing.get_all_start_methods() or threading.active_count() != 1:
        return None
    return multiprocessing.get_context("fork")


def slices(items: Sequence[Any], parts: int, size: Callable[[Any], int] = len) -> list[tuple[int, int]]:
    """``(start, end)`` bounds cutting ``items`` into at most ``parts`` contiguous slices of about
    equal total ``size``, in order, none empty.

    >>> slices(["a" * 10, "b", "c", "d" * 10, "e"], 2)
    [(0, 3), (3, 5)]
    >>> slices([], 3), slices(["", ""], 4)
    ([], [(0, 1), (1, 2)])
    """
    n = len(items)
    if not n:
        return []
    parts = max(1, min(parts, n))
    sizes = [max(1, size(item)) for item in items]
    total = sum(sizes)
    out: list[tuple[int, int]] = []
    start = 0
    done = 0
    for i, s in enumerate(sizes):
        done += s
        if len(out) < parts - 1 and done * parts >= total * (len(out) + 1) and i + 1 < n:
            out.append((start, i + 1))
            start = i + 1
    out.append((start, n))
    return out


# ----- starting and ending workers ---------------------------------------------------------------


def death(code: int | None) -> str:
    """How a worker process ended, for a message.

    >>> death(-9), death(1)
    ('killed by SIGKILL', 'exit code 1')
    """
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def start_quietly(process: Any) -> None:
    """Start a worker with Ctrl+C blocked, so a SIGINT sent to the whole process group before the
    worker ignores it (:func:`serve_quietly`) cannot kill it: the main process alone reacts to
    Ctrl+C, never with "a worker process died"."""
    mask = getattr(signal, "pthread_sigmask", None)
    if mask is None:
        process.start()
        return
    mask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        process.start()
    finally:
        mask(signal.SIG_UNBLOCK, {signal.SIGINT})


def serve_quietly() -> None:
    """What a worker does first: ignore Ctrl+C (the main process stops the workers), end on
    SIGTERM and SIGHUP, then unblock Ctrl+C (blocked by :func:`start_quietly`)."""
    global _in_worker
    _in_worker = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            signal.signal(number, signal.SIG_DFL)
    mask = getattr(signal, "pthread_sigmask", None)
    if mask is not None:
        mask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives a pickle round trip (so the main process raises it as it is), else
    a :class:`RuntimeError` that names it."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - any exception that cannot travel is named instead
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def _serve(conn: Any, fn: Callable[[Any], Any]) -> None:
    """A worker: apply ``fn`` to each item of each slice sent, send back the results (or the
    first error), until sent ``None`` or the pipe closes."""
    serve_quietly()
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        try:
            answer: tuple[str, Any] = ("ok", [fn(item) for item in job])
        except Exception as exc:  # noqa: BLE001 - raised in the main process, as it is
            answer = ("error", _portable(exc))
        try:
            conn.send(answer)
        except (OSError, ValueError):
            return


@dataclass(slots=True)
class _Worker:
    process: Any
    conn: Any
    job: int | None = None  # the index of the slice it holds


def map_in_processes(fn: Callable[[Any], Any], items: Sequence[Any], processes: int, context: Any = None,
                     *, size: Callable[[Any], int] = len) -> list[Any]:
    """``[fn(item) for item in items]`` worked by ``processes`` processes, this one among them
    (see the module docstring). ``context`` is a multiprocessing context (default: ``fork``
    where it is safe, else ``spawn``, whose workers are sent ``fn`` pickled)."""
    import multiprocessing
    from multiprocessing.connection import wait

    items = list(items)
    bounds = slices(items, max(1, processes) * SLICES_PER_PROCESS, size)
    if processes < 2 or len(bounds) < 2:
        return [fn(item) for item in items]
    context = context or fork_context() or multiprocessing.get_context("spawn")
    forked = context.get_start_method() == "fork"
    results: list[list[Any] | None] = [None] * len(bounds)
    workers: list[_Worker] = []
    pending = iter(range(len(bounds)))
    if forked:
        gc.freeze()  # a forked worker's collector would otherwise touch (and so copy) every inherited object
    try:
        for _ in range(min(processes - 1, len(bounds) - 1)):
            mine, theirs = context.Pipe()
            process = context.Process(target=_serve, args=(theirs, fn), daemon=True)
            start_quietly(process)
            theirs.close()
            workers.append(_Worker(process, mine))

        def hand_out() -> None:
            for worker in workers:
                if worker.job is None:
                    k = next(pending, None)
                    if k is None:
                        return
                    worker.job = k
                    start, end = bounds[k]
                    worker.conn.send(items[start:end])

        def collect(timeout: float | None) -> None:
            busy = [w for w in workers if w.job is not None]
            if not busy:
                return
            ready = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout))
            for worker in busy:
                if not ready & {worker.conn, worker.process.sentinel}:
                    continue
                try:
                    status, value = worker.conn.recv()
                except (EOFError, OSError):
                    worker.process.join(1)
                    raise WorkerDied(f"a worker process died ({death(worker.process.exitcode)})") from None
                if status == "error":
                    raise value
                results[worker.job] = value  # type: ignore[index]
                worker.job = None

        hand_out()
        for k in pending:  # this process's share: the next slice no worker has taken
            start, end = bounds[k]
            results[k] = [fn(item) for item in items[start:end]]
            collect(0)
            hand_out()
        while any(w.job is not None for w in workers):
            collect(None)
            hand_out()
    finally:
        _stop(workers)
        if forked:
            gc.unfreeze()
    return [value for part in results for value in part]  # type: ignore[union-attr]


def _stop(workers: list[_Worker]) -> None:
    stop_workers([(worker.process, worker.conn, worker.job is None) for worker in workers])


def stop_workers(workers: list[tuple[Any, Any, bool]]) -> None:
    """End worker processes, given as ``(process, connection, idle)``: an idle one is told to stop
    (``None`` on its pipe) and given half a second, one still working is terminated (killed if it
    outlives that); every connection is closed."""
    for _, conn, idle in workers:
        if idle:
            try:
                conn.send(None)
            except (OSError, ValueError):
                pass
    for process, conn, idle in workers:
        process.join(0.5 if idle else 0)
        if process.is_alive():
            process.terminate()
            process.join(1)
            if process.is_alive():
                process.kill()
                process.join()
        conn.close()
