"""tiktoken's ``Encoding`` API on the core :class:`~tokscope.core.tokenizer.tokenizer.Tokenizer`.

:class:`TiktokenAPI` is a base class of ``Tokenizer``: code written for ``tiktoken.Encoding``
runs on a tokscope tokenizer unchanged (``tokscope.get_encoding(name)`` returns one), with the same
results, errors included. It is built only on the tokenizer's public methods (``encode``,
``encode_ordinary``, ``encode_chunk``, ``chunks``, ``resolve_special``, ``decode``, ``decode_bytes``,
``token_bytes``, ``ranks``, ``special_tokens`` ...), so it serves every kind of tokenizer where the
tiktoken concept applies:

* everywhere: the batch methods (a plain loop for a small batch, worker processes for a big one
  where they can be forked, never threads: the work is Python's; :mod:`.batches` decides and runs
  them; ``num_processes=N``, tokscope's own keyword, asks for N processes),
  ``decode_single_token_bytes``, ``decode_tokens_bytes``, ``eot_token``, ``is_special_token``,
  ``encode_single_token`` (for kinds other than byte-level BPE: an added token's text, or bytes
  that exactly one token stands for);
* byte-level BPE from ranks only (the kind tiktoken runs): ``_encode_bytes``,
  ``encode_with_unstable``, ``token_byte_values`` and ``decode_with_offsets``; other kinds raise
  :class:`TypeError` saying so, since their tokens are not byte strings that join into the text.

``n_vocab``, ``max_token_value``, ``special_tokens_set`` and ``name`` are the tokenizer's own
attributes (``special_tokens_set`` is a ``frozenset`` where tiktoken has a ``set``).
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from ..models.ranks import merge
from . import batches

if TYPE_CHECKING:
    from ..added_tokens.specials import AllowedSpecial, DisallowedSpecial

__all__ = ["TiktokenAPI"]

#: Unicode's White_Space property (what tiktoken's ``char::is_whitespace`` tests; Python's
#: ``str.isspace`` also counts U+001C..U+001F)
_WHITE_SPACE = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                         "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_SPACE_BYTES = frozenset(b" \n\t")
_MAX_ID = 1 << 32  # tiktoken's ids are u32: larger or negative ids raise OverflowError there


def _check_str(text: object) -> str:
    if not isinstance(text, str):
        raise TypeError(f"{type(text).__name__!r} object is not an instance of 'str'")
    return text


def _check_id(token: object) -> int:
    """``token`` as an int, with tiktoken's errors: TypeError for non-integers, OverflowError
    outside 0..2**32-1."""
    value = operator.index(token)  # type: ignore[arg-type]
    if not 0 <= value < _MAX_ID:
        raise OverflowError("out of range integral type conversion attempted")
    return value


class TiktokenAPI:
    """The methods of ``tiktoken.Encoding`` a tokscope :class:`Tokenizer` lacks, with its semantics.

    Mixed into ``Tokenizer``; everything here goes through the tokenizer's public methods.

    >>> from tokscope.core import Tokenizer
    >>> tok = Tokenizer("t", {bytes([b]): b for b in range(256)} | {b"ab": 256}, r"\\S+|\\s+", {"<|endoftext|>": 257})
    >>> tok.encode_batch(["ab a", "<|endoftext|>"], allowed_special="all")
    [[256, 32, 97], [257]]
    >>> tok.decode_with_offsets([256, 32, 97]), tok.eot_token
    (('ab a', [0, 2, 3]), 257)
    >>> tok.encode_single_token(b"ab"), tok.decode_single_token_bytes(256)
    (256, b'ab')
    """

    __slots__ = ()

    # the tokenizer's own members this mixin relies on (see Tokenizer)
    name: str
    n_vocab: int
    special_tokens: dict[str, int]
    ranks: Mapping[bytes, int]
    encode: Callable[..., list[int]]
    encode_ordinary: Callable[..., list[int]]
    encode_chunk: Callable[[str], tuple[int, ...]]
    decode: Callable[..., str]
    decode_bytes: Callable[[Iterable[int]], bytes]
    token_bytes: Callable[[int], bytes]
    has_token: Callable[[int], bool]
    is_added: Callable[[int], bool]
    is_special: Callable[[int], bool]
    kind: str
    added_tokens: dict[str, int]
    chunks: Callable[..., list[Any]]
    resolve_special: Callable[..., tuple[frozenset[str], frozenset[str]]]
    derived: Callable[[str, Callable[[], Any]], Any]
    padding: Any

    # ----- batches -------------------------------------------------------------------------------

    def _batch(self, method: str, items: Iterable[Any], kwargs: dict[str, Any], num_processes: int | None,
               mp_context: Any, check: Callable[[Any], Any] | None = None, auto: bool = True,
               loop: Callable[..., list[Any]] | None = None) -> list[Any]:
        """``method`` on each item: in a plain loop, or in worker processes when asked
        (``num_processes``; 0 for one per usable CPU) or, with ``auto``, when the batch is big
        enough to gain from them (:func:`~.batches.plan`) and its first texts, worked here, say it
        is slow enough (:func:`~.batches.probe`). Never in threads: the work is Python's,
        and threads would wait on each other for the interpreter lock (tiktoken's ``num_threads``
        is accepted and has no effect). ``loop(items, **kwargs)``, when given, is the plain loop
        (the tokenizer's own, with its per-call work done once)."""
        items = list(items)
        if check is not None:
            for item in items:
                check(item)
        fn = getattr(self, method)

        def plain(part: Sequence[Any]) -> list[Any]:
            return loop(part, **kwargs) if loop is not None else [fn(item, **kwargs) for item in part]

        head: list[Any] = []
        if num_processes is None:
            processes = 1
            if auto:
                forks = (mp_context is None and batches.fork_context() is not None) or (
                    mp_context is not None and mp_context.get_start_method() == "fork")
                processes = batches.plan(chars=sum(map(len, items)), items=len(items), cpus=batches.idle_cpus(),
                                         forks=forks)
                if processes > 1 and len(items) > 1:  # the batch's own speed has the last word
                    head, n, share = batches.probe(items, plain, processes)
                    items = items[n:]
                    if not share:
                        processes = 1
        else:
            processes = num_processes or batches.usable_cpus()
        if processes < 2 or len(items) < 2:
            return head + plain(items) if head else plain(items)
        return head + batches.map_in_processes(partial(fn, **kwargs), items, processes, mp_context)

    def encode_ordinary_batch(self, text: Iterable[str], *, num_threads: int = 8, num_processes: int | None = None,
                              mp_context: Any = None) -> list[list[int]]:
        """:meth:`encode_ordinary` of each text: in a plain loop for a small batch, in worker
        processes (one per usable CPU, this process one of them) for a big one
        (:func:`~.batches.plan`: by the batch's characters and the idle CPUs this process may use;
        only where workers can be forked, so they inherit the tokenizer and nothing is pickled).

        ``num_processes`` (tokscope's own; 0 for one per usable CPU) asks for worker processes
        whatever the size, started by ``mp_context`` if given (workers that are not forked are sent
        the tokenizer pickled). A worker's error is raised here; Ctrl+C stops the workers and is
        one ``KeyboardInterrupt`` here. ``num_threads`` is accepted as tiktoken's and has no
        effect: the encoder's work is Python's, so threads would only wait on each other for the
        interpreter lock."""
        del num_threads  # accepted as tiktoken's; see _batch
        return self._batch("encode_ordinary", text, {}, num_processes, mp_context, _check_str)

    def encode_batch(
        self,
        text: Iterable[str],
        *,
        num_threads: int = 8,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
        num_processes: int | None = None,
        mp_context: Any = None,
        add_special_tokens: bool = False,
    ) -> list[list[int]]:
        """:meth:`encode` of each text with the same special-token arguments, in a loop or in
        worker processes (see :meth:`encode_ordinary_batch`). ``add_special_tokens`` (tokscope's
        keyword) is :meth:`encode`'s, and pads the batch as Hugging Face's ``encode_batch`` does
        when the tokenizer's file sets ``padding`` (every encoding to the longest, or the fixed length)."""
        allowed, disallowed = self.resolve_special(allowed_special, disallowed_special)
        kwargs: dict[str, Any] = {"allowed_special": allowed, "disallowed_special": disallowed}
        if add_special_tokens:
            kwargs["add_special_tokens"] = True
        del num_threads
        out = self._batch("encode", text, kwargs, num_processes, mp_context, _check_str,
                          loop=getattr(self, "encode_many", None))
        padding = self.padding
        if add_special_tokens and padding is not None and out:
            target = padding.target(len(ids) for ids in out)
            out = [padding.apply(ids, target) for ids in out]
        return out

    def decode_batch(self, batch: Iterable[Sequence[int]], *, errors: str = "replace", num_threads: int = 8,
                     num_processes: int | None = None, mp_context: Any = None) -> list[str]:
        """:meth:`decode` of each list of ids, in a plain loop (in worker processes when asked:
        decoding is a join of bytes, cheaper than sending the texts back)."""
        del num_threads
        return self._batch("decode", batch, {"errors": errors}, num_processes, mp_context, auto=False)

    def decode_bytes_batch(self, batch: Iterable[Sequence[int]], *, num_threads: int = 8,
                           num_processes: int | None = None, mp_context: Any = None) -> list[bytes]:
        """:meth:`decode_bytes` of each list of ids, in a plain loop (in worker processes when asked)."""
        del num_threads
        return self._batch("decode_bytes", batch, {}, num_processes, mp_context, auto=False)

    # ----- single tokens ---------------------------------------------------------------------------

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of the one token that stands for ``text_or_bytes`` (special tokens included);
        :class:`KeyError` when no token does.

        For kinds other than byte-level BPE: an added token's text, else the id of the only token
        whose :meth:`token_bytes` are these bytes (``ValueError`` when several tokens share them,
        as ``##ing`` and ``ing`` may)."""
        if isinstance(text_or_bytes, str):
            data = text_or_bytes.encode("utf-8")
        elif isinstance(text_or_bytes, bytes):
            data = text_or_bytes
        else:
            raise TypeError(f"{type(text_or_bytes).__name__!r} object is not an instance of 'bytes'")
        ranks = self.ranks
        if ranks:
            rank = ranks.get(data)
            if rank is not None:
                return rank
            try:
                return self.special_tokens[data.decode("utf-8")]
            except (UnicodeDecodeError, KeyError):
                raise KeyError(data) from None
        try:
            return self.added_tokens[data.decode("utf-8")]
        except (UnicodeDecodeError, KeyError):
            pass
        found = self.derived("tiktoken_api.bytes_to_ids", self._ids_by_bytes).get(data)
        if found is None:
            raise KeyError(data)
        if len(found) > 1:
            raise ValueError(f"{len(found)} tokens of {self.name} stand for {data!r} (ids {', '.join(map(str, found))})")
        return found[0]

    def _ids_by_bytes(self) -> dict[bytes, list[int]]:
        out: dict[bytes, list[int]] = {}
        for token_id in range(self.n_vocab):
            if self.has_token(token_id) and not self.is_added(token_id):
                out.setdefault(self.token_bytes(token_id), []).append(token_id)
        return out

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (special tokens included); :class:`KeyError` for an unknown id,
        ``TypeError``/``OverflowError`` for what is not an id at all, as tiktoken."""
        return self.token_bytes(_check_id(token))

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> list[bytes]:
        """Each token's bytes: ``[decode_single_token_bytes(t) for t in tokens]``."""
        return [self.decode_single_token_bytes(t) for t in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The decoded text and, per token, the index of the first character holding its bytes
        (byte-level BPE; the bytes must be valid UTF-8, else ``UnicodeDecodeError``, as tiktoken)."""
        self._require_byte_level("decode_with_offsets")
        parts = self.decode_tokens_bytes(tokens)
        chars = 0
        offsets = []
        for data in parts:
            offsets.append(max(0, chars - (0x80 <= data[0] < 0xC0)))
            chars += sum(1 for b in data if not 0x80 <= b < 0xC0)
        return b"".join(parts).decode("utf-8", errors="strict"), offsets

    # ----- vocabulary ------------------------------------------------------------------------------

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every mergeable token, sorted (special tokens not included), as tiktoken."""
        self._require_byte_level("token_byte_values")
        return list(self._sorted_token_bytes())

    def _sorted_token_bytes(self) -> list[bytes]:
        return self.derived("tiktoken_api.sorted_token_bytes", lambda: sorted(self.ranks))

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>`` (``KeyError`` when there is none, as tiktoken)."""
        return self.special_tokens["<|endoftext|>"]

    def is_special_token(self, token: int) -> bool:
        assert isinstance(token, int)
        return self.is_special(token)

    # ----- bytes and unstable endings (byte-level BPE) ---------------------------------------------

    def _require_byte_level(self, what: str) -> None:
        if not self.ranks:
            raise TypeError(f"{what} needs byte-level BPE from ranks (tokens that are byte strings); "
                            f"{self.name} is {self.kind}")

    def _bpe(self, data: bytes) -> list[int]:
        ranks = self.ranks
        rank = ranks.get(data)
        return [rank] if rank is not None else [ranks[part] for part in merge(data, ranks)]

    def _last_piece_len(self, ids: list[int], last_chunk: str) -> int:
        """How many of ``ids`` (ending with the tokens of ``last_chunk``, the text's last chunk)
        that chunk made, widened over the all-space tokens before it (tiktoken's rule: a split
        between whitespace chunks may disappear when text is appended)."""
        n = len(self.encode_chunk(last_chunk))
        token_bytes = self.token_bytes
        if n and set(token_bytes(ids[-n])) <= _SPACE_BYTES:
            while n < len(ids) and set(token_bytes(ids[-n - 1])) <= _SPACE_BYTES:
                n += 1
        return n

    def _encode_bytes(self, text: bytes) -> list[int]:
        """Encode bytes that need not be UTF-8, as tiktoken's ``Encoding._encode_bytes``.

        Valid UTF-8 is :meth:`encode_ordinary` of its text. Otherwise the longest valid prefix is
        encoded, then its last chunk (with the whitespace tokens before it) and every byte from the
        first invalid one on are merged as one piece."""
        self._require_byte_level("_encode_bytes")
        if not isinstance(text, bytes):
            raise TypeError(f"{type(text).__name__!r} object is not an instance of 'bytes'")
        try:
            return self.encode_ordinary(text.decode("utf-8"))
        except UnicodeDecodeError as exc:
            valid = exc.start
        prefix = text[:valid].decode("utf-8")
        ids = self.encode_ordinary(prefix)
        chunks = self.chunks(prefix) if prefix else []
        n = self._last_piece_len(ids, chunks[-1].text) if chunks else 0
        if ids and n:
            unstable = self.decode_bytes(ids[-n:]) + text[valid:]
            del ids[-n:]
        else:
            unstable = text[valid:]
        if unstable:
            ids.extend(self._bpe(unstable))
        return ids

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """The stable tokens of ``text`` and the token sequences its end could become when text is
        appended (tiktoken's ``encode_with_unstable``; tiktoken calls the API itself unstable).

        ``decode_bytes(stable)`` is a prefix of the text's bytes and every completion decodes, after
        it, to bytes starting with the rest. Completions are returned sorted (tiktoken's come in
        hash order)."""
        self._require_byte_level("encode_with_unstable")
        text = _check_str(text)
        allowed, disallowed = self.resolve_special(allowed_special, disallowed_special)
        chunks = self.chunks(text, allowed_special=allowed, disallowed_special=disallowed)  # refuses as encode
        ids = self.encode(text, allowed_special=allowed, disallowed_special=())
        if not chunks or chunks[-1].special:
            return ids, []
        n = self._last_piece_len(ids, chunks[-1].text)
        if n == 0:
            return ids, []
        unstable = self.decode_bytes(ids[-n:])
        del ids[-n:]
        if not unstable:
            return ids, []
        completions: set[tuple[int, ...]] = set()
        sorted_bytes = self._sorted_token_bytes()
        ranks = self.ranks
        for data in _starting_with(sorted_bytes, unstable):
            completions.add((ranks[data],))
        for i in range(1, len(unstable)):
            prefix, suffix = unstable[:i], unstable[i:]
            for data in _starting_with(sorted_bytes, suffix):
                possibility = prefix + data
                try:
                    encoded = self.encode_ordinary(possibility.decode("utf-8"))
                except UnicodeDecodeError:
                    encoded = self._bpe(possibility)
                seq = []
                length = 0
                for token_id in encoded:
                    seq.append(token_id)
                    length += len(self.token_bytes(token_id))
                    if length >= len(unstable):
                        break
                completions.add(tuple(seq))
        if len(unstable) > 1:
            char, size = _last_char(unstable)
            if len(unstable) - size > 0 and char is not None and char in _WHITE_SPACE:
                completions.add(tuple(self._bpe(unstable[:-size]) + self._bpe(unstable[-size:])))
        return ids, [list(c) for c in sorted(completions)]


def _starting_with(sorted_bytes: list[bytes], prefix: bytes) -> Iterable[bytes]:
    i = bisect.bisect_left(sorted_bytes, prefix)
    while i < len(sorted_bytes) and sorted_bytes[i].startswith(prefix):
        yield sorted_bytes[i]
        i += 1


def _last_char(data: bytes) -> tuple[str | None, int]:
    """The last UTF-8 character of ``data`` and its length in bytes; ``(None, 1)`` when the bytes
    do not end with a whole character.

    >>> _last_char("a\u3000".encode()), _last_char(b"a\\xe3\\x80")
    (('\u3000', 3), (None, 1))
    """
    for size in range(1, min(4, len(data)) + 1):
        try:
            char = data[-size:].decode("utf-8")
        except UnicodeDecodeError:
            continue
        if len(char) == 1:
            return char, size
        break
    return None, 1
