"""The batch methods: a plain loop for small batches, worker processes for big ones when CPUs are
idle, never threads; the same ids as a loop either way, in order. (Speed is a benchmark:
bench/bench_batch.py.)"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import threading

import pytest

from tokscope.core.tokenizer import tiktoken_api

TEXTS = ["Hello, world! ", "naïve café 日本語 👍 ", "def f(x):\n    return x\n", "Ελληνικά και русский "]


def batch(n: int = 64) -> list[str]:
    return [TEXTS[i % len(TEXTS)] * (1 + i % 7) + str(i) for i in range(n)]


@pytest.fixture
def pools(monkeypatch):
    """Counts the process pools started."""
    started = []
    real = concurrent.futures.ProcessPoolExecutor

    def pool(*args, **kwargs):
        started.append(kwargs.get("mp_context"))
        return real(*args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", pool)
    return started


def test_a_small_batch_is_a_plain_loop_in_this_thread(load, pools, monkeypatch):
    def no_threads(self):
        raise AssertionError("a batch started a thread")

    monkeypatch.setattr(threading.Thread, "start", no_threads)
    tok = load("cl100k_base")
    texts = batch()
    assert tok.encode_batch(texts, num_threads=8) == [tok.encode(t) for t in texts]
    assert tok.encode_ordinary_batch(texts) == [tok.encode_ordinary(t) for t in texts]
    ids = [tok.encode(t) for t in texts]
    assert tok.decode_batch(ids) == texts and tok.decode_bytes_batch(ids) == [t.encode() for t in texts]
    assert pools == []


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork here")
def test_a_big_batch_goes_to_processes_when_cpus_are_idle(load, pools, monkeypatch):
    tok = load("o200k_base")
    texts = batch(200)
    want = [tok.encode_ordinary(t) for t in texts]
    monkeypatch.setattr(tiktoken_api, "PROCESS_BATCH", 1000)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert tiktoken_api.worth_processes(texts)
    assert tok.encode_ordinary_batch(texts) == want
    assert tok.encode_batch(texts, allowed_special="all") == [tok.encode(t, allowed_special="all") for t in texts]
    assert len(pools) == 2 and all(p.get_start_method() == "fork" for p in pools)
    monkeypatch.setattr(os, "getloadavg", lambda: (3.0, 3.0, 3.0))  # every CPU busy: the loop
    assert not tiktoken_api.worth_processes(texts)
    assert tok.encode_ordinary_batch(texts) == want and len(pools) == 2


def test_asked_for_processes_a_batch_uses_them_whatever_its_size(load, pools):
    tok = load("gpt2")
    texts = batch(12)
    spawn = multiprocessing.get_context("spawn")
    assert tok.encode_ordinary_batch(texts, num_processes=2, mp_context=spawn) == [tok.encode_ordinary(t) for t in texts]
    assert pools == [spawn]


def test_without_fork_the_bar_is_higher(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    texts = ["x" * 1000] * (tiktoken_api.PROCESS_BATCH // 1000 + 1)
    assert tiktoken_api.worth_processes(texts)
    assert not tiktoken_api.worth_processes(texts, multiprocessing.get_context("spawn"))
