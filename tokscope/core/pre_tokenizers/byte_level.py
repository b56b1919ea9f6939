"""ByteLevel: GPT-2's pattern and each chunk's bytes as stand-in characters, as Hugging Face's
``pre_tokenizers/byte_level.rs``."""

from __future__ import annotations


from ..text.byte_alphabet import BYTE_TO_CHAR
from ..text.normalized import NormalizedText
from ..normalizers.byte_level import BYTE_STANDINS, to_byte_level
from .base import PreTokenizerBase, isolated_strs, split_each, split_text
from .compiled_split import BYTE_LEVEL_PATTERN, compile_onig_split

#: The pattern of HF's ``ByteLevel`` pre-tokenizer (``use_regex``), an Oniguruma pattern (cut by
#: the compiled scanner when it is installed)
GPT2_PATTERN = BYTE_LEVEL_PATTERN


_ASCII_STANDINS = str.maketrans({b: BYTE_TO_CHAR[b] for b in range(128)})


def byte_level_str(text: str) -> str:
    """``text`` in GPT-2's byte-level stand-ins (each UTF-8 byte one character).

    >>> byte_level_str(" é")
    'ĠÃ©'
    """
    if text.isascii():
        return text.translate(_ASCII_STANDINS)
    return text.encode("utf-8", "surrogatepass").decode("latin-1").translate(BYTE_STANDINS)


class ByteLevel(PreTokenizerBase):
    """GPT-2's pre-tokenizer: a space before each split that lacks one (``add_prefix_space``),
    GPT-2's pattern (``use_regex``), then every chunk in byte-level stand-ins.

    ``trim_offsets`` only changes the offsets HF's ByteLevel post-processor reports; it is kept
    here for that stage and changes nothing in the chunks.
    """

    def __init__(self, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True) -> None:
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex
        self._pattern = compile_onig_split(GPT2_PATTERN) if use_regex else None
        self.local = use_regex and not add_prefix_space
        self.splits = use_regex

    def _one(self, split: NormalizedText) -> list[NormalizedText]:
        if self.add_prefix_space and not split.text.startswith(" "):
            split = split.prepend(" ")
        if self._pattern is None:
            chunks = [split]
        else:
            chunks = split_text(split, self._pattern.spans, "isolated")
        out = []
        for c in chunks:
            t = c.text
            if t.isascii():
                out.append(c.with_text(t.translate(_ASCII_STANDINS)))
            else:
                out.append(to_byte_level(c))
        return out

    def split_str(self, text: str, first: bool = True) -> list[str]:
        if not text:
            return []
        if self.add_prefix_space and not text.startswith(" "):
            text = " " + text
        pieces = [text] if self._pattern is None else isolated_strs(self._pattern, text)
        return [byte_level_str(p) for p in pieces]

    def split_many(self, pieces: list[str]) -> list[str]:
        """:meth:`split_str` of each piece in one list (a Sequence's later stage): without the
        pattern and the prefix space, each piece's stand-ins, with no call per piece.

        >>> ByteLevel(add_prefix_space=False, use_regex=False).split_many(["a b", "", "é"])
        ['aĠb', 'Ã©']
        """
        if self._pattern is None and not self.add_prefix_space:
            return [byte_level_str(p) for p in pieces if p]
        return split_each(self, pieces)
