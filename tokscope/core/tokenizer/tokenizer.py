"""The tokenizer: its stages put together (see :mod:`tokscope.core.tokenizer.stages`).

Every part of tokscope uses this one class. ``Tokenizer(name, ranks, pattern, special_tokens)`` is
byte-level BPE as tiktoken runs it, and reproduces tiktoken token for token (its special-token
checks and its handling of lone surrogates included); :meth:`Tokenizer.from_stages` puts any
normalizer, pre-tokenizer, model, added tokens, template and decoder together (a Hugging Face
``tokenizer.json`` becomes one of these). On top of encoding it gives what an explorer needs: pieces
with character and byte offsets into the *original* text, chunks, the added-token split, and
:meth:`Tokenizer.scan`, which places a stretch of text's pieces into plain lists for the
incremental document.

Byte-level BPE from ranks keeps its own fast paths (ASCII engine, segment and chunk caches, pieces
placed by counting UTF-8 lead bytes); other pipelines go stage by stage: ids alone on strings
(added tokens cut, ``normalize_str``, ``split_str``, a per-chunk ids cache), pieces through the
aligned stages, and a :attr:`Tokenizer.restartable` pipeline's scan a window of text at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..models.ranks import RanksBPE, merge
from ..text.errors import CancelledError, DisallowedSpecialError, NotForThisKindError, UnknownTokenError
from ..added_tokens.specials import AllowedSpecial, DisallowedSpecial, SpecialTokens
from .tiktoken_api import TiktokenAPI
from ..text.types import Chunk, Parents, Piece, Token, is_continuation
from ..patterns.tiktoken_syntax import ChunkPattern
from ..pre_tokenizers.pattern_split import PatternSplit
from .rows import ADDED, PARTIAL, SPECIAL, UNKNOWN, PieceSink, Rows
from ..processors.offsets import TrimStep, model_span

if TYPE_CHECKING:
    from ..processors.padding import Padding
    from ..processors.truncation import Truncation
    from ..text.normalized import NormalizedText
    from .stages import Decoder, Model, Normalizer, PostProcessor, PreTokenizer

__all__ = ["AllowedSpecial", "DisallowedSpecial", "Tokenizer", "fix_surrogates", "shares_characters"]

#: SentencePiece's piece types (``ModelProto.SentencePiece.Type``, which llama.cpp's token types
#: follow), by number
PIECE_TYPES = {1: "normal", 2: "unknown", 3: "control", 4: "user-defined", 5: "unused", 6: "byte"}

#: Characters of text kept in the segment cache (whole lines' ids, for line-safe patterns) before
#: it is emptied; segments longer than SEGMENT_CACHE_MAX_LEN are never cached.
SEGMENT_CACHE_CHARS = 8_000_000
SEGMENT_CACHE_MAX_LEN = 200_000
#: Chunks (of pipelines other than byte-level BPE from ranks) whose ids are kept, and the longest
#: chunk kept; the cache is emptied when full.
IDS_CACHE_LIMIT = 200_000
IDS_CACHE_MAX_LEN = 256
#: Characters a restartable pipeline normalizes and cuts at a time when it scans (see
#: :meth:`Tokenizer.scan`).
SCAN_WINDOW = 4096

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
    except AttributeError:
        if not isinstance(text, str):  # as tiktoken says it
            raise TypeError(f"{type(text).__name__!r} object is not an instance of 'str'") from None
        raise
    return text


class Tokenizer(TiktokenAPI):
    """A tokenizer made of stages (see the module docstring).

    ``Tokenizer(name, ranks, pattern, special_tokens)`` is byte-level BPE from ``ranks``
    (``bytes -> rank``, the rank being the id), cut into chunks by ``pattern`` (tiktoken's syntax).
    The object is safe to share between threads (its caches only grow by whole entries) and can be
    pickled or deep-copied (caches and locks are rebuilt).
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
        self._setup(name, RanksBPE(ranks), PatternSplit(pattern), None, SpecialTokens(special_tokens), None, None,
                    n_vocab)

    @classmethod
    def from_stages(
        cls,
        name: str,
        *,
        model: Model,
        normalizer: Normalizer | None = None,
        pre_tokenizer: PreTokenizer | None = None,
        added_tokens: Any = None,
        post_processor: PostProcessor | None = None,
        decoder: Decoder | None = None,
        n_vocab: int | None = None,
        truncation: Truncation | None = None,
        padding: Padding | None = None,
    ) -> Tokenizer:
        """A tokenizer from its stages. ``added_tokens`` is a :class:`SpecialTokens` (tiktoken's
        kind), an ``AddedVocabulary`` (Hugging Face's kind) or None. ``truncation`` and
        ``padding`` (a ``tokenizer.json``'s) apply with the template (``add_special_tokens``)."""
        self = cls.__new__(cls)
        self._setup(name, model, pre_tokenizer, normalizer, added_tokens if added_tokens is not None else SpecialTokens(),
                    post_processor, decoder, n_vocab, truncation, padding)
        return self

    def _setup(self, name: str, model: Any, pre_tokenizer: Any, normalizer: Any, added: Any, post_processor: Any,
               decoder: Any, n_vocab: int | None, truncation: Truncation | None = None,
               padding: Padding | None = None) -> None:
        self.name = name
        #: the file's truncation and padding (applied with the template, as Hugging Face's encode does)
        self.truncation = truncation
        self.padding = padding
        self.model = model
        self.pre_tokenizer = pre_tokenizer
        self.normalizer = normalizer
        self.added = added
        self.post_processor = post_processor
        self.decoder = decoder
        #: the tiktoken-style pattern of byte-level BPE (None for pipelines cut otherwise)
        self.pattern: str | None = pre_tokenizer.pattern if isinstance(pre_tokenizer, PatternSplit) else None
        #: the fast paths of byte-level BPE from ranks apply
        self._bytes_bpe = (isinstance(model, RanksBPE) and isinstance(pre_tokenizer, PatternSplit)
                           and normalizer is None and isinstance(added, SpecialTokens))
        self._pat: ChunkPattern | None = pre_tokenizer.compiled if isinstance(pre_tokenizer, PatternSplit) else None
        self.special_tokens: dict[str, int] = dict(_special_tokens_of(added))
        # where two names share an id (o200k_harmony's 200018) the first one names it, as in tiktoken
        self._special_by_id = {v: k for k, v in reversed(self.special_tokens.items())}
        self._added_by_id: dict[int, str] = dict(_added_tokens_of(added))
        self._added_by_content: dict[str, int] = {v: k for k, v in self._added_by_id.items()}
        self._decoder: dict[int, bytes] | None = None
        self._segment_cache: dict[str, list[int]] = {}
        self._segment_cache_chars = 0
        self._parents: dict[int, Parents | None] = {}
        self._shapes: dict[int, tuple[int, bool, bool]] = {}
        self._derived: dict[str, Any] = {}
        self._lock = threading.RLock()
        self._ids_cache: dict[str, tuple[int, ...]] = {}
        self._form_cache: tuple | None = None
        self._piece_flags: dict[int, int] = {}
        #: the ids-only path works on strings (no alignment): every stage has a string form, and
        #: where a pre-tokenizer looks at where a split starts, nothing rewrote the text before it
        self._string_path = (
            (pre_tokenizer is None or hasattr(pre_tokenizer, "split_str"))
            and (normalizer is None or hasattr(normalizer, "normalize_str"))
            and (isinstance(added, SpecialTokens) or hasattr(added, "split_str"))
            and (normalizer is None or not getattr(pre_tokenizer, "needs_start", False))
        )
        ids = [*self._added_by_id]
        if isinstance(model, RanksBPE):
            max_model = max(model.ranks.values(), default=-1)
        else:
            max_model = model.vocab_size - 1
        self.max_token_value = max([max_model, *ids]) if ids else max_model
        self.n_vocab = n_vocab if n_vocab is not None else self.max_token_value + 1

    # ----- pickling ---------------------------------------------------------------------------

    def __getstate__(self) -> dict:
        return {
            "name": self.name, "model": self.model, "pre_tokenizer": self.pre_tokenizer,
            "normalizer": self.normalizer, "added": self.added, "post_processor": self.post_processor,
            "decoder": self.decoder, "n_vocab": self.n_vocab, "truncation": self.truncation, "padding": self.padding,
        }

    def __setstate__(self, state: dict) -> None:
        self._setup(state["name"], state["model"], state["pre_tokenizer"], state["normalizer"], state["added"],
                    state["post_processor"], state["decoder"], state["n_vocab"], state.get("truncation"),
                    state.get("padding"))

    def __repr__(self) -> str:
        return f"<Tokenizer {self.name!r} {self.kind} n_vocab={self.n_vocab}>"

    def derived(self, key: str, build: Callable[[], Any]) -> Any:
        """A fact derived from this tokenizer, built once by ``build()`` and kept with it (a vocabulary
        index, a token table ...). Every module that needs one uses this, so there is one cache per
        tokenizer, rebuilt after pickling. Concurrent first calls build it once.

        >>> tok = Tokenizer("t", {bytes([b]): b for b in range(256)}, r"\\S+|\\s+")
        >>> tok.derived("answer", lambda: 42), tok.derived("answer", lambda: 0)
        (42, 42)
        """
        value = self._derived.get(key, _MISSING)
        if value is _MISSING:
            with self._lock:
                value = self._derived.get(key, _MISSING)
                if value is _MISSING:
                    value = self._derived[key] = build()
        return value

    # ----- what kind of tokenizer -------------------------------------------------------------

    @property
    def kind(self) -> str:
        """The model's kind as users name it: ``byte-level BPE``, ``byte-fallback BPE``, ``BPE``,
        ``WordPiece``, ``Unigram``, ``WordLevel`` ..."""
        model = self.model
        label = getattr(model, "label", None)
        if label:
            return label
        if model.kind == "bpe":
            if isinstance(model, RanksBPE) or _has_byte_level(self.decoder) or _has_byte_level(self.pre_tokenizer):
                return "byte-level BPE"
            return "byte-fallback BPE" if getattr(model, "byte_fallback", False) else "BPE"
        return {"wordpiece": "WordPiece", "unigram": "Unigram", "wordlevel": "WordLevel"}.get(model.kind, model.kind)

    @property
    def restartable(self) -> bool:
        """True when re-tokenizing from any chunk start gives the chunks and pieces a whole pass
        gives from there (every stage is local): the document then redoes only an edit's chunks."""
        if self._bytes_bpe:
            return True
        return (getattr(self.normalizer, "local", True) and getattr(self.pre_tokenizer, "local", True)
                and self.pre_tokenizer is not None)

    def restart_ok(self, text: str, pos: int) -> bool:
        """Whether a scan of ``text`` may start again at ``pos`` (a chunk start) for a
        :attr:`restartable` tokenizer: the normalizer does not join the character at ``pos`` with
        the one before (NFC composing a letter with the mark after it, a charsmap rewriting a
        whole grapheme). Always True without a normalizer.

        >>> Tokenizer("t", {bytes([b]): b for b in range(256)}, r"\\S+|\\s+").restart_ok("ab", 1)
        True
        """
        check = getattr(self.normalizer, "safe_start", None)
        return check is None or check(text, pos)

    # ----- vocabulary -------------------------------------------------------------------------

    @property
    def ranks(self) -> Mapping[bytes, int]:
        """The mergeable ranks of byte-level BPE (empty for other kinds; read-only by convention)."""
        model = self.model
        return model.ranks if isinstance(model, RanksBPE) else {}

    @property
    def n_merges(self) -> int:
        """How many mergeable tokens are not single bytes."""
        return sum(1 for b in self.ranks if len(b) > 1)

    @property
    def special_tokens_set(self) -> frozenset[str]:
        return frozenset(self.special_tokens)

    @property
    def added_tokens(self) -> dict[str, int]:
        """Every added token (special or not) as ``content -> id``."""
        return dict(self._added_by_content)

    def _decoder_map(self) -> dict[int, bytes]:
        if self._decoder is None:
            with self._lock:
                if self._decoder is None:
                    model = self.model
                    if isinstance(model, RanksBPE):
                        # from the ranks, not a copy of the model's own decoder: that one is
                        # built only if the model is asked for offsets, and a 200k vocabulary's
                        # dict costs about 10 MB
                        decoder = {rank: data for data, rank in model.ranks.items()}
                    else:
                        # worked out per token on first use: a 262k vocabulary's bytes take most
                        # of a second, and a text needs only the tokens it has
                        decoder = _TokenBytes(self._compute_token_bytes)
                    for token_id, text in self._added_by_id.items():
                        decoder[token_id] = text.encode("utf-8")
                    self._decoder = decoder
        return self._decoder

    def _compute_token_bytes(self, token_id: int) -> bytes:
        token = self.model.id_to_token(token_id) if isinstance(token_id, int) else None
        if token is None:
            raise KeyError(token_id)
        return self._model_token_bytes(token)

    def _model_token_bytes(self, token: str) -> bytes:
        own = getattr(self.decoder, "token_bytes", None)  # a decoder may say it itself (see pipeline.Decoder)
        if own is not None:
            return own(token)
        from ..decoders import token_bytes

        return token_bytes(token, self.decoder)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes one token stands for; :class:`UnknownTokenError` names an id not in the vocabulary.

        For byte-level BPE these are the token's bytes; for other kinds, what the token adds to a
        decoded text (``▁the`` is `` the``, ``##ing`` is ``ing``, ``<0xE2>`` is that byte).
        """
        try:
            return self._decoder_map()[token_id]
        except (KeyError, TypeError):
            raise UnknownTokenError(token_id, self.n_vocab) from None

    @property
    def byte_lengths(self) -> Mapping[int, int] | Sequence[int]:
        """``id -> len(token_bytes(id))`` for the whole vocabulary, indexed by id (built once, then
        shared: a compact array for byte-level BPE from ranks; for other kinds each length is worked
        out on first use)."""
        if not isinstance(self.model, RanksBPE):
            return self.derived("byte_lengths", lambda: _TokenLengths(self.token_bytes))
        return self.derived("byte_lengths", lambda: _dense_lengths(self._decoder_map()))

    def token_str(self, token_id: int) -> str:
        """The token as its vocabulary writes it (``Ġthe``, ``▁the``, ``##ing``, ``<0xE2>``; for
        byte-level BPE from ranks, its bytes decoded with U+FFFD for partial characters)."""
        added = self._added_by_id.get(token_id)
        if added is not None:
            return added
        token = self.model.id_to_token(token_id)
        if token is None:
            raise UnknownTokenError(token_id, self.n_vocab)
        return token

    def has_token(self, token_id: int) -> bool:
        return token_id in self._decoder_map()

    def token_to_id(self, token: str) -> int | None:
        """The id of a token by its spelling in the vocabulary (``token_str``'s inverse): an added
        token's content, a model token (``Ġthe``, ``▁the``, ``##ing``, ``<0xE2>``), or for
        byte-level BPE from ranks the token whose bytes are ``token`` in UTF-8. ``None`` when
        there is none.

        >>> Tokenizer("t", {b"a": 0, b"b": 1, b"ab": 2}, r"\\w+", {"<x>": 3}).token_to_id("ab")
        2
        """
        found = self._added_by_content.get(token)
        if found is not None:
            return found
        model = self.model
        if isinstance(model, RanksBPE):
            return model.ranks.get(token.encode("utf-8", "surrogatepass"))
        return model.token_to_id(token)

    def piece_type(self, token_id: int) -> str | None:
        """The type a SentencePiece table gives token ``token_id`` (a ``.model`` file's, or a GGUF
        ``llama``/``t5`` vocabulary's): ``normal``, ``unknown``, ``control``, ``user-defined``,
        ``unused`` or ``byte``; ``None`` for other kinds and for ids outside the table.

        >>> Tokenizer("t", {bytes([b]): b for b in range(256)}, r"\\S+|\\s+").piece_type(97) is None
        True
        """
        table = getattr(self.model, "table", None)
        types = getattr(table, "types", None)
        if not isinstance(types, (bytes, bytearray)) or not isinstance(token_id, int) or not 0 <= token_id < len(types):
            return None
        return PIECE_TYPES.get(types[token_id])

    @property
    def unknown_id(self) -> int | None:
        """The id of the model's unknown token (``[UNK]``, ``<unk>``), or ``None``."""
        return _unknown_id(self.model)

    def token(self, token_id: int) -> Token:
        """The vocabulary entry for ``token_id``."""
        data = self.token_bytes(token_id)
        if token_id in self._added_by_id:
            return Token(token_id, data, None, special=token_id in self._special_by_id)
        return Token(token_id, data, token_id)

    def rank_of(self, data: bytes) -> int | None:
        """The rank of ``data`` when it is a mergeable token of byte-level BPE, else ``None``."""
        return self.ranks.get(data)

    def is_special(self, token_id: int) -> bool:
        return token_id in self._special_by_id

    def is_added(self, token_id: int) -> bool:
        """True for an added token (special or not): it comes from the text as it is, not the model."""
        return token_id in self._added_by_id

    def parents(self, token_id: int) -> Parents | None:
        """The two tokens whose merge made ``token_id``.

        Byte-level BPE recovers them from the ranks on demand: BPE on the token's own bytes allowing
        only lower ranks leaves exactly two parts. A model with a merge list gives its merge.
        Returns ``None`` for single bytes, added tokens, models without merges, and (rarely, in
        foreign vocabularies) tokens that no single merge of lower-ranked tokens can build.
        """
        cached = self._parents.get(token_id, False)
        if cached is not False:
            return cached  # type: ignore[return-value]
        result: Parents | None = None
        model = self.model
        if token_id not in self._added_by_id:
            if isinstance(model, RanksBPE):
                data = self.token_bytes(token_id)
                if len(data) > 1:
                    parts = merge(data, model.ranks, max_rank=model.ranks[data])
                    if len(parts) == 2:
                        result = Parents(model.ranks[parts[0]], model.ranks[parts[1]])
            else:
                found = getattr(model, "parents", None)
                pair = found(token_id) if found is not None else None
                if pair is not None:
                    result = pair if isinstance(pair, Parents) else Parents(*pair)
        self._parents[token_id] = result
        return result

    def token_shape(self, token_id: int) -> tuple[int, bool, bool]:
        """``(characters begun, starts with a continuation byte, partial)`` of a byte-level token,
        as placing its piece needs (remembered)."""
        shape = self._shapes.get(token_id)
        if shape is None:
            data = self.token_bytes(token_id)
            begun = sum(1 for b in data if not 0x80 <= b < 0xC0)
            lead = is_continuation(data[0]) if data else False
            shape = (begun, lead, lead or _ends_inside(data))
            self._shapes[token_id] = shape
        return shape

    # ----- special and added tokens ------------------------------------------------------------

    def resolve_special(self, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial) -> tuple[frozenset[str], frozenset[str]]:
        """tiktoken's rules for the special-token arguments: ``(allowed, disallowed)`` string sets
        (a string in ``allowed_special`` that is not a special token here is ignored)."""
        names = self.special_tokens_set
        allowed = names if allowed_special == "all" else frozenset(allowed_special) & names
        disallowed = names - allowed if disallowed_special == "all" else frozenset(disallowed_special)
        return allowed, disallowed

    def check_special(self, text: str, disallowed: Iterable[str]) -> None:
        """Raise :class:`DisallowedSpecialError` if ``text`` contains one of ``disallowed``."""
        disallowed = frozenset(disallowed)
        if not disallowed:
            return
        added = self.added
        if isinstance(added, SpecialTokens):
            added.check(text, disallowed)
            return
        found = added.find_special(text, self.normalizer, disallowed & self.special_tokens_set)
        if found is None and disallowed - self.special_tokens_set:
            # strings that are not special tokens here are looked for as they are (tiktoken does)
            found = SpecialTokens({t: 0 for t in disallowed - self.special_tokens_set}).regex(
                disallowed - self.special_tokens_set).search(text)  # type: ignore[union-attr]
            found = found.group() if found else None
        if found is not None:
            raise DisallowedSpecialError(found)

    def segments(
        self, text: str, allowed_special: AllowedSpecial = (), disallowed_special: DisallowedSpecial = "all",
    ) -> list[tuple[int, int, int | None]]:
        """``text`` cut at added tokens: ``(start, end, id)`` for an allowed special token or a
        non-special added token, ``(start, end, None)`` for the ordinary text between them.
        Raises :class:`DisallowedSpecialError` as :meth:`encode` does."""
        text = fix_surrogates(text)
        allowed, disallowed = self.resolve_special(allowed_special, disallowed_special)
        self.check_special(text, disallowed)
        return self._spans(text, allowed)

    def _spans(self, text: str, allowed: frozenset[str]) -> list[tuple[int, int, int | None]]:
        added = self.added
        if not self._added_by_id:
            return [(0, len(text), None)]
        if isinstance(added, SpecialTokens):
            return added.spans(text, allowed)
        # the added tokens where they are in the original text, and the text between them (a
        # normalized part's own span may not reach the end of its text: NFC aligns a composed
        # character to the first of the characters it replaced)
        out: list[tuple[int, int, int | None]] = []
        last = 0
        for part, token_id in added.split(text, self.normalizer, allowed):
            if token_id is None:
                continue
            start, end = max(part.original_start, last), max(part.original_end, last)
            if start > last:
                out.append((last, start, None))
            out.append((start, end, token_id))
            last = end
        if last < len(text) or not out:
            out.append((last, len(text), None))
        return out

    def _parts(self, text: str, allowed: frozenset[str]) -> Iterator[tuple[int, int, int | None, NormalizedText | None]]:
        """Like :meth:`_spans`, with each ordinary part normalized (None when nothing normalizes)."""
        added = self.added
        if isinstance(added, SpecialTokens):
            normalizer = self.normalizer
            for start, end, token_id in added.spans(text, allowed):
                if token_id is not None or normalizer is None:
                    yield start, end, token_id, None
                else:
                    yield start, end, None, normalizer.normalize(_identity(text[start:end], start))
            return
        for part, token_id in added.split(text, self.normalizer, allowed):
            yield part.original_start, part.original_end, token_id, (None if token_id is not None else part)

    def added_could_occur(self, text: str, start: int, end: int) -> bool:
        """Whether an added token may overlap ``text[start:end]`` (an edited span)."""
        added = self.added
        if isinstance(added, SpecialTokens):
            return added.could_occur(text, start, end)
        contents = self._added_by_id.values()
        if not contents:
            return False
        longest = max(map(len, contents))
        lo, hi = max(0, start - 4 * longest), min(len(text), end + 4 * longest)
        window = text[lo:hi]
        if any(c in window for c in contents):
            return True
        # a normalized token is matched in the normalized text: look there too
        keys = [added.strings[t.id] for t in added.tokens if t.normalized and t.content]
        if not keys or self.normalizer is None:
            return False
        normalized = self.normalizer.normalize_str(window)
        return any(k in normalized for k in keys)

    # ----- chunks -----------------------------------------------------------------------------

    def chunks(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = (),
        disallowed_special: DisallowedSpecial = (),
    ) -> list[Chunk]:
        """The pre-tokenization chunks of ``text`` with character offsets into it.

        By default special tokens are treated as ordinary text (no check); pass the same special
        arguments as :meth:`encode` to split them out as special chunks. A chunk whose text the
        normalizer or pre-tokenizer rewrote carries that form (``Chunk.form``).
        """
        text = fix_surrogates(text)
        allowed, disallowed = self.resolve_special(allowed_special, disallowed_special)
        self.check_special(text, disallowed)
        out: list[Chunk] = []
        for start, end, token_id, part in self._parts(text, allowed):
            if token_id is not None:
                out.append(Chunk(text[start:end], start, end, special=True))
            elif self._pat is not None and part is None:
                for found in self._pat.finditer(text, start, end):
                    out.append(Chunk(found.group(), found.start(), found.end()))
            else:
                for chunk in self._pre_tokenize(text, start, end, part):
                    s, e = chunk.original_start, chunk.original_end
                    original = text[s:e]
                    out.append(Chunk(original, s, e, form=None if chunk.text == original else chunk.text))
        return out

    def chunk_form(self, text: str, start: int, end: int, *, allowed_special: AllowedSpecial = ()) -> str | None:
        """The text the model saw for the ordinary chunk ``text[start:end]`` (a chunk of :meth:`chunks`
        or of a document of ``text``, with the same ``allowed_special``): its normalized,
        pre-tokenized form (``ĠHello``, ``▁hello``), or ``None`` when that is the original text.

        For a :attr:`restartable` tokenizer the chunk alone is enough; otherwise the part of the
        text around it, between added tokens, is normalized and cut again (the last part is
        remembered, so moving along one text is cheap).

        >>> Tokenizer("t", {bytes([b]): b for b in range(256)}, r"\\S+|\\s+").chunk_form("a b", 2, 3) is None
        True
        """
        if self._bytes_bpe or end <= start:
            return None
        original = text[start:end]
        if self.restartable:
            # a little of what follows too: a chunk's own span may stop short of characters a
            # normalizer folded into it (NFC aligns é to the e of e + U+0301)
            stop = min(len(text), end + 64)
            if self._added_by_id and stop > end:  # but not into an added token
                window = text[end:stop]
                stop = end + next((s for s, _, t in self._spans(window, self.special_tokens_set) if t is not None),
                                  len(window))
            chunks = self._pre_tokenize(text, start, stop, self._normalize_part(text, start, stop))
            form = chunks[0].text if chunks and chunks[0].original_start == start else None
            return None if form is None or form == original else form
        allowed, _ = self.resolve_special(allowed_special, ())
        cached = self._form_cache
        if cached is None or cached[0] is not text or cached[1] != allowed or not cached[2] <= start < cached[3]:
            for s, e, token_id, part in self._parts(fix_surrogates(text), allowed):
                if token_id is None and s <= start < e:
                    forms = {(c.original_start, c.original_end): c.text for c in self._pre_tokenize(text, s, e, part)}
                    cached = self._form_cache = (text, allowed, s, e, forms)
                    break
            else:
                return None
        form = cached[4].get((start, end))
        return None if form is None or form == original else form

    def _normalize_part(self, text: str, start: int, end: int) -> NormalizedText | None:
        normalizer = self.normalizer
        return None if normalizer is None else normalizer.normalize(_identity(text[start:end], start))

    def _pre_tokenize(self, text: str, start: int, end: int, part: NormalizedText | None) -> list[NormalizedText]:
        if part is None:
            part = _identity(text[start:end], start)
        pre = self.pre_tokenizer
        splits = pre.pre_tokenize([part]) if pre is not None else [part]
        return [s for s in splits if len(s.text)]

    # ----- encoding ---------------------------------------------------------------------------

    def encode_chunk(self, chunk: str) -> tuple[int, ...]:
        """The ids of one chunk (cached; for byte-level BPE the whole chunk as one token is the
        fast path)."""
        model = self.model
        if isinstance(model, RanksBPE):
            return model.encode_chunk(chunk)
        return tuple(t[0] for t in model.tokenize(chunk))

    def _no_cutoff(self) -> NotForThisKindError:
        return NotForThisKindError("a rank cut-off", self.name, self.kind, "byte-level BPE from ranks")

    def _ranks_model(self) -> RanksBPE:
        model = self.model
        if not isinstance(model, RanksBPE):
            raise NotForThisKindError("this", self.name, self.kind, "byte-level BPE from ranks")
        return model

    def encode_ordinary(self, text: str, *, max_rank: int | None = None) -> list[int]:
        """Encode ignoring special tokens entirely (they are ordinary text here; non-special added
        tokens still match, as Hugging Face's tokenizers match them).

        The fast path of byte-level BPE: for line-safe patterns the text is cut into segments at
        line breaks that no chunk crosses and each segment's ids are cached; ASCII segments are
        chunked by the stdlib ``re`` twin of the pattern; each chunk's ids come from the chunk
        cache, the whole chunk as one token, or the merge loop. The ids are the same as
        :meth:`encode_chunk` gives chunk by chunk (the parity tests hold it to tiktoken's).
        """
        text = fix_surrogates(text)
        if not self._bytes_bpe:
            if max_rank is not None:
                raise self._no_cutoff()
            return self._encode_generic(text, frozenset())
        pat = self._pat
        assert pat is not None
        if max_rank is not None:
            model = self._ranks_model()
            out: list[int] = []
            for chunk in pat.findall(text):
                out.extend(model.encode_bytes(chunk.encode("utf-8"), max_rank))
            return out
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
        return self.model.encode_chunks(self._pat.split(text))  # type: ignore[union-attr]

    def _encode_generic(self, text: str, allowed: frozenset[str]) -> list[int]:
        """The ids of ``text`` through the stages, as strings where the stages allow it (no
        alignment is needed for ids): added tokens cut out, each part normalized, cut into chunk
        strings, and each chunk's ids taken from the cache or the model. The ids are always those
        of :meth:`_encode_aligned` (the tests hold the two paths to each other)."""
        if not self._string_path:
            return self._encode_aligned(text, allowed)
        return self._string_encoder(allowed)(text)

    def _string_encoder(self, allowed: frozenset[str]) -> Callable[[str], list[int]]:
        """:meth:`_encode_generic` on the string path as a function of the text alone: the stages,
        the cache and the model's ids function looked up once, for a batch of texts."""
        added = self.added
        normalizer = self.normalizer
        pre = self.pre_tokenizer
        split_pre = pre.split_str if pre is not None else None
        cache = self._ids_cache
        get = cache.get
        chunk_ids = self._chunk_ids_function()
        if isinstance(added, SpecialTokens):
            spans = added.spans
            normalize = normalizer.normalize_str if normalizer is not None else None

            def parts_of(text: str) -> list[tuple[str, int | None, int]]:
                parts = []
                for start, end, token_id in spans(text, allowed):
                    part = text[start:end] if token_id is not None or normalize is None else normalize(text[start:end])
                    parts.append((part, token_id, start))
                return parts
        else:
            split_added = added.split_str

            def parts_of(text: str) -> list[tuple[str, int | None, int]]:
                return split_added(text, normalizer, allowed)

        def encode(text: str) -> list[int]:
            out: list[int] = []
            extend = out.extend
            for part, token_id, offset in parts_of(text):
                if token_id is not None:
                    out.append(token_id)
                    continue
                if not part:
                    continue
                for chunk in (split_pre(part, offset == 0) if split_pre is not None else (part,)):
                    ids = get(chunk)
                    if ids is None:
                        ids = chunk_ids(chunk)
                        if len(chunk) <= IDS_CACHE_MAX_LEN:
                            if len(cache) >= IDS_CACHE_LIMIT:
                                cache.clear()
                            cache[chunk] = ids
                    extend(ids)
            return out

        return encode

    def _chunk_ids_function(self) -> Callable[[str], Sequence[int]]:
        """The model's ids of one chunk, with no offsets where the model can skip them
        (``encode_ids`` or ``tokenize_ids``; byte-level BPE from ranks: its ``encode_chunk``)."""
        model = self.model
        found = getattr(model, "encode_ids", None) or getattr(model, "tokenize_ids", None)
        if found is not None:
            return found
        if isinstance(model, RanksBPE):
            return model.encode_chunk
        tokenize = model.tokenize
        return lambda chunk: [t[0] for t in tokenize(chunk)]

    def _encode_aligned(self, text: str, allowed: frozenset[str]) -> list[int]:
        """The ids through the aligned stages (what pieces are made of); the reference of the
        string path."""
        out: list[int] = []
        tokenize = self.model.tokenize
        for start, end, token_id, part in self._parts(text, allowed):
            if token_id is not None:
                out.append(token_id)
                continue
            if end <= start and part is None:
                continue
            for chunk in self._pre_tokenize(text, start, end, part):
                out.extend(t[0] for t in tokenize(chunk.text))
        return out

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = (),
        disallowed_special: DisallowedSpecial = "all",
        max_rank: int | None = None,
        add_special_tokens: bool = False,
    ) -> list[int]:
        """Encode with tiktoken's special-token semantics.

        Special tokens found in ``text`` raise :class:`DisallowedSpecialError` unless allowed
        (``allowed_special`` a set of token strings or ``"all"``) or the check is disabled
        (``disallowed_special=()``, which encodes them as ordinary text). ``add_special_tokens``
        applies the model's template (BOS/EOS, ``[CLS]``/``[SEP]``), as Hugging Face's tokenizers
        do by default; without it the ids are those of the text alone.
        """
        text = fix_surrogates(text)
        allowed, disallowed = self.resolve_special(allowed_special, disallowed_special)
        self.check_special(text, disallowed)
        if self._bytes_bpe:
            out: list[int] = []
            for start, end, token_id in self.added.spans(text, allowed):
                if token_id is not None:
                    out.append(token_id)
                elif end > start:
                    out.extend(self.encode_ordinary(text[start:end], max_rank=max_rank))
        else:
            if max_rank is not None:
                raise self._no_cutoff()
            out = self._encode_generic(text, allowed)
        if add_special_tokens:
            out = [out[s] if s is not None else t for s, t, _ in self.arrange(len(out))]  # type: ignore[misc]
        return out

    def encode_many(
        self,
        texts: Iterable[str],
        *,
        allowed_special: AllowedSpecial = (),
        disallowed_special: DisallowedSpecial = "all",
        add_special_tokens: bool = False,
    ) -> list[list[int]]:
        """:meth:`encode` of each text in turn, with what does not depend on the text (the special
        tokens' sets, the stages and the model's ids function) looked up once: the loop of
        ``encode_batch`` in this process, where a batch of short texts spent a third of its time
        on that per-call work.

        >>> tok = Tokenizer("t", {bytes([b]): b for b in range(256)} | {b"ab": 256}, r"\\S+|\\s+")
        >>> tok.encode_many(["ab a", ""]) == [tok.encode("ab a"), tok.encode("")]
        True
        """
        allowed, disallowed = self.resolve_special(allowed_special, disallowed_special)
        if self._bytes_bpe or add_special_tokens or not self._string_path:
            return [self.encode(text, allowed_special=allowed, disallowed_special=disallowed,
                                add_special_tokens=add_special_tokens) for text in texts]
        encode = self._string_encoder(allowed)
        check = self.check_special
        out = []
        for text in texts:
            text = fix_surrogates(text)
            if disallowed:
                check(text, disallowed)
            out.append(encode(text))
        return out

    def arrange(self, n: int, *, pad_to: int | None = None) -> list[tuple[int | None, int | None, str]]:
        """Where a text's ``n`` tokens go once the file's truncation, the template and the file's
        padding apply, as Hugging Face's ``encode`` (``add_special_tokens=True``) places them:
        one ``(source, id, kind)`` row per token of the result. A ``text`` row takes the text's
        token ``source`` (``id`` None); a ``template`` or ``padding`` row adds ``id``. ``pad_to``
        is the length a batch pads to (by default the file's padding of this one encoding).
        Raises :class:`TokscopeError` for a truncation Hugging Face refuses.

        >>> Tokenizer("t", {bytes([b]): b for b in range(256)}, r"\\S+|\\s+").arrange(2)
        [(0, None, 'text'), (1, None, 'text')]
        """
        lo, hi = 0, n
        post = self.post_processor
        if self.truncation is not None:
            lo, hi = self.truncation.keep(n, post.added_tokens(False) if post is not None else 0)
        if post is None:
            rows: list[tuple[int | None, int | None, str]] = [(lo + k, None, "text") for k in range(hi - lo)]
        else:
            rows = [(lo + s, None, "text") if s is not None else (None, t, "template")
                    for t, s in post.process(range(hi - lo))]
        padding = self.padding
        if padding is not None:
            target = padding.target([len(rows)]) if pad_to is None else pad_to
            before, after = padding.pads(len(rows), target)
            pad = (None, padding.pad_id, "padding")
            rows = [pad] * before + rows + [pad] * after
        return rows

    @property
    def trim_steps(self) -> tuple[TrimStep, ...]:
        """How the post-processor trims the offsets of a text's tokens (empty for most
        tokenizers; see :mod:`tokscope.core.processors.offsets`)."""
        post = self.post_processor
        return post.trim_steps() if post is not None else ()

    def model_offsets(self, text: str, pieces: Sequence[Piece], first: int = 0, *,
                      add_special_tokens: bool = False) -> list[tuple[int, int]]:
        """The character offsets the model reports for ``pieces`` of ``text`` (the text's tokens
        from its ``first``-th on), as Hugging Face's ``tokenizers`` reports them: the pieces' own
        spans, with the spaces a ``trim_offsets`` post-processor trims taken off (see
        :attr:`trim_steps`; ``add_special_tokens`` as for :meth:`encode`, since a Sequence's
        later processor may see the template's tokens before the text's). The spaces counted are
        those of the token as the library holds it:
        the vocabulary's spelling (``Ġworld``), and for an added token the text it matched (the
        space an ``lstrip`` token took in included).

        >>> tok = Tokenizer("t", {bytes([b]): b for b in range(256)}, r"\\S+|\\s+")
        >>> tok.model_offsets("a b", tok.pieces("a b"))
        [(0, 1), (1, 2), (2, 3)]
        """
        post = self.post_processor
        steps = post.trim_steps(add_special_tokens) if post is not None else ()
        if not steps:
            return [(p.start, p.end) for p in pieces]
        token_str = self.token_str
        added = self._added_by_id
        return [model_span(text[p.start:p.end] if p.id in added else token_str(p.id), (p.start, p.end), first + k, steps)
                for k, p in enumerate(pieces)]

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = (),
        disallowed_special: DisallowedSpecial = "all",
        add_special_tokens: bool = False,
    ) -> tuple[list[int], list[tuple[int, int]]]:
        """The ids and the model's character offsets, as Hugging Face's ``encode`` gives
        ``ids`` and ``offsets`` (trimmed under ``trim_offsets``; ``(0, 0)`` for template and
        padding tokens; ``add_special_tokens`` applies the file's truncation, template and padding).

        >>> Tokenizer("t", {bytes([b]): b for b in range(256)}, r"\\S+|\\s+").encode_with_offsets("hi")
        ([104, 105], [(0, 1), (1, 2)])
        """
        text = fix_surrogates(text)
        pieces = self.pieces(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        if not add_special_tokens:
            return [p.id for p in pieces], self.model_offsets(text, pieces)
        rows = self.arrange(len(pieces))
        # trimmed as Hugging Face trims: after truncation, so the first kept token is the first
        spans = self.model_offsets(text, [pieces[s] for s, _, _ in rows if s is not None], add_special_tokens=True)
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        k = 0
        for source, token_id, _ in rows:
            if source is None:
                ids.append(token_id)  # type: ignore[arg-type]
                offsets.append((0, 0))
            else:
                ids.append(pieces[source].id)
                offsets.append(spans[k])
                k += 1
        return ids, offsets

    def template(self, ids: Sequence[int] = (0,)) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The ids the template puts before and after a single sequence: ``(prefix, suffix)``
        (without ``ids``, those of a one-token sequence: an empty one would give the template no
        place to split).

        >>> Tokenizer("t", {bytes([b]): b for b in range(256)}, r"\\S+|\\s+").template([1, 2])
        ((), ())
        """
        post = self.post_processor
        if post is None:
            return (), ()
        rows = post.process(list(ids), None)
        sources = [s for _, s in rows]
        first = next((k for k, s in enumerate(sources) if s is not None), len(rows))
        last = max((k for k, s in enumerate(sources) if s is not None), default=first - 1)
        return tuple(i for i, _ in rows[:first]), tuple(i for i, _ in rows[last + 1:])

    # ----- pieces -----------------------------------------------------------------------------

    def pieces(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = (),
        disallowed_special: DisallowedSpecial = "all",
        max_rank: int | None = None,
    ) -> list[Piece]:
        """Encode and return each token with its bytes and offsets into ``text`` (see :class:`Piece`)."""
        text = fix_surrogates(text)
        allowed, disallowed = self.resolve_special(allowed_special, disallowed_special)
        self.check_special(text, disallowed)
        if not self._bytes_bpe:
            if max_rank is not None:
                raise self._no_cutoff()
            sink = Rows()
            self.scan_text(sink, text, allowed_special=allowed)
            return self.place_pieces(text, sink.ids, sink.starts, sink.ends, sink.flags)
        out: list[Piece] = []
        byte_pos = 0
        char_pos = 0
        model = self._ranks_model()
        pat = self._pat
        assert pat is not None
        for start, end, token_id in self.added.spans(text, allowed):
            if start > char_pos:
                byte_pos += len(text[char_pos:start].encode("utf-8"))
                char_pos = start
            if token_id is not None:
                data = text[start:end].encode("utf-8")
                out.append(Piece(token_id, data, start, end, byte_pos, byte_pos + len(data), special=True))
                byte_pos += len(data)
                char_pos = end
                continue
            for found in pat.finditer(text, start, end):
                if found.start() > char_pos:
                    byte_pos += len(text[char_pos : found.start()].encode("utf-8"))
                chunk = found.group()
                if max_rank is None:
                    ids: Iterable[int] = model.encode_chunk(chunk)
                else:
                    ids = model.encode_bytes(chunk.encode("utf-8"), max_rank)
                byte_pos = self._append_chunk_pieces(out, ids, found.start(), byte_pos)
                char_pos = found.end()
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

    def place_pieces(self, text: str, ids: Sequence[int], starts: Sequence[int], ends: Sequence[int],
                     flags: Sequence[int], *, base_char: int = 0, base_byte: int = 0) -> list[Piece]:
        """Rows as :meth:`scan` gives them turned into :class:`Piece` objects with byte offsets
        into ``text``. ``base_byte`` is the byte offset of character ``base_char``, where the first
        row starts; the first row must not overlap a piece before it (a piece that continues a
        character begun by the previous one overlaps it).

        When pieces tile the text's bytes (:attr:`pieces_tile_bytes`) their offsets follow from
        their lengths; otherwise a piece covers the bytes of the characters it spans, pieces that
        are parts of a character's bytes (byte fallback's ``<0xE2>``) divide its bytes in order,
        and pieces of whole characters that share a character of the text (the ``v`` and ``ii``
        NFKC makes of ``ⅷ``; see :func:`shares_characters`) each cover that character's bytes.

        A piece's bytes are what its token adds to a decoded text (``token_bytes``) without the
        word-start space a decoder puts before it (WordPiece's, a ``▁``'s) where the text has
        no space at the piece's place: BERT's ``Token`` at ``[0:5]`` is ``token``, not ``" token"``,
        and the ``i`` of ``Token ization`` at ``[6:7]`` is ``i`` (the space before it is the text's,
        between the pieces); a token that is only that space (a lone ``▁``) keeps it. Decoding is
        not affected: it goes by the ids.
        """
        out: list[Piece] = []
        token_bytes = self.token_bytes
        tile = self.pieces_tile_bytes
        cursor_char, cursor_byte = base_char, base_byte  # a known (character, byte) pair

        def byte_of(c: int) -> int:
            nonlocal cursor_char, cursor_byte
            if c >= cursor_char:
                cursor_byte += len(text[cursor_char:c].encode("utf-8", "surrogatepass"))
            else:
                cursor_byte -= len(text[c:cursor_char].encode("utf-8", "surrogatepass"))
            cursor_char = c
            return cursor_byte

        prev_end = base_char
        pos = base_byte  # where the previous piece's bytes ended
        for k in range(len(ids)):
            token_id, s, e, f = ids[k], starts[k], ends[k], flags[k]
            data = token_bytes(token_id)
            if not tile and data[:1] == b" " and not f & (SPECIAL | ADDED):
                data = _own_spaces(data, text, s, e)
            if s >= prev_end:  # not a continuation of the previous piece's character
                pos = byte_of(s)
            if tile:
                b0, b1 = pos, pos + len(data)
            elif f & PARTIAL and not _whole_utf8(data):
                b0 = pos
                b1 = max(b0, min(b0 + len(data), byte_of(e)))
            elif f & PARTIAL:  # whole characters of its own, sharing the text's: all of them
                b0 = byte_of(s)
                b1 = max(b0, byte_of(e))
            else:
                b0, b1 = pos, max(pos, byte_of(e))
            pos = b1
            prev_end = max(prev_end, e)
            out.append(Piece(token_id, data, s, e, b0, b1, bool(f & PARTIAL), bool(f & SPECIAL)))
        return out

    @property
    def pieces_tile_bytes(self) -> bool:
        """True when the pieces' bytes, joined, are always the text's UTF-8 (byte-level BPE with
        no normalizer); then a piece's byte offsets follow from its tokens' lengths alone."""
        return self._bytes_bpe

    # ----- scanning for the incremental document ---------------------------------------------

    def scan(
        self,
        sink: PieceSink,
        text: str,
        pos: int = 0,
        endpos: int | None = None,
        *,
        sync: Callable[[int], bool] | None = None,
        cancel: threading.Event | None = None,
        limit: int | None = None,
    ) -> tuple[int, bool]:
        """Append the chunks and pieces of ordinary text ``text[pos:endpos]`` to ``sink``.

        ``pos`` must be where a chunk starts (0, the end of an added token, or a chunk start of an
        earlier scan). Stops at ``endpos``, at the first chunk end past ``limit``, or when
        ``sync(end)`` says the chunks line up with earlier ones again; raises
        :class:`CancelledError` soon after ``cancel`` is set. Offsets are absolute characters
        of ``text``. Returns where it stopped and whether ``sync`` stopped it.
        """
        end = len(text) if endpos is None else endpos
        if not self._bytes_bpe:
            return self._scan_parts(sink, text, pos, end, None, sync, cancel, limit)
        shape = self._shapes
        token_shape = self.token_shape
        model = self.model
        cache = model.chunk_cache
        encode_chunk = model.encode_chunk
        ids, starts, ends, flags = sink.ids, sink.starts, sink.ends, sink.flags
        cstarts, cends = sink.chunk_starts, sink.chunk_ends
        n = 0
        stop = pos
        for found in self._pat.finditer(text, pos, end):  # type: ignore[union-attr]
            s, stop = found.span()
            cstarts.append(s)
            cends.append(stop)
            chunk = found.group()
            chunk_ids = cache.get(chunk) or encode_chunk(chunk)
            if len(chunk_ids) == 1:
                ids.append(chunk_ids[0])
                starts.append(s)
                ends.append(stop)
                flags.append(0)
            else:
                chars = s
                for token_id in chunk_ids:
                    sh = shape.get(token_id) or token_shape(token_id)
                    starts.append(chars - 1 if sh[1] else chars)
                    chars += sh[0]
                    ids.append(token_id)
                    ends.append(chars)
                    flags.append(PARTIAL if sh[2] else 0)
            n += 1
            if cancel is not None and not n & 1023 and cancel.is_set():
                raise CancelledError("cancelled")
            if sync is not None and sync(stop):
                return stop, True
            if limit is not None and stop >= limit:
                return stop, False
        return stop, False

    def scan_text(self, sink: PieceSink, text: str, *, allowed_special: AllowedSpecial = (),
                  cancel: threading.Event | None = None) -> None:
        """Append every chunk and piece of ``text`` to ``sink``, added tokens included (special ones
        when allowed; there is no check: other special-token text is ordinary text).

        Unlike :meth:`scan` over each of :meth:`segments`, this normalizes each part between added
        tokens once, as a whole, so it is exact for pipelines that are not :attr:`restartable`."""
        text = fix_surrogates(text)
        allowed, _ = self.resolve_special(allowed_special, ())
        for start, end, token_id, part in self._parts(text, allowed):
            if token_id is not None:
                flag = SPECIAL if token_id in self._special_by_id else ADDED
                sink.chunk_starts.append(start)
                sink.chunk_ends.append(end)
                sink.ids.append(token_id)
                sink.starts.append(start)
                sink.ends.append(end)
                sink.flags.append(flag)
            elif self._bytes_bpe:
                self.scan(sink, text, start, end, cancel=cancel)
            else:
                self._scan_parts(sink, text, start, end, part, None, cancel, None)

    def _scan_parts(self, sink: PieceSink, text: str, pos: int, end: int, part: NormalizedText | None,
                    sync: Callable[[int], bool] | None, cancel: threading.Event | None,
                    limit: int | None) -> tuple[int, bool]:
        """:meth:`scan` stage by stage: normalize ``text[pos:end]`` (unless ``part`` is given),
        pre-tokenize, and place each chunk's tokens on the original text. A :attr:`restartable`
        tokenizer works through the text a window at a time (so a scan that ``sync`` stops early
        costs only the few windows it read)."""
        if part is None and self.restartable:
            chunks: Iterable[NormalizedText] = self._windowed_chunks(text, pos, end)
        else:
            if part is None and self.normalizer is not None:
                part = self.normalizer.normalize(_identity(text[pos:end], pos))
            chunks = self._pre_tokenize(text, pos, end, part)
        tokenize = self.model.tokenize
        flag_cache = self._piece_flags
        ids, starts, ends, flags = sink.ids, sink.starts, sink.ends, sink.flags
        cstarts, cends = sink.chunk_starts, sink.chunk_ends
        stop = pos
        n = 0
        found = iter(chunks)
        following = next(found, None)
        while following is not None:
            chunk, following = following, next(found, None)
            c0, stop = chunk.original_start, chunk.original_end
            cstarts.append(c0)
            cends.append(stop)
            row0 = len(ids)
            tokens = tokenize(chunk.text)
            if chunk.is_identity:  # offsets into the chunk are offsets into the original text
                for token_id, s, e in tokens:
                    ids.append(token_id)
                    starts.append(c0 + s)
                    ends.append(c0 + e)
                    f = flag_cache.get(token_id)
                    flags.append(f if f is not None else self._piece_flag(token_id))
            else:
                span = chunk.original_span
                for token_id, s, e in tokens:
                    o0, o1 = span(s, e)
                    ids.append(token_id)
                    starts.append(o0)
                    ends.append(max(o0, o1))
                    f = flag_cache.get(token_id)
                    flags.append(f if f is not None else self._piece_flag(token_id))
                # pieces that share a character of the original text are parts of it
                for k in range(row0 + 1, len(ids)):
                    if starts[k] < ends[k - 1] and starts[k] == starts[k - 1]:
                        flags[k - 1] |= PARTIAL
                        flags[k] |= PARTIAL
            n += 1
            if cancel is not None and not n & 255 and cancel.is_set():
                raise CancelledError("cancelled")
            # stop only where the next chunk starts at or after this one's end (a normalizer can
            # make two chunks of one character: NFKC's U+1D15E is two code points)
            if following is not None and following.original_start < stop:
                continue
            if sync is not None and sync(stop):
                return stop, True
            if limit is not None and stop >= limit and self.restart_ok(text, stop):
                return stop, False
        return stop, False

    def _piece_flag(self, token_id: int) -> int:
        """A token's own flags wherever it occurs: ``PARTIAL`` for bytes that are not whole
        characters, ``UNKNOWN`` for the model's unknown token (remembered)."""
        data = self._decoder_map().get(token_id, b"")
        partial = bool(data) and (is_continuation(data[0]) or _ends_inside(data))
        flag = (PARTIAL if partial else 0) | (UNKNOWN if token_id == _unknown_id(self.model) else 0)
        self._piece_flags[token_id] = flag
        return flag

    def _windowed_chunks(self, text: str, pos: int, end: int) -> Iterator[NormalizedText]:
        """The chunks of ``text[pos:end]`` (``pos`` a chunk start) for a :attr:`restartable`
        tokenizer, normalized and cut a window at a time: all but the last two chunks of a window
        are kept (a chunk may look a little past its end, and the window's end cuts the last one)
        and the next window starts where the first of those two starts, a chunk start. A window
        that gives too few chunks is doubled."""
        window = SCAN_WINDOW
        normalizer = self.normalizer
        while pos < end:
            stop = min(end, pos + window)
            part = None if normalizer is None else normalizer.normalize(_identity(text[pos:stop], pos))
            chunks = self._pre_tokenize(text, pos, stop, part)
            if stop >= end:
                yield from chunks
                return
            # start the next window at the first of the last two chunks, or an earlier chunk
            # where the normalizer may start again
            k = len(chunks) - 2
            while k > 0 and (chunks[k - 1].original_end > chunks[k].original_start
                             or not self.restart_ok(text, chunks[k].original_start)):
                k -= 1
            if k <= 0 or chunks[k].original_start <= pos:
                window *= 2
                continue
            yield from chunks[:k]
            pos = chunks[k].original_start
            window = SCAN_WINDOW

    # ----- decoding ---------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """Join the tokens' bytes; an id not in the vocabulary raises :class:`UnknownTokenError`.

        For tokenizers with a decoder (Hugging Face's), the decoder's text as UTF-8."""
        ids = list(ids)
        if not isinstance(self.model, RanksBPE) and (self.decoder is not None or not isinstance(self.added, SpecialTokens)):
            return self.decode(ids).encode("utf-8", "surrogatepass")
        decoder = self._decoder_map()
        try:
            return b"".join([decoder[i] for i in ids])
        except (KeyError, TypeError):
            for i in ids:
                if i not in decoder:
                    raise UnknownTokenError(i, self.n_vocab) from None
            raise

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Decode to text, replacing bytes that are not valid UTF-8 with U+FFFD by default.

        A tokenizer read from a ``tokenizer.json`` decodes as Hugging Face's
        ``decode(ids, skip_special_tokens=False)``: every token, added ones included, as the
        library writes it (a normalized added token in its normalized form) goes through the
        file's decoder, or is joined with spaces when the file has none."""
        if not isinstance(self.added, SpecialTokens):
            tokens = [self._hf_token(i) for i in ids]
            decoder = self.decoder
            if decoder is None:
                return " ".join(tokens)
            return "".join(decoder.decode_chain(tokens))
        decoder = self.decoder
        if decoder is None or isinstance(self.model, RanksBPE):
            return self.decode_bytes(ids).decode("utf-8", errors=errors)
        ids = list(ids)
        tokens: list[str] = []
        out: list[str] = []
        for token_id in ids:
            if token_id in self._added_by_id:
                if tokens:
                    out.append("".join(decoder.decode_chain(tokens)))
                    tokens = []
                out.append(self._added_by_id[token_id])
            else:
                tokens.append(self.token_str(token_id))
        if tokens:
            out.append("".join(decoder.decode_chain(tokens)))
        return "".join(out)

    def _hf_token(self, token_id: int) -> str:
        """The token as Hugging Face's ``id_to_token`` writes it (an added token first)."""
        found = self.added.strings.get(token_id)
        if found is None:
            found = self.model.id_to_token(token_id) if isinstance(token_id, int) else None
            if found is None:
                raise UnknownTokenError(token_id, self.n_vocab)
        return found


_MISSING = object()


class _TokenBytes(dict):
    """``id -> bytes``, each worked out on first use by ``compute`` (which raises ``KeyError``
    for an id that is not in the vocabulary); reads like a plain dict of the vocabulary."""

    __slots__ = ("_compute",)

    def __init__(self, compute: Callable[[int], bytes]) -> None:
        super().__init__()
        self._compute = compute

    def __missing__(self, key: int) -> bytes:
        value = self._compute(key)
        self[key] = value
        return value

    def get(self, key: int, default: Any = None) -> Any:  # type: ignore[override]
        try:
            return self[key]
        except (KeyError, TypeError):
            return default

    def __contains__(self, key: object) -> bool:
        return self.get(key, _MISSING) is not _MISSING  # type: ignore[arg-type]


class _TokenLengths(dict):
    """``id -> len(token_bytes(id))``, on first use (see :class:`_TokenBytes`)."""

    __slots__ = ("_token_bytes",)

    def __init__(self, token_bytes: Callable[[int], bytes]) -> None:
        super().__init__()
        self._token_bytes = token_bytes

    def __missing__(self, key: int) -> int:
        value = self[key] = len(self._token_bytes(key))
        return value


def _has_byte_level(stage: Any) -> bool:
    """Whether a pre-tokenizer or decoder is (or holds) Hugging Face's ByteLevel."""
    if stage is None:
        return False
    if type(stage).__name__ == "ByteLevel":
        return True
    return any(_has_byte_level(s) for s in getattr(stage, "pretokenizers", getattr(stage, "decoders", ())))


def _identity(text: str, offset: int) -> NormalizedText:
    from ..text.normalized import NormalizedText

    return NormalizedText.identity(text, offset)


def _dense_lengths(decoder: Mapping[int, bytes]) -> Sequence[int]:
    """``id -> byte length`` as an ``array('H')`` indexed by id (0 for an id not in the vocabulary):
    two bytes a token, where a dict of 200k ints costs about 10 MB.

    >>> list(_dense_lengths({0: b"a", 2: b"bcd"}))
    [1, 0, 3]
    """
    from array import array

    out = array("H", bytes(2 * (max(decoder, default=-1) + 1)))
    for token_id, data in decoder.items():
        out[token_id] = len(data)
    return out


def _unknown_id(model: Any) -> int | None:
    unk = getattr(model, "unk_id", None)
    if unk is not None:
        return unk
    token = getattr(model, "unk_token", None)
    return model.token_to_id(token) if token else None


def _special_tokens_of(added: Any) -> Mapping[str, int]:
    if isinstance(added, SpecialTokens):
        return added.tokens
    return {t.content: t.id for t in added.tokens if t.special}


def _added_tokens_of(added: Any) -> Iterator[tuple[int, str]]:
    if isinstance(added, SpecialTokens):
        yield from added.by_id.items()
        return
    for token in added.tokens:
        yield token.id, token.content


def _own_spaces(data: bytes, text: str, start: int, end: int) -> bytes:
    """``data`` (a token's bytes, starting with a space) without the leading spaces the text does
    not have at the start of the piece's span ``text[start:end]``. A token that is nothing but that
    spacing (a lone ``▁`` before a character it shares, the dummy prefix) keeps it: the space is
    all it stands for, and dropping it would leave nothing.

    >>> _own_spaces(b" token", "Token ization", 0, 5), _own_spaces(b" world", "a world", 1, 7)
    (b'token', b' world')

    >>> _own_spaces(b"  x", "a  x", 2, 4), _own_spaces(b" ", "ab", 0, 0)
    (b' x', b' ')
    """
    spaces = len(data) - len(data.lstrip(b" "))
    if spaces == len(data):
        return data
    have = 0
    while have < spaces and start + have < end and text[start + have].isspace():
        have += 1
    return data[spaces - have:]


def shares_characters(piece: Piece) -> bool:
    """True for a piece of whole characters of its own that covers characters of the text
    together with its neighbours (``v`` of ``ⅷ`` under NFKC): its text is the model's, not the
    text's (a piece that is part of a character's bytes is ``partial`` without sharing).

    >>> shares_characters(Piece(1, b"v", 0, 1, 0, 3, partial=True)), shares_characters(Piece(1, b"\\xe2", 0, 1, 0, 1, True))
    (True, False)
    """
    return piece.partial and _whole_utf8(piece.bytes)


def _whole_utf8(data: bytes) -> bool:
    return not _ends_inside(data) and not (data and is_continuation(data[0]))


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
