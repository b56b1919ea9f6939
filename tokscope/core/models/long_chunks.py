"""Byte-pair merging of one very long chunk (megabytes of spaces, of emoji, of one letter) in
windows, with memory bounded by the window instead of the chunk, and the very ids a merge of the
whole chunk gives.

Why windows may be joined exactly: call a token sequence *valid* when it is what BPE makes of its
own bytes. Any run of consecutive tokens of a valid sequence is valid (no merge crossed its ends),
and two valid sequences that share a token at the same bytes join into a valid one: the first up
to that token, the second after it. (The properties behind the incremental encoders of GitHub's
``bpe`` crate.) So a window is merged on its own; the next window starts at a token start of the
last one, a little before its end; the first token both give at the same bytes joins them, and
the tokens before it are final. Where two windows share no token (a pathological vocabulary),
the overlap and the window grow, and past :data:`MAX_WINDOW` the whole chunk is merged at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

#: bytes merged at once
WINDOW = 1 << 16
#: how far before a window's end the next one starts (at first; it grows when needed)
OVERLAP = 1 << 9
#: chunks at least this long are merged in windows
LONG_CHUNK = 2 * WINDOW
#: past this window, the whole chunk is merged at once (never reached on real vocabularies)
MAX_WINDOW = 1 << 24

Merge = Callable[[bytes], list[bytes]]


class _GrewTooLarge(Exception):
    """The windows grew past :data:`MAX_WINDOW` without sharing a token."""


def _spans(merge: Merge, data: bytes, start: int, end: int) -> list[tuple[int, int]]:
    """The ``(start, end)`` byte spans of what ``merge`` makes of ``data[start:end]``."""
    out = []
    pos = start
    for part in merge(data[start:end]):
        out.append((pos, pos + len(part)))
        pos += len(part)
    return out


def _remembering(merge: Merge, size: int = 4) -> Merge:
    """``merge`` that remembers its last few windows: a run of one character (megabytes of
    spaces) gives the same window again and again, merged once."""
    seen: dict[bytes, list[bytes]] = {}

    def remembered(data: bytes) -> list[bytes]:
        parts = seen.get(data)
        if parts is None:
            parts = merge(data)
            if len(seen) >= size:
                del seen[next(iter(seen))]
            seen[data] = parts
        return parts

    return remembered


def _windowed(data: bytes, merge: Merge, window: int, overlap: int) -> Iterator[tuple[int, int]]:
    """The token spans of ``data`` in order, merged window by window; :class:`_GrewTooLarge` when
    the windows grew past :data:`MAX_WINDOW` (then the caller merges the whole)."""
    n = len(data)
    out: list[tuple[int, int]] = []
    current = _spans(merge, data, 0, min(n, window))  # valid for data[:current_end]
    current_end = min(n, window)
    while current_end < n:
        while True:
            # the next window starts where a token of the current one starts, `overlap` before its end
            k = 0
            for i in range(len(current) - 1, -1, -1):
                if current[i][0] <= current_end - overlap:
                    k = i
                    break
            start = current[k][0]
            end = min(n, start + window)
            following = _spans(merge, data, start, end)
            ends = {s: e for s, e in current[k:]}
            shared = next((j for j, (s, e) in enumerate(following) if ends.get(s) == e), None)
            if shared is not None and (end == n or following[shared][1] < end):
                break
            overlap *= 2
            if overlap >= window // 2:
                window *= 2
                if window > MAX_WINDOW:
                    raise _GrewTooLarge
        cut = following[shared]
        upto = k + next(i for i, span in enumerate(current[k:]) if span == cut)
        out.extend(current[: upto + 1])
        current = following[shared + 1 :]
        current_end = end
        if len(out) >= 1 << 16:  # hand them over in batches: the caller keeps ids, not spans
            yield from out
            out = []
    yield from out
    yield from current


def long_chunk_ids(data: bytes, ranks: Mapping[bytes, int], merge: Merge, *, window: int = WINDOW,
                   overlap: int = OVERLAP) -> list[int]:
    """The ids BPE (``merge``, one chunk's bytes to its parts) makes of ``data``, merged in windows.

    >>> from tokscope.core.models.ranks import merge
    >>> ranks = {bytes([i]): i for i in range(256)} | {b"  ": 256, b"    ": 257, b"a ": 258}
    >>> data = b"a" + b" " * 1001
    >>> whole = [ranks[p] for p in merge(data, ranks)]
    >>> long_chunk_ids(data, ranks, lambda d: merge(d, ranks), window=64, overlap=8) == whole
    True
    """
    ids: list[int] = []
    try:
        for start, end in _windowed(data, _remembering(merge), window, overlap):
            ids.append(ranks[data[start:end]])
    except _GrewTooLarge:
        return [ranks[part] for part in merge(data)]
    return ids
