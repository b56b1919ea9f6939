"""The stages of a tokenizer, each behind a small protocol.

A text goes through, in order:

1. **added tokens** (:mod:`tokscope.core.added_tokens`): special tokens such as ``<|endoftext|>``
   or ``[CLS]`` and other added tokens are cut out of the text first; they never reach the stages
   below.
2. **normalizer** (:mod:`tokscope.core.normalizers`): NFC, lowercasing, replacing spaces by ``▁``
   ... The result is a :class:`~tokscope.core.text.normalized.NormalizedText`, which keeps every
   normalized character aligned to the span of the original text it came from, so pieces can
   always be placed on the text the user typed.
3. **pre-tokenizer** (:mod:`tokscope.core.pre_tokenizers`; ``pattern_split`` for the tiktoken
   patterns): cuts the normalized text into *chunks*; a model never merges across one.
4. **model** (:mod:`tokscope.core.models`): byte-level BPE from ranks (``ranks``, the OpenAI
   encodings and tokenizers trained here), BPE from a merge list (``bpe``), WordPiece, Unigram,
   WordLevel. It turns one chunk into ids.
5. **post-processor** (:mod:`tokscope.core.processors`): a template that adds ``<s>``/``[CLS]``...
   when the caller asks for the model's special tokens.

A **decoder** (:mod:`tokscope.core.decoders`) turns tokens back into text.

Beyond each protocol's required members, a stage may offer optional ones the tokenizer uses when
present (a stage without them still works, on the slower or coarser path):

* ``Normalizer.safe_start(text, pos)``: whether the text may be normalized afresh from ``pos``
  (no composition or reordering across it); where a restartable document starts again.
* ``PreTokenizer.split_str(text, first)`` (the chunks as strings, for the ids-only path that keeps
  no alignment) and ``needs_start`` (True when the stage reads where a split starts in the
  original text, as Metaspace's ``first`` does).
* A model's explorer facts: ``parents``, ``merges_into``, ``merge_rank``, ``replay`` and
  ``merge_ids`` (a merge list), ``explain`` (WordPiece), ``best``/``nbest``/``score`` (Unigram),
  ``unk_token``/``unk_id``, ``continuing_subword_prefix``/``end_of_word_suffix``/``byte_fallback``.

:class:`~tokscope.core.tokenizer.tokenizer.Tokenizer` composes the stages; the explorer, compare,
stats and the command line work through its public API. The one place that reads a stage directly
is :mod:`tokscope.core.explain` (why a chunk became its tokens, merge trees, a token's facts): it
asks the model for the facts above, and the screens and commands that explain go through it, not
to a stage. A new kind of stage is a module in its stage's folder with a class that satisfies the
protocol below (and, for ``tokenizer.json`` files, an entry in that folder's ``from_json``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..text.normalized import NormalizedText


@runtime_checkable
class Normalizer(Protocol):
    """Rewrites text before it is cut into chunks, keeping the alignment to the original."""

    #: True when normalizing a piece of text cut at a chunk boundary gives the same characters as
    #: that piece of the whole text normalized (NFC, Lowercase, Replace of a plain string ...);
    #: False for stages that look at the ends of the text (Strip, Prepend) or across long spans.
    #: The incremental document re-tokenizes only around an edit when every stage is local.
    local: bool

    def normalize(self, text: NormalizedText) -> NormalizedText:
        """The normalized form of ``text`` (a new object; ``text`` is not changed)."""
        ...

    def normalize_str(self, text: str) -> str:
        """The normalized characters only (no alignment): the fast path for counts."""
        ...


@runtime_checkable
class PreTokenizer(Protocol):
    """Cuts normalized text into chunks (and may rewrite them, as ByteLevel and Metaspace do)."""

    #: As :attr:`Normalizer.local`: True when the chunks of a piece of text that starts at a
    #: chunk boundary are the chunks of the whole text from there on.
    local: bool

    def pre_tokenize(self, splits: list[NormalizedText]) -> list[NormalizedText]:
        """Each split cut into chunks, in order; empty chunks are dropped."""
        ...


@runtime_checkable
class Model(Protocol):
    """Turns one chunk into tokens."""

    #: ``"bpe"``, ``"wordpiece"``, ``"unigram"``, ``"wordlevel"`` ...
    kind: str

    def tokenize(self, text: str) -> list[tuple[int, int, int]]:
        """The tokens of one chunk: ``(id, start, end)`` with ``start``/``end`` character offsets
        into ``text`` (a byte-fallback token covers the character its byte belongs to)."""
        ...

    def token_to_id(self, token: str) -> int | None: ...

    def id_to_token(self, token_id: int) -> str | None: ...

    def get_vocab(self) -> dict[str, int]: ...

    @property
    def vocab_size(self) -> int: ...


@runtime_checkable
class PostProcessor(Protocol):
    """The template that adds a model's special tokens around an encoded sequence."""

    def process(self, ids: Sequence[int], pair: Sequence[int] | None = None) -> list[tuple[int, int | None]]:
        """The ids with the template applied: ``(id, source)`` where ``source`` is the index of the
        input token (``pair``'s tokens are numbered after ``ids``'s), or ``None`` for a token the
        template added."""
        ...

    def added_tokens(self, is_pair: bool) -> int:
        """How many tokens the template adds."""
        ...


@runtime_checkable
class Decoder(Protocol):
    """Turns token strings back into text, as the Hugging Face decoders do."""

    def decode_chain(self, tokens: list[str]) -> list[str]:
        """The tokens after this decoder (joined by the caller with no separator)."""
        ...

    # optional: ``token_bytes(token: str) -> bytes``, the bytes one token stands for in the middle of
    # a decoded text (the token view shows them); without it :func:`.decoders.token_bytes` works
    # them out from the Hugging Face decoders the decoder is made of
