"""A byte-level BPE tokenizer: a pattern, mergeable ranks and special tokens.

This is the one tokenizer every part of tokscope uses. It reproduces tiktoken's behaviour token
for token (including its special-token checks and its handling of lone surrogates), and adds what
a token explorer needs: pieces with offsets, chunks, parents recovered from ranks.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Literal

import regex

from .bpe import merge
from .errors import DisallowedSpecialError, UnknownTokenError
from .types import Chunk, Parents, Piece, Token, is_continuation
from .unicode_pattern import compile_pattern

AllowedSpecial = Literal["all"] | Collection[str]
DisallowedSpecial = Literal["all"] | Collection[str]

#: Entries kept in the chunk cache before it is emptied (bounded memory on endless input).
CHUNK_CACHE_LIMIT = 200_000

#: Characters of text kept in the segment cache (whole lines' ids, for line-safe patterns) before
#: it is emptied; segments longer than SEGMENT_CACHE_MAX_LEN are never cached.
SEGMENT_CACHE_CHARS = 8_000_000
SEGMENT_CACHE_MAX_LEN = 200_000


def fix_surrogates(text: str) -> str:
    """Replace lone surrogates with U+FFFD the way tiktoken does (via a UTF-16 round trip).

    >>> fix_surrogates("a\\ud800b")
    'a�b'
    >>> fix_surrogates("plain")
    'plain'
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class Tokenizer:
    """Byte-level BPE from ``ranks`` (``bytes -> rank``), a ``pattern`` and ``special_tokens``.

    For every tokenizer tokscope knows, a mergeable token's id is its rank. The object is safe to
    share between threads: its caches only grow by whole entries.
    """

    def __init__(
        self,
        name: str,
        ranks: Mapping[bytes, int],
        pattern: str,
        special_tokens: Mapping[str, int] | None = None,
        *,
        n_vocab: int | None = None,
    ) -> None:
        self.name = name
        self.pattern = pattern
        self._ranks = ranks if isinstance(ranks, dict) else dict(ranks)
        self.special_tokens: dict[str, int] = dict(special_tokens or {})
        self._pat = compile_pattern(pattern)
        self._decoder: dict[int, bytes] | None = None
        self._special_by_id = {v: k for k, v in self.special_tokens.items()}
        self._special_res: dict[frozenset[str], regex.Pattern[str]] = {}
        self._chunk_cache: dict[str, tuple[int, ...]] = {}
        self._segment_cache: dict[str, list[int]] = {}
        self._segment_cache_chars = 0
        self._parents: dict[int, Parents | None] = {}
        self._lock = threading.Lock()
        max_rank = max(self._ranks.values(), default=-1)
        max_special = max(self.special_tokens.values(), default=-1)
        self.max_token_value = max(max_rank, max_special)
        self.n_vocab = n_vocab if n_vocab is not None else self.max_token_value + 1

    def __repr__(self) -> str:
        return f"<Tokenizer {self.name!r} n_vocab={self.n_vocab}>"

    # ----- vocabulary -------------------------------------------------------------------------

    @property
    def ranks(self) -> Mapping[bytes, int]:
        """The mergeable ranks (read-only view by convention; do not mutate)."""
        return self._ranks

    @property
    def n_merges(self) -> int:
        """How many mergeable tokens are not single bytes."""
        return sum(1 for b in self._ranks if len(b) > 1)

    @property
    def special_tokens_set(self) -> frozenset[str]:
        return frozenset(self.special_tokens)

    def _decoder_map(self) -> dict[int, bytes]:
        if self._decoder is None:
            with self._lock:
                if self._decoder is None:
                    decoder = {rank: token for token, rank in self._ranks.items()}
                    for text, token_id in self.special_tokens.items():
                        decoder[token_id] = text.encode("utf-8")
                    self._decoder = decoder
        return self._decoder

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token; :class:`UnknownTokenError` names an id not in the vocabulary."""
        try:
            return self._decoder_map()[token_id]
        except (KeyError, TypeError):
            raise UnknownTokenError(token_id, self.n_vocab) from None

    def has_token(self, token_id: int) -> bool:
        return token_id in self._decoder_map()

    def token(self, token_id: int) -> Token:
        """The vocabulary entry for ``token_id``."""
        data = self.token_bytes(token_id)
        if token_id in self._special_by_id:
            return Token(token_id, data, None, special=True)
        return Token(token_id, data, token_id)

    def rank_of(self, data: bytes) -> int | None:
        """The rank of ``data`` when it is a mergeable token, else ``None``."""
        return self._ranks.get(data)

    def is_special(self, token_id: int) -> bool:
        return token_id in self._special_by_id

    def parents(self, token_id: int) -> Parents | None:
        """The two tokens whose merge made ``token_id``, recovered from the ranks on demand.

        Runs BPE on the token's own bytes allowing only lower ranks; a proper merge leaves exactly
        two parts. Returns ``None`` for single bytes, special tokens, and (rarely, in foreign
        vocabularies) tokens that no single merge of lower-ranked tokens can build.
        """
        cached = self._parents.get(token_id, False)
        if cached is not False:
            return cached  # type: ignore[return-value]
        data = self.token_bytes(token_id)
        result: Parents | None = None
        if token_id not in self._special_by_id and len(data) > 1:
            rank = self._ranks[data]
            parts = merge(data, self._ranks, max_rank=rank)
            if len(parts) == 2:
                result = Parents(self._ranks[parts[0]], self._ranks[parts[1]])
        self._parents[token_id] = result
        return result

    # ----- chunks -----------------------------------------------------------------------------

    def _special_regex(self, tokens: frozenset[str]) -> regex.Pattern[str]:
        pat = self._special_res.get(tokens)
        if pat is None:
            # longest first so that one special that prefixes another cannot shadow it
            alternatives = sorted(tokens, key=lambda t: (-len(t), t))
            pat = regex.compile("|".join(regex.escape(t) for t in alternatives))
            self._special_res[tokens] = pat
        return pat

    def check_special(self, text: str, disallowed: Collection[str]) -> None:
        """Raise :class:`DisallowedSpecialError` if ``text`` contains one of ``disallowed``."""
        if disallowed:
            found = self._special_regex(frozenset(disallowed)).search(text)
            if found:
                raise DisallowedSpecialError(found.group())

    def _segments(
        self, text: str, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
    ) -> Iterator[tuple[int, int, bool]]:
        """Split ``text`` into ordinary spans and allowed special tokens: ``(start, end, special)``."""
        allowed = self.special_tokens_set if allowed_special == "all" else frozenset(allowed_special)
        unknown = allowed - self.special_tokens_set
        if unknown:
            raise DisallowedSpecialError(
                sorted(unknown)[0], hint="{token!r} is not a special token of " + self.name
            )
        disallowed = (
            self.special_tokens_set - allowed if disallowed_special == "all" else frozenset(disallowed_special)
        )
        self.check_special(text, disallowed)
        pos = 0
        if allowed:
            for found in self._special_regex(allowed).finditer(text):
                if found.start() > pos:
                    yield pos, found.start(), False
                yield found.start(), found.end(), True
                pos = found.end()
        if pos < len(text) or not text:
            yield pos, len(text), False

    def chunks(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = (),
        disallowed_special: DisallowedSpecial = (),
    ) -> list[Chunk]:
        """The pre-tokenization chunks of ``text`` with character offsets.

        By default special tokens are treated as ordinary text (no check); pass the same special
        arguments as :meth:`encode` to split them out as special chunks.
        """
        text = fix_surrogates(text)
        out: list[Chunk] = []
        for start, end, special in self._segments(text, allowed_special, disallowed_special):
            if special:
                out.append(Chunk(text[start:end], start, end, special=True))
                continue
            for found in self._pat.finditer(text, start, end):
                out.append(Chunk(found.group(), found.start(), found.end()))
        return out

    # ----- encoding ---------------------------------------------------------------------------

    def encode_chunk(self, chunk: str) -> tuple[int, ...]:
        """The ids of one chunk (cached; the whole chunk as one token is the fast path)."""
        ids = self._chunk_cache.get(chunk)
        if ids is not None:
            return ids
        data = chunk.encode("utf-8")
        rank = self._ranks.get(data)
        if rank is not None:
            ids = (rank,)
        else:
            ranks = self._ranks
            ids = tuple(ranks[part] for part in merge(data, ranks))
        cache = self._chunk_cache
        if len(cache) >= CHUNK_CACHE_LIMIT:
            cache.clear()
        cache[chunk] = ids
        return ids

    def encode_bytes_chunk(self, data: bytes, max_rank: int | None = None) -> list[int]:
        """The ids of one chunk given as bytes, optionally using only merges below ``max_rank``."""
        ranks = self._ranks
        return [ranks[part] for part in merge(data, ranks, max_rank=max_rank)]

    def encode_ordinary(self, text: str, *, max_rank: int | None = None) -> list[int]:
        """Encode ignoring special tokens entirely (they are ordinary text here).

        The fast path: for line-safe patterns the text is cut into segments at line breaks that
        no chunk crosses and each segment's ids are cached; ASCII segments are chunked by the
        stdlib ``re`` twin of the pattern; each chunk's ids come from the chunk cache, the whole
        chunk as one token, or the merge loop. The ids are the same as :meth:`encode_chunk` gives
        chunk by chunk (the parity tests hold it to tiktoken's).
        """
        text = fix_surrogates(text)
        if max_rank is not None:
            out: list[int] = []
            for chunk in self._pat.findall(text):
                out.extend(self.encode_bytes_chunk(chunk.encode("utf-8"), max_rank))
            return out
        pat = self._pat
        if not pat.line_safe or len(text) < 256:
            return self._encode_text(text)
        out = []
        extend = out.extend
        cache = self._segment_cache
        for segment in pat.segments(text):
            ids = cache.get(segment)
            if ids is None:
                ids = self._encode_text(segment)
                if len(segment) <= SEGMENT_CACHE_MAX_LEN:
                    if self._segment_cache_chars > SEGMENT_CACHE_CHARS:
                        cache.clear()
                        self._segment_cache_chars = 0
                    cache[segment] = ids
                    self._segment_cache_chars += len(segment)
            extend(ids)
        return out

    def _encode_text(self, text: str) -> list[int]:
        """The ids of ``text`` (surrogates already fixed, no specials), chunk by chunk."""
        out: list[int] = []
        extend = out.extend
        append = out.append
        cache = self._chunk_cache
        ranks = self._ranks
        for chunk in self._pat.split(text):
            ids = cache.get(chunk)
            if ids is not None:
                extend(ids)
                continue
            rank = ranks.get(chunk.encode("utf-8"))
            if rank is not None:
                append(rank)
                if len(cache) >= CHUNK_CACHE_LIMIT:
                    cache.clear()
                cache[chunk] = (rank,)
            else:
                extend(self.encode_chunk(chunk))
        return out

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = (),
        disallowed_special: DisallowedSpecial = "all",
        max_rank: int | None = None,
    ) -> list[int]:
        """Encode with tiktoken's special-token semantics.

        Special tokens found in ``text`` raise :class:`DisallowedSpecialError` unless allowed
        (``allowed_special`` a set of token strings or ``"all"``) or the check is disabled
        (``disallowed_special=()``, which encodes them as ordinary text).
        """
        text = fix_surrogates(text)
        out: list[int] = []
        for start, end, special in self._segments(text, allowed_special, disallowed_special):
            if special:
                out.append(self.special_tokens[text[start:end]])
            elif end > start:
                out.extend(self.encode_ordinary(text[start:end], max_rank=max_rank))
        return out

    def pieces(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = (),
        disallowed_special: DisallowedSpecial = "all",
        max_rank: int | None = None,
    ) -> list[Piece]:
        """Encode and return each token with its bytes and offsets (see :class:`Piece`)."""
        text = fix_surrogates(text)
        out: list[Piece] = []
        byte_pos = 0
        char_pos = 0
        for start, end, special in self._segments(text, allowed_special, disallowed_special):
            if start > char_pos:
                byte_pos += len(text[char_pos:start].encode("utf-8"))
                char_pos = start
            if special:
                data = text[start:end].encode("utf-8")
                out.append(
                    Piece(self.special_tokens[text[start:end]], data, start, end, byte_pos,
                          byte_pos + len(data), special=True)
                )
                byte_pos += len(data)
                char_pos = end
                continue
            for found in self._pat.finditer(text, start, end):
                if found.start() > char_pos:
                    byte_pos += len(text[char_pos : found.start()].encode("utf-8"))
                chunk = found.group()
                if max_rank is None:
                    ids: Iterable[int] = self.encode_chunk(chunk)
                else:
                    ids = self.encode_bytes_chunk(chunk.encode("utf-8"), max_rank)
                byte_pos = self._append_chunk_pieces(out, ids, found.start(), byte_pos)
                char_pos = found.end()
        return out

    def chunk_pieces(self, chunk: str, char_start: int, byte_start: int) -> list[Piece]:
        """The pieces of one chunk placed at the given offsets (for incremental re-tokenization)."""
        out: list[Piece] = []
        self._append_chunk_pieces(out, self.encode_chunk(chunk), char_start, byte_start)
        return out

    def _append_chunk_pieces(self, out: list[Piece], ids: Iterable[int], char_start: int, byte_pos: int) -> int:
        decoder = self._decoder_map()
        chars = char_start  # characters begun before the current byte
        for token_id in ids:
            data = decoder[token_id]
            lead = is_continuation(data[0])
            begun = sum(1 for b in data if not 0x80 <= b < 0xC0)
            start = chars - 1 if lead else chars
            chars += begun
            end = chars
            partial = lead or _ends_inside(data)
            out.append(Piece(token_id, data, start, end, byte_pos, byte_pos + len(data), partial))
            byte_pos += len(data)
        return byte_pos

    # ----- decoding ---------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """Join the tokens' bytes; an id not in the vocabulary raises :class:`UnknownTokenError`."""
        decoder = self._decoder_map()
        try:
            return b"".join([decoder[i] for i in ids])
        except (KeyError, TypeError):
            for i in ids:
                if i not in decoder:
                    raise UnknownTokenError(i, self.n_vocab) from None
            raise

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Decode to text, replacing bytes that are not valid UTF-8 with U+FFFD by default."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)


def _ends_inside(data: bytes) -> bool:
    """True when ``data`` stops before the end of its last character (or is not valid UTF-8).

    >>> _ends_inside("é".encode()[:1]), _ends_inside(b"ab")
    (True, False)
    """
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False
