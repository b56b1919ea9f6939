"""SentencePiece's precompiled character map (the ``precompiled_charsmap`` of HF's
``Precompiled`` normalizer), read and applied exactly as HF does.

The blob is a little-endian ``u32`` byte size of a double-array trie, the trie's ``u32`` units,
then the replacement strings, each ended by a NUL. A key is a UTF-8 byte string; the trie's value
for it is the offset of its replacement. HF (``spm_precompiled``) looks a piece of text up by a
*common prefix search* and takes the **first** (shortest) key that is a prefix of the piece.

HF's ``Precompiled`` walks the text by extended grapheme clusters: a cluster of fewer than 6
UTF-8 bytes that has a key as a prefix is replaced whole by that key's replacement (whatever
follows the key in the cluster is dropped); otherwise each character is looked up on its own. The
alignment follows HF's ``(char, change)`` rule for each replacement, including its quirk that a
replacement by nothing folds the removal into the character before it (and, at the very start of
the text, into nothing, which shifts the alignment of everything after it: reproduced).

The ids-only :meth:`CharsMap.normalize_str` runs compiled when ``_tokscope_merge`` has it
(``pcm_normalize`` of ``merge.c``): a character with no grapheme joiner (:data:`JOINERS`) on
either side is a grapheme of its own and is looked up in C; a stretch of joined characters where
a key starts goes through the Python path (cached), which stays the tests' oracle.

>>> cm = CharsMap(build_charsmap({"ｈ": "h", "e\\u0301": "é", "\\u200b": ""}))
>>> cm.normalize_str("ｈe\\u0301y\\u200b")
'héy'
>>> t = cm.normalize(NormalizedText.identity("ｈe\\u0301y"))
>>> t.text, t.alignments()
('héy', [(0, 1), (1, 2), (3, 4)])
"""

from __future__ import annotations

import functools
import struct
from array import array
from collections.abc import Mapping
from typing import Any

import regex

from ..text.errors import TokenizerFileError
from ..text.unicode import chars, parse_ranges
from ..text.normalized import NormalizedText
from .base import NormalizerBase
from ..text.compiled import CompiledPart

# A grapheme cluster can only continue into an ASCII character after a Prepend character; the
# table is the regex module's Prepend plus the Unicode 15-17 list, so it covers both versions.
_PREPEND = r"\p{GCB=Prepend}\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u0d4e\U000110bd\U000110cd\U000111c2\U000111c3\U0001193f\U00011941\U00011a3a\U00011a84-\U00011a89\U00011d46\U00011f02"

#: Stretches of text outside which every grapheme cluster is one ASCII character or ``\r\n``:
#: runs of non-ASCII characters, with the ASCII character before them (a base for combining
#: marks; not a ``\n`` that ends a ``\r\n``) and the ASCII characters that follow a Prepend.
_SEGMENT = regex.compile(
    r"(?:(?<!\r)\n|[\x00-\x09\x0b-\x7f])?(?:[^\x00-\x7f]|(?<=[" + _PREPEND + r"])[\x00-\x09\x0b\x0c\x0e-\x7f])+"
)
#: :data:`_SEGMENT` for a text with no Prepend character (its lookbehind can never match there),
#: which the regex module scans in about half the time
_SEGMENT_NO_PREPEND = regex.compile(r"(?:(?<!\r)\n|[\x00-\x09\x0b-\x7f])?[^\x00-\x7f]+")
_PREPEND_CHAR = regex.compile("[" + _PREPEND + "]")
_GRAPHEME = regex.compile(r"\X")
#: Every character that may share a grapheme cluster with a neighbour (the "joiners"): ``\r``, the
#: Extend, ZWJ, Regional_Indicator, Prepend, SpacingMark and Hangul L/V/T characters of the ``regex``
#: module's Unicode, :data:`_PREPEND` and ``hf_tables.GRAPHEME_SPLIT``. Between two characters
#: neither of which is one, both HF and :func:`graphemes` always cut (the tests check this table
#: against the installed ``regex``), so the compiled path handles such characters one by one.
JOINERS = (
    "D 300-36F 483-489 591-5BD 5BF 5C1-5C2 5C4-5C5 5C7-5C9 600-605 610-61A 64B-65F 670 6D6-6DD "
    "6DF-6E4 6E7-6E8 6EA-6ED 70F 711 730-74A 7A6-7B0 7EB-7F3 7FD 816-819 81B-823 825-827 829-82D "
    "859-85B 890-891 897-89F 8CA-903 93A-93C 93E-94F 951-957 962-963 981-983 9BC 9BE-9C4 9C7-9C8 "
    "9CB-9CD 9D7 9E2-9E3 9FE A01-A03 A3C A3E-A42 A47-A48 A4B-A4D A51 A70-A71 A75 A81-A83 ABC "
    "ABE-AC5 AC7-AC9 ACB-ACD AE2-AE3 AFA-AFF B01-B03 B3C B3E-B44 B47-B48 B4B-B4D B53-B57 B62-B63 "
    "B82 BBE-BC2 BC6-BC8 BCA-BCD BD7 C00-C04 C3C C3E-C44 C46-C48 C4A-C4D C55-C56 C62-C63 C81-C83 "
    "CBC CBE-CC4 CC6-CC8 CCA-CCD CD5-CD6 CE2-CE3 CF3 D00-D03 D3B-D3C D3E-D44 D46-D48 D4A-D4E D57 "
    "D62-D63 D81-D83 DCA DCF-DD4 DD6 DD8-DDF DF2-DF3 E31 E33-E3A E47-E4E EB1 EB3-EBC EC8-ECE "
    "F18-F19 F35 F37 F39 F3E-F3F F71-F84 F86-F87 F8D-F97 F99-FBC FC6 102D-1037 1039-103E "
    "1056-1059 105E-1060 1071-1074 1082 1084-1086 108D 109D 1100-11FF 135D-135F 1712-1715 "
    "1732-1734 1752-1753 1772-1773 17B4-17D3 17DD 180B-180D 180F 1885-1886 18A9 1920-192B "
    "1930-193B 1A17-1A1B 1A55-1A5E 1A60 1A62 1A65-1A7C 1A7F 1AB0-1AF0 1B00-1B04 1B34-1B44 "
    "1B6B-1B73 1B80-1B82 1BA1-1BAD 1BE6-1BF3 1C24-1C37 1CD0-1CD2 1CD4-1CE8 1CED 1CF4 1CF7-1CF9 "
    "1DC0-1DFF 200C-200D 20D0-20F0 2CEF-2CF1 2D7F 2DE0-2DFF 302A-302F 3099-309A A66F-A672 "
    "A674-A67D A69E-A69F A6F0-A6F1 A802 A806 A80B A823-A827 A82C A880-A881 A8B4-A8C5 A8E0-A8F1 "
    "A8FF A926-A92D A947-A953 A960-A97C A980-A983 A9B3-A9C0 A9E5 AA29-AA36 AA43 AA4C-AA4D AA7C "
    "AAB0 AAB2-AAB4 AAB7-AAB8 AABE-AABF AAC1 AAEB-AAEF AAF5-AAF6 ABE3-ABEA ABEC-ABED D7B0-D7C6 "
    "D7CB-D7FB FB1E FE00-FE0F FE20-FE2F FF9E-FF9F 101FD 102E0 10376-1037A 10A01-10A03 "
    "10A05-10A06 10A0C-10A0F 10A38-10A3A 10A3F 10AE5-10AE6 10D24-10D27 10D69-10D6D 10EAB-10EAC "
    "10ECB-10ECF 10EF0-10EFF 10F46-10F50 10F82-10F85 11000-11002 11038-11046 11070 11073-11074 "
    "1107F-11082 110B0-110BA 110BD 110C2 110CD 11100-11102 11127-11134 11145-11146 11173 "
    "11180-11182 111B3-111C0 111C2-111C3 111C9-111CC 111CE-111CF 1122C-11237 1123E 11241 "
    "112DF-112EA 11300-11303 1133B-1133C 1133E-11344 11347-11348 1134B-1134D 11357 11362-11363 "
    "11366-1136C 11370-11374 113B8-113C0 113C2 113C5 113C7-113CA 113CC-113D2 113E1-113E2 "
    "11435-11446 1145E 114B0-114C3 115AF-115B5 115B8-115C0 115DC-115DD 11630-11640 116AB-116B7 "
    "1171D-1171F 11722-1172B 1182C-1183A 11930-11935 11937-11938 1193B-11943 119D1-119D7 "
    "119DA-119E0 119E4 11A01-11A0A 11A33-11A3E 11A47 11A51-11A5B 11A84-11A99 11B60-11B67 "
    "11C2F-11C36 11C38-11C3F 11C92-11CA7 11CA9-11CB6 11D31-11D36 11D3A 11D3C-11D3D 11D3F-11D47 "
    "11D8A-11D8E 11D90-11D91 11D93-11D97 11DF0 11EF3-11EF6 11F00-11F03 11F34-11F3A 11F3E-11F42 "
    "11F5A 13440 13447-13455 1611E-1612F 16AF0-16AF4 16B30-16B36 16D63 16D67-16D6A 16F4F "
    "16F51-16F87 16F8F-16F92 16FE4 16FF0-16FF1 1BC9D-1BC9E 1CF00-1CF2D 1CF30-1CF46 1D127-1D128 "
    "1D165-1D169 1D16D-1D172 1D17B-1D182 1D185-1D18B 1D1AA-1D1AD 1D242-1D244 1D250-1D252 "
    "1D25B-1D25C 1D25F 1D280-1D281 1DA00-1DA36 1DA3B-1DA6C 1DA75 1DA84 1DA9B-1DA9F 1DAA1-1DAAF "
    "1E000-1E006 1E008-1E018 1E01B-1E021 1E023-1E024 1E026-1E02A 1E08F 1E130-1E136 1E2AE "
    "1E2EC-1E2EF 1E4EC-1E4EF 1E5EE-1E5EF 1E6E3 1E6E6 1E6EE-1E6EF 1E6F5 1E8D0-1E8D6 1E944-1E94A "
    "1F1E6-1F1FF 1F3FB-1F3FF E0020-E007F E0100-E01EF "
)
#: how many segments' rewrites a charsmap keeps (emptied when full)
SEGMENT_CACHE = 1 << 16


compiled_part = CompiledPart("PCM_ABI")


def use_compiled(on: bool, module: Any = None) -> None:
    """Use the compiled :meth:`CharsMap.normalize_str` when installed (the default), or the
    pure-Python one (the tests' oracle); ``module`` puts in a compiled one built elsewhere.

    >>> was = compiled_charsmap()
    >>> use_compiled(False); compiled_charsmap() is None
    True
    >>> use_compiled(True); compiled_charsmap() is was
    True
    """
    compiled_part.use(on, module)


def compiled_charsmap() -> Any:
    """The compiled charsmap module in use, or None (the pure-Python path)."""
    return compiled_part.get()


@functools.cache
def joiner_ranges() -> array:
    """:data:`JOINERS` as the flat ``array('I')`` ``[first, last, first, last, ...]`` that the
    compiled path reads.

    >>> joiner_ranges()[:4].tolist()
    [13, 13, 768, 879]
    """
    out = array("I")
    for first, last in parse_ranges(JOINERS):
        out.extend((first, last))
    return out


def charsmap_from_base64(text: str) -> bytes:
    """The bytes of a ``precompiled_charsmap`` field: ``base64.b64decode(text, validate=True)``,
    decoded in C when the compiled module is installed and the text is canonical base64 (a file's
    charsmap is a few hundred KB: the standard decoder took a third of a warm load).

    >>> charsmap_from_base64("YW I=")
    Traceback (most recent call last):
    ...
    tokscope.core.text.errors.TokenizerFileError: normalizer 'Precompiled': 'precompiled_charsmap' is not base64
    >>> charsmap_from_base64("YWI=")
    b'ab'
    """
    module = compiled_charsmap()
    if module is not None:
        found = module.pcm_b64decode(text)
        if found is not None:
            return found
    import base64
    import binascii

    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise TokenizerFileError("normalizer 'Precompiled': 'precompiled_charsmap' is not base64") from None


def graphemes(text: str) -> list[str]:
    """``text`` cut into graphemes as HF's ``unicode-segmentation`` cuts it: the ``regex``
    module's ``\\X``, but for the code points its newer Unicode joins to the character before them
    and HF's does not (``hf_tables.GRAPHEME_SPLIT``), which start a grapheme of their own.

    >>> graphemes("e\u0301\U00010ef1x"), graphemes("e\u0301")
    (['e\u0301', '\U00010ef1', 'x'], ['e\u0301'])
    """
    found = _GRAPHEME.findall(text)
    split = chars("GRAPHEME_SPLIT")
    if split.isdisjoint(text):
        return found
    out = []
    for g in found:
        start = 0
        for k in range(1, len(g)):
            if g[k] in split:
                out.append(g[start:k])
                start = k
        out.append(g[start:])
    return out


class CharsMap:
    """A parsed ``precompiled_charsmap``."""

    __slots__ = ("_blob", "_n_units", "_units", "_normalized", "_lookup", "_char_cache", "_ascii_found", "_segments",
                 "_finders", "_ctable", "_regions")

    def __init__(self, blob: bytes) -> None:
        self._blob = bytes(blob)
        if len(blob) < 4:
            raise TokenizerFileError("precompiled_charsmap is too short")
        (size,) = struct.unpack_from("<I", blob, 0)
        n_units = size // 4
        if 4 + n_units * 4 > len(blob):
            raise TokenizerFileError("precompiled_charsmap: the trie runs past the end of the blob")
        # the trie's units as ints, and the ASCII characters replaced, are worked out on first
        # use (tens of thousands of ints: a load that never normalizes does not pay for them)
        self._n_units = n_units
        self._units: tuple[int, ...] | None = None
        self._ascii_found: frozenset[str] | None = None
        self._normalized = blob[4 + n_units * 4 :]
        try:
            self._normalized.decode("utf-8")
        except UnicodeDecodeError:
            raise TokenizerFileError("precompiled_charsmap: the replacement strings are not UTF-8") from None
        self._lookup = functools.lru_cache(maxsize=65536)(self._transform)
        self._char_cache: dict[str, bool] = {}
        #: each segment's rewrites (``_rewrites``: a segment's graphemes are cut from it alone,
        #: so its rewrites are the same wherever it occurs), bounded by SEGMENT_CACHE
        self._segments: dict[str, list[tuple[int, list[tuple[str, str]]]]] = {}
        #: the pattern of the ASCII characters with a replacement, by the set of them in a text
        self._finders: dict[tuple[str, ...], regex.Pattern[str]] = {}
        #: the compiled table (module, table), built on the first compiled normalize_str
        self._ctable: tuple[Any, Any] | None = None
        #: the compiled path's stretches of joined characters, normalized (bounded by SEGMENT_CACHE)
        self._regions: dict[str, str] = {}

    @property
    def _array(self) -> tuple[int, ...]:
        """The trie's ``u32`` units."""
        units = self._units
        if units is None:
            units = self._units = struct.unpack_from(f"<{self._n_units}I", self._blob, 4)
        return units

    @property
    def _ascii(self) -> frozenset[str]:
        """The ASCII characters that have a replacement of their own."""
        found = self._ascii_found
        if found is None:
            found = self._ascii_found = frozenset(chr(b) for b in range(128) if self._transform(chr(b)) is not None)
        return found

    def __reduce__(self):
        return CharsMap, (self._blob,)

    # ----- the trie ---------------------------------------------------------------------------

    def _prefix_values(self, key: bytes, first_only: bool = True) -> list[int]:
        array = self._array
        n = len(array)
        if not n:
            return []
        unit = array[0]
        pos = _offset(unit)
        out = []
        for c in key:
            if c == 0:
                break
            pos ^= c
            if pos >= n:
                return out
            unit = array[pos]
            if (unit & 0x800000FF) != c:
                return out
            pos ^= _offset(unit)
            if (unit >> 8) & 1:
                if pos >= n:
                    return out
                out.append(array[pos] & 0x7FFFFFFF)
                if first_only:
                    return out
        return out

    def _walks(self, key: bytes) -> bool:
        """True when ``key`` is a path of the trie (a prefix of some key, or a key)."""
        array = self._array
        n = len(array)
        if not n:
            return False
        pos = _offset(array[0])
        for c in key:
            if c == 0:
                return False
            pos ^= c
            if pos >= n or (array[pos] & 0x800000FF) != c:
                return False
            pos ^= _offset(array[pos])
        return True

    def longest_match(self, key: bytes) -> tuple[int, str] | None:
        """SentencePiece's own lookup (``Normalizer::NormalizePrefix``): the *longest* key that
        is a prefix of ``key``, as ``(its length in bytes, its replacement)``, or ``None``.

        >>> CharsMap(build_charsmap({"a": "x", "ab": "y"})).longest_match(b"abc")
        (2, 'y')
        """
        array = self._array
        n = len(array)
        if not n:
            return None
        pos = _offset(array[0])
        found = None
        for length, c in enumerate(key, 1):
            if c == 0:
                break
            pos ^= c
            if pos >= n:
                break
            unit = array[pos]
            if (unit & 0x800000FF) != c:
                break
            pos ^= _offset(unit)
            if (unit >> 8) & 1:
                if pos >= n:
                    break
                found = (length, array[pos] & 0x7FFFFFFF)
        if found is None:
            return None
        start = found[1]
        end = self._normalized.find(b"\0", start)
        if end < 0:
            end = len(self._normalized)
        try:
            return found[0], self._normalized[start:end].decode("utf-8")
        except UnicodeDecodeError:
            raise TokenizerFileError("precompiled_charsmap: a replacement is not whole UTF-8") from None

    def starts_key(self, c: str) -> bool:
        """True when some key starts with character ``c`` (its UTF-8 is a path of the trie).

        >>> cm = CharsMap(build_charsmap({"ab": "y"}))
        >>> cm.starts_key("a"), cm.starts_key("b")
        (True, False)
        """
        return self._walks(c.encode("utf-8", "surrogatepass"))

    def continuations(self, prefix: str) -> frozenset[str]:
        """The characters that follow ``prefix`` in some key (the trie's branches after it).

        >>> sorted(CharsMap(build_charsmap({"ab": "y", "ac": "z", "b": "x"})).continuations("a"))
        ['b', 'c']
        """
        array = self._array
        n = len(array)
        if not n:
            return frozenset()
        pos = _offset(array[0])
        for c in prefix.encode("utf-8", "surrogatepass"):
            pos ^= c
            if pos >= n or (array[pos] & 0x800000FF) != c:
                return frozenset()
            pos ^= _offset(array[pos])
        out: set[str] = set()

        def walk(node: int, seq: bytes) -> None:
            for b in range(1, 256):
                child = node ^ b
                if child < n and (array[child] & 0x800000FF) == b:
                    data = seq + bytes([b])
                    try:
                        out.add(data.decode("utf-8"))
                        continue
                    except UnicodeDecodeError:
                        pass
                    if len(data) < 4:
                        walk(child ^ _offset(array[child]), data)

        walk(pos, b"")
        return frozenset(out)

    def _transform(self, piece: str) -> str | None:
        """HF's ``Precompiled::transform``: the replacement of the shortest key that is a prefix
        of ``piece``, or ``None``."""
        values = self._prefix_values(piece.encode("utf-8", "surrogatepass"))
        if not values:
            return None
        start = values[0]
        end = self._normalized.find(b"\0", start)
        if end < 0:
            end = len(self._normalized)
        try:
            return self._normalized[start:end].decode("utf-8")
        except UnicodeDecodeError:
            raise TokenizerFileError("precompiled_charsmap: a replacement is not whole UTF-8") from None

    def transform(self, piece: str) -> str | None:
        """The replacement HF finds for ``piece`` (``None``: no key is a prefix of it)."""
        return self._lookup(piece)

    def _is_candidate(self, c: str) -> bool:
        """True when a grapheme holding ``c`` may change: ``c`` has a replacement, or a key
        starts with ``c`` (a longer sequence)."""
        got = self._char_cache.get(c)
        if got is None:
            got = self._transform(c) is not None or self._walks(c.encode("utf-8", "surrogatepass"))
            self._char_cache[c] = got
        return got

    # ----- normalizing --------------------------------------------------------------------------

    def _grapheme(self, g: str) -> list[tuple[str, str]] | None:
        """How HF rewrites grapheme ``g``: ``[(old_part, new_part), ...]`` covering ``g``, or
        ``None`` when nothing changes."""
        if len(g.encode("utf-8", "surrogatepass")) < 6:
            norm = self.transform(g)
            if norm is not None:
                return [(g, norm)]
        parts = []
        changed = False
        for c in g:
            norm = self.transform(c)
            if norm is None:
                parts.append((c, c))
            else:
                changed = True
                parts.append((c, norm))
        return parts if changed else None

    def _rewrites(self, text: str) -> list[tuple[int, list[tuple[str, str]]]]:
        """``(start, parts)`` for every grapheme of ``text`` that changes, in order."""
        if not text:
            return []
        seen = set(text)
        if not any(self._is_candidate(c) for c in seen):
            return []
        out: list[tuple[int, list[tuple[str, str]]]] = []
        segments = []
        cache = self._segments
        for m in (_SEGMENT if _PREPEND_CHAR.search(text) else _SEGMENT_NO_PREPEND).finditer(text):
            s, e = m.span()
            segments.append((s, e))
            seg = text[s:e]
            found = cache.get(seg)
            if found is None:
                found = self._segment_rewrites(seg)
                if len(cache) >= SEGMENT_CACHE:
                    cache.clear()
                cache[seg] = found
            out.extend([(s + pos, parts) for pos, parts in found])
        # outside the segments every grapheme is one ASCII character or "\r\n"
        direct = tuple(sorted(c for c in self._ascii if c in seen))
        if not direct and "\r\n" not in text:
            return out
        finder = self._finders.get(direct)
        if finder is None:
            finder = self._finders[direct] = regex.compile("|".join(["\r\n", *map(regex.escape, direct)]))
        extra = []
        k = 0
        for m in finder.finditer(text):
            s = m.start()
            while k < len(segments) and segments[k][1] <= s:
                k += 1
            if k < len(segments) and segments[k][0] <= s:
                continue  # inside a segment: done above
            parts = self._grapheme(m.group())
            if parts is not None:
                extra.append((s, parts))
        if extra:
            out = sorted(out + extra, key=lambda item: item[0])
        return out

    def _segment_rewrites(self, seg: str) -> list[tuple[int, list[tuple[str, str]]]]:
        """``(start, parts)`` of every grapheme of one segment that changes (:meth:`_rewrites`).

        >>> CharsMap(build_charsmap({"é": "e"}))._segment_rewrites(" café")
        [(4, [('é', 'e')])]
        """
        if not any(self._is_candidate(c) for c in set(seg)):
            return []
        out = []
        pos = 0
        for g in graphemes(seg):
            parts = self._grapheme(g)
            if parts is not None:
                out.append((pos, parts))
            pos += len(g)
        return out

    def normalize_str(self, text: str) -> str:
        """The characters HF's ``Precompiled`` makes of ``text``: compiled when installed (each
        character with no joiner beside it looked up in C, the stretches of joined characters
        through :meth:`_normalize_str`), else :meth:`_normalize_str`.

        >>> CharsMap(build_charsmap({"ｈ": "h", "e\u0301": "é"})).normalize_str("ｈe\u0301 ｈ")
        'hé h'
        """
        module = compiled_charsmap()
        if module is not None:
            table = self._ctable
            if table is None or table[0] is not module:
                table = self._ctable = (module, module.pcm_build(self._blob, joiner_ranges()))
            try:
                return module.pcm_normalize(table[1], text, self._regions, self._region)
            except ValueError:
                pass  # a replacement that is not whole UTF-8: the Python path names it
        return self._normalize_str(text)

    def _region(self, seg: str) -> str:
        """A stretch of joined characters normalized (for the compiled path), and remembered."""
        found = self._normalize_str(seg)
        if len(self._regions) >= SEGMENT_CACHE:
            self._regions.clear()
        self._regions[seg] = found
        return found

    def _normalize_str(self, text: str) -> str:
        """:meth:`normalize_str` in Python (the tests' oracle)."""
        rewrites = self._rewrites(text)
        if not rewrites:
            return text
        out = []
        last = 0
        for start, parts in rewrites:
            out.append(text[last:start])
            for old, new in parts:
                out.append(new)
                start += len(old)
            last = start
        out.append(text[last:])
        return "".join(out)

    def normalize(self, text: NormalizedText) -> NormalizedText:
        """``text`` normalized, with HF's alignment."""
        rewrites = self._rewrites(text.text)
        if not rewrites:
            return text
        # HF builds one (char, change) list for the whole text; here it is built only for runs
        # of adjacent rewritten graphemes ("groups"): the characters between groups are (c, 0)
        # and keep their alignment.
        edits = []
        group: list | None = None  # [start, end, p0, chars, changes]

        def close(g: list) -> bool:
            start, end, p, chars, changes = g
            sources = []
            for ch in changes:
                if ch > 0:
                    sources.append(p - 1)
                else:
                    sources.append(p)
                    p += 1 - ch
            if p != end:
                return False
            edits.append((start, end, "".join(chars), sources))
            return True

        for start, parts in rewrites:
            if group is None or group[1] != start:
                if group is not None and not close(group):
                    return self._normalize_slow(text)
                group = [start, start, start, [], []]
            for old, new in parts:
                diff = len(new) - len(old)
                changes = [0] * len(new)
                if diff > 0:
                    for k in range(len(new) - diff, len(new)):
                        changes[k] = 1
                group[3].extend(new)
                group[4].extend(changes)
                group[1] += len(old)
                if diff < 0:
                    if group[4]:
                        group[4][-1] += diff
                    elif group[0] > 0:
                        # folded into the unchanged character before the group: consumed
                        group[2] -= diff
                    else:
                        return self._normalize_slow(text)
        if group is not None and not close(group):
            return self._normalize_slow(text)
        return text.edit(edits)

    def _normalize_slow(self, text: NormalizedText) -> NormalizedText:
        """The whole text through HF's transformation list, one character at a time (only for a
        text whose first grapheme is replaced by nothing, where HF's alignment shifts)."""
        t = text.text
        rewrites = dict(self._rewrites(t))
        transformations: list[list] = []
        i = 0
        while i < len(t):
            parts = rewrites.get(i)
            if parts is None:
                transformations.append([t[i], 0])
                i += 1
                continue
            for old, new in parts:
                diff = len(new) - len(old)
                items = [[c, 0] for c in new]
                if diff > 0:
                    for item in items[len(items) - diff :]:
                        item[1] = 1
                transformations.extend(items)
                if diff < 0 and transformations:
                    transformations[-1][1] += diff
                i += len(old)
        return text.transform([(c, ch) for c, ch in transformations], 0)


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


def build_charsmap(rules: Mapping[str, str]) -> bytes:
    """A ``precompiled_charsmap`` blob for ``rules`` (key -> replacement), laid out as
    SentencePiece lays it out: for tests and examples.

    >>> CharsMap(build_charsmap({"a": "b"})).transform("a")
    'b'
    """
    normalized = bytearray()
    values: dict[bytes, int] = {}
    for key, value in sorted(rules.items()):
        values[key.encode("utf-8")] = len(normalized)
        normalized += value.encode("utf-8") + b"\0"
    array = _build_double_array(values)
    trie = struct.pack(f"<{len(array)}I", *array)
    return struct.pack("<I", len(trie)) + trie + bytes(normalized)


def _build_double_array(values: dict[bytes, int]) -> list[int]:
    """A double array (darts-clone's unit layout) holding ``values``: each node's children sit at
    ``base ^ label``; a node with a value has a leaf child at ``base ^ 0``."""
    # the trie of the keys, as nested dicts; a value is stored under the label 0
    root: dict = {}
    for key, value in values.items():
        node = root
        for b in key:
            node = node.setdefault(b, {})
        node[0] = value
    array: list[int] = [0] * 256
    used: set[int] = {0}

    def unit_offset(offset: int) -> int:
        # offsets must fit the unit's 22 bits (no extension bit needed for small tries)
        assert offset < (1 << 21)
        return offset << 10

    def place(node: dict, pos: int) -> None:
        labels = sorted(node)
        base = 256
        while True:
            if all((base ^ lab) not in used for lab in labels) and base not in used_bases:
                break
            base += 1
        used_bases.add(base)
        need = max(base ^ lab for lab in labels) + 1
        if need > len(array):
            array.extend([0] * (need - len(array) + 256))
        offset = pos ^ base
        array[pos] |= unit_offset(offset)
        for lab in labels:
            child = base ^ lab
            used.add(child)
            if lab == 0:
                array[child] = node[0] & 0x7FFFFFFF | (1 << 31)
            else:
                array[child] = lab
                if 0 in node[lab]:
                    array[child] |= 1 << 8
        for lab in labels:
            if lab:
                place(node[lab], base ^ lab)

    used_bases: set[int] = set()
    place(root, 0)
    return array


class Precompiled(NormalizerBase):
    """SentencePiece's precompiled character map (see :mod:`.precompiled`)."""

    def __init__(self, charsmap: bytes) -> None:
        self._map = CharsMap(charsmap)

    def normalize(self, text: NormalizedText) -> NormalizedText:
        return self._map.normalize(text)

    def normalize_str(self, text: str) -> str:
        return self._map.normalize_str(text)

    def safe_start(self, text: str, pos: int) -> bool:
        if pos <= 0 or pos >= len(text):
            return True
        # a charsmap rewrites whole graphemes: start only where one starts (and not between
        # the \r and \n of a line break)
        return len(graphemes(text[pos - 1 : pos + 1])) == 2 and text[pos - 1 : pos + 1] != "\r\n"
