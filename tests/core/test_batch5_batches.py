"""The batch methods (issue 22 item 2): a plain loop for small batches, worker processes for big
ones where they can be forked and CPUs are idle, never threads; the same ids as a loop either way,
in order, special-token arguments included; a worker's error, a worker's death and Ctrl+C each
surface as one exception, with every worker stopped. (Speed is a benchmark: bench/bench_batch.py.)"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokscope.core.text.errors import DisallowedSpecialError
from tokscope.core.tokenizer import batches

ROOT = Path(__file__).resolve().parents[2]
HAS_FORK = "fork" in multiprocessing.get_all_start_methods()
needs_fork = pytest.mark.skipif(not HAS_FORK, reason="no fork here")

TEXTS = ["Hello, world! ", "naïve café 日本語 👍 ", "def f(x):\n    return x\n", "Ελληνικά και русский ",
         "<|endoftext|> and <|endoftext|", "e\u0301\u0301 한국어 ", "\ud83d lone surrogate ", "[CLS] ##ab <s>"]


def batch(n: int = 64) -> list[str]:
    return [TEXTS[i % len(TEXTS)] * (1 + i % 7) + str(i) for i in range(n)]


@pytest.fixture
def pools(monkeypatch):
    """Records each batch that went to worker processes (the processes asked for)."""
    started: list[int] = []
    real = batches.map_in_processes

    def spy(fn, items, processes, context=None, **kwargs):
        started.append(processes)
        return real(fn, items, processes, context, **kwargs)

    monkeypatch.setattr(batches, "map_in_processes", spy)
    return started


@pytest.fixture
def idle(monkeypatch):
    """Two idle CPUs and low bars, so a test batch is big enough for worker processes: the plan's
    characters, and the probe's (one text worked here, then workers whatever they save)."""
    monkeypatch.setattr(batches, "idle_cpus", lambda: 2)
    monkeypatch.setattr(batches, "PROCESS_CHARS", 100)
    monkeypatch.setattr(batches, "PROBE_SECONDS", 0.0)
    monkeypatch.setattr(batches, "START_SECONDS", -1.0)


def test_a_batch_too_quick_to_share_keeps_the_loop(monkeypatch, pools, load):
    """The plan says two processes (two idle CPUs, a low bar of characters), but the texts go so
    fast that the rest would take about what starting a worker costs: the probe keeps the loop,
    and the ids are the loop's."""
    monkeypatch.setattr(batches, "idle_cpus", lambda: 2)
    monkeypatch.setattr(batches, "PROCESS_CHARS", 100)
    tok = load("cl100k_base")
    texts = batch(64)
    assert tok.encode_batch(texts, disallowed_special=()) == [tok.encode(t, disallowed_special=()) for t in texts]
    assert pools == []


def test_the_probe_decides_by_the_measured_speed():
    """Worked here until PROBE_SECONDS have gone, in runs that double; the rest goes to workers
    when sharing it saves more than START_SECONDS at the speed measured (a clock that moves 1 ms
    a call stands for the CPU time)."""
    ticks = iter(range(10_000))
    clock = lambda: next(ticks) * 0.001  # noqa: E731 - a stand-in clock
    seen: list[int] = []

    def work(part):
        seen.append(len(part))
        return [x * 2 for x in part]

    items = list(range(1, 1001))
    results, n, share = batches.probe(items, work, 2, size=lambda x: 1, clock=clock)
    # 1 ms a run: nine runs take 511 items, the tenth the other 489 (PROBE_SECONDS: 10 ms)
    assert seen == [1, 2, 4, 8, 16, 32, 64, 128, 256, 489]
    assert n == 1000 and share is False and results == [x * 2 for x in items]
    ticks = iter(range(10_000))
    results, n, share = batches.probe(items, work, 2, size=lambda x: 1, clock=lambda: next(ticks) * 0.02)
    assert n == 1 and results == [2]
    assert share is True  # 999 more at 20 ms each: 20 s, of which two processes save 10
    ticks = iter(range(10_000))
    assert batches.probe(items[:5], work, 2, size=lambda x: 1, clock=lambda: next(ticks) * 0.02)[2] is False  # 80 ms: saves 40


# ----- the decision ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("chars", "items", "cpus", "forks", "want"), [
    (0, 0, 4, True, 1),
    (10 << 20, 1, 4, True, 1),                          # one text: nothing to share
    (10 << 20, 100, 1, True, 1),                        # one CPU
    (10 << 20, 100, 4, False, 1),                       # no fork: the loop
    (batches.PROCESS_CHARS * 2 - 1, 100, 4, True, 1),   # not enough for two processes
    (batches.PROCESS_CHARS * 2, 100, 4, True, 2),
    (batches.PROCESS_CHARS * 3, 100, 4, True, 3),
    (batches.PROCESS_CHARS * 100, 100, 4, True, 4),     # no more than the CPUs
    (batches.PROCESS_CHARS * 100, 3, 8, True, 3),       # nor the items
])
def test_plan(chars, items, cpus, forks, want):
    assert batches.plan(chars=chars, items=items, cpus=cpus, forks=forks) == want


def test_cpus_are_the_affinity_mask_within_a_quota(tmp_path, monkeypatch):
    quota = tmp_path / "cpu.max"
    quota.write_text("150000 100000\n")
    assert batches._cgroup_quota(str(quota)) == 1
    quota.write_text("max 100000\n")
    assert batches._cgroup_quota(str(quota)) is None
    assert batches._cgroup_quota(str(tmp_path / "missing")) is None
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(batches, "_cgroup_quota", lambda: 2)
    assert batches.usable_cpus() == 2
    monkeypatch.setattr(batches, "_cgroup_quota", lambda: None)
    assert batches.usable_cpus() == 4
    monkeypatch.setattr(os, "getloadavg", lambda: (3.0, 3.0, 3.0))
    assert batches.idle_cpus() == 2  # this process's own share of the load is given back
    monkeypatch.setattr(os, "getloadavg", lambda: (8.0, 8.0, 8.0))
    assert batches.idle_cpus() == 0


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(0, 50), max_size=40), parts=st.integers(1, 12))
def test_slices_cover_the_items_in_order(sizes, parts):
    items = ["x" * n for n in sizes]
    bounds = batches.slices(items, parts)
    assert len(bounds) <= max(1, parts) and all(a < b for a, b in bounds)
    assert [i for a, b in bounds for i in range(a, b)] == list(range(len(items)))


# ----- a loop, or processes ----------------------------------------------------------------------------


def test_a_small_batch_is_a_plain_loop_in_this_thread(load, pools, monkeypatch):
    def no_threads(self):
        raise AssertionError("a batch started a thread")

    monkeypatch.setattr(threading.Thread, "start", no_threads)
    tok = load("cl100k_base")
    texts = batch()
    assert tok.encode_batch(texts, num_threads=8, disallowed_special=()) == [tok.encode(t, disallowed_special=()) for t in texts]
    assert tok.encode_ordinary_batch(texts) == [tok.encode_ordinary(t) for t in texts]
    ids = [tok.encode_ordinary(t) for t in texts]
    assert tok.decode_batch(ids) == [tok.decode(i) for i in ids]
    assert tok.decode_bytes_batch(ids) == [tok.decode_bytes(i) for i in ids]
    assert pools == []


def _kinds(load):
    """A tokenizer of each kind: byte-level BPE from ranks, and tokenizer.json files."""
    import hf_files

    from tokscope.core.formats import tokenizer_json as hf

    out = [load("o200k_base")]
    for name in ("gemma", "bert", "t5"):
        try:
            out.append(hf.from_json_text(hf_files.build(name), name))
        except hf_files.Missing:
            pass
    return out


SPECIAL_ARGS = [{"disallowed_special": ()}, {"allowed_special": "all"},
                {"allowed_special": "all", "disallowed_special": ()}]


@needs_fork
def test_a_big_batch_goes_to_processes_with_the_loops_ids(load, pools, idle):
    texts = batch(120)
    for tok in _kinds(load):
        specials = sorted(tok.special_tokens_set)
        args = SPECIAL_ARGS + ([{"allowed_special": {specials[0]}, "disallowed_special": ()}] if specials else [])
        for kwargs in args:
            want = [tok.encode(t, **kwargs) for t in texts]
            assert tok.encode_batch(texts, **kwargs) == want, (tok.name, kwargs)
        assert tok.encode_ordinary_batch(texts) == [tok.encode_ordinary(t) for t in texts]
    assert pools and all(p == 2 for p in pools)


@needs_fork
def test_a_refused_special_token_is_the_loops_error(load, pools, idle):
    tok = load("cl100k_base")
    texts = batch(120)
    with pytest.raises(DisallowedSpecialError) as loop_error:
        [tok.encode(t) for t in texts]
    with pytest.raises(DisallowedSpecialError) as batch_error:
        tok.encode_batch(texts)
    assert str(batch_error.value) == str(loop_error.value)
    assert pools == [2]
    assert multiprocessing.active_children() == []


def test_without_fork_a_big_batch_is_the_loop(load, pools, idle, monkeypatch):
    monkeypatch.setattr(batches, "fork_context", lambda: None)
    tok = load("cl100k_base")
    texts = batch(120)
    assert tok.encode_ordinary_batch(texts) == [tok.encode_ordinary(t) for t in texts]
    assert pools == []


def test_with_no_idle_cpu_a_big_batch_is_the_loop(load, pools, idle, monkeypatch):
    monkeypatch.setattr(batches, "idle_cpus", lambda: 1)
    tok = load("cl100k_base")
    texts = batch(120)
    assert tok.encode_ordinary_batch(texts) == [tok.encode_ordinary(t) for t in texts]
    assert pools == []


def test_asked_for_processes_a_batch_uses_them_whatever_its_size(load, pools):
    tok = load("gpt2")
    texts = batch(12)
    spawn = multiprocessing.get_context("spawn")
    assert tok.encode_ordinary_batch(texts, num_processes=2, mp_context=spawn) == [tok.encode_ordinary(t) for t in texts]
    assert tok.decode_batch([[31373], [995]], num_processes=2, mp_context=spawn) == ["hello", " world"]
    assert pools == [2, 2]


# ----- errors, deaths and Ctrl+C ----------------------------------------------------------------------


class Unpicklable(Exception):
    def __init__(self, a, b):
        super().__init__(f"{a}-{b}")


def _fails_on_seven(x):
    if x == 7:
        raise ValueError(f"bad item {x}")
    return x * 2


def _unpicklable_on_seven(x):
    if x == 7:
        raise Unpicklable(1, 2)
    return x


def _dies_on_seven(x):
    if x == 7 and multiprocessing.parent_process() is not None:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


@needs_fork
def test_map_in_processes_keeps_order():
    items = list(range(200))
    assert batches.map_in_processes(_fails_on_seven, [i + 10 for i in items], 3, size=lambda x: 1 + x % 5) == \
        [2 * (i + 10) for i in items]


@needs_fork
@pytest.mark.parametrize("where", [0, 5])  # in the worker's first slice, and in this process's
def test_an_error_is_raised_once_and_the_workers_stop(where):
    items = [1] * 40
    items[where] = 7
    with pytest.raises(ValueError, match="bad item 7"):
        batches.map_in_processes(_fails_on_seven, items, 2, size=lambda x: 1)
    assert multiprocessing.active_children() == []


@needs_fork
def test_an_error_that_cannot_travel_is_named():
    items = [1] * 40
    items[0] = 7  # the worker's first slice
    with pytest.raises((RuntimeError, Unpicklable), match="Unpicklable|1-2"):
        batches.map_in_processes(_unpicklable_on_seven, items, 2, size=lambda x: 1)
    assert pickle.loads(pickle.dumps(batches._portable(ValueError("x")))).args == ("x",)
    assert isinstance(batches._portable(Unpicklable(1, 2)), RuntimeError)
    assert multiprocessing.active_children() == []


@needs_fork
def test_a_worker_that_dies_is_an_error_not_a_hang():
    items = [7] * 40  # a worker dies on its first item; this process works on
    with pytest.raises(batches.WorkerDied, match="killed by SIGKILL"):
        batches.map_in_processes(_dies_on_seven, items, 2, size=lambda x: 1)
    assert multiprocessing.active_children() == []


CTRL_C = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    from tokscope.core.tokenizer import batches

    def slow(x):
        print("working", flush=True)
        time.sleep(0.05)
        return x

    batches.map_in_processes(slow, list(range(400)), 2, size=lambda x: 1)
    print("finished", flush=True)
""")


@needs_fork
@pytest.mark.skipif(sys.platform == "win32", reason="process groups")
def test_ctrl_c_is_one_keyboard_interrupt_and_no_worker_is_left():
    """Ctrl+C reaches the whole process group: the workers ignore it, the main process raises one
    KeyboardInterrupt (one traceback), and no process of the group is left behind."""
    proc = subprocess.Popen([sys.executable, "-c", CTRL_C.format(root=str(ROOT))], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        seen = 0
        while seen < 6:  # both processes are working by then
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            seen += line == "working\n"
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert "finished" not in out
    assert err.count("KeyboardInterrupt") == 1, err
    assert err.count("Traceback") == 1, err
    for _ in range(50):  # the group empties once the workers are stopped
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("a worker process outlived the interrupted batch")


_MARK: list[int] = []


def _marked(x):
    """1 in a forked worker (it inherits the test's mark), 0 in a spawned one."""
    return len(_MARK)


def test_asked_for_processes_where_fork_is_unsafe_the_workers_are_spawned(monkeypatch):
    monkeypatch.setattr(batches, "fork_context", lambda: None)  # as with another thread running
    monkeypatch.setattr(sys.modules[__name__], "_MARK", [1])
    got = batches.map_in_processes(_marked, list(range(40)), 2, size=lambda x: 1)
    assert len(got) == 40 and 0 in got  # the worker's slices came from a spawned process
    assert multiprocessing.active_children() == []
