"""Parts to ids: template special tokens become their ids, all other text is encoded as ordinary
text between them; every token gets character offsets, a kind and an owner.

The ids equal encoding the whole rendered text with the template's special tokens allowed
(harmony instead encodes piece by piece, as its renderer does). Content is never read as special
tokens, even when it spells one. A token that the tokenizer merged across a template/content
boundary is marked ``m`` (both)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Sequence
from typing import Any

from .parts import CONTENT_PART, PREFIX, SPECIAL_PART, TEXT_PART, TOOLS_PART, Part, Rendering, special_regex
from .results import CONTENT, MIXED, TEMPLATE, TOOLS, FormatToken


def accepts(func: Callable[..., Any], name: str) -> bool:
    try:
        return name in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


#: every byte value that is not a UTF-8 continuation byte (deleted to count continuation bytes)
_NOT_CONTINUATION = bytes(b for b in range(256) if not 0x80 <= b < 0xC0)


class Encoder:
    """The tokenizer calls the chat core makes: ordinary text, and tokens with character offsets.

    Offsets come from the tokens' bytes when the tokenizer has ``token_bytes`` and its tokens
    spell the text byte for byte (fast: the tokenizer's own ``encode``), else from ``pieces``,
    else (``encode`` alone) from encoding prefixes at the part boundaries.
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tok = tokenizer
        self.specials: dict[str, int] = dict(getattr(tokenizer, "special_tokens", {}) or {})
        self.extra: dict[str, Any] = {"add_special_tokens": False} if accepts(tokenizer.encode, "add_special_tokens") else {}
        pieces = getattr(tokenizer, "pieces", None)
        self.has_pieces = callable(pieces)
        self.pieces_extra = self.extra if self.has_pieces and accepts(pieces, "add_special_tokens") else {}
        self.token_bytes = getattr(tokenizer, "token_bytes", None)
        self.exact = self.has_pieces or callable(self.token_bytes)
        self._cache: dict[str, int] = {}
        self._info: dict[int, tuple[int, int, bool]] = {}

    def ordinary(self, text: str) -> list[int]:
        return list(self.tok.encode(text, allowed_special=(), disallowed_special=(), **self.extra))

    def count(self, text: str) -> int:
        n = self._cache.get(text)
        if n is None:
            n = len(self.ordinary(text))
            if len(self._cache) < 4096:
                self._cache[text] = n
        return n

    def _by_bytes(self, text: str, ids: list[int]) -> tuple[list[int], list[int]] | None:
        info = self._info
        token_bytes = self.token_bytes
        starts: list[int] = []
        ends: list[int] = []
        chars = 0
        total = 0
        try:
            for tid in ids:
                entry = info.get(tid)
                if entry is None:
                    data = token_bytes(tid)
                    # (byte length, characters begun, starts inside a character)
                    entry = (len(data), len(data) - len(data.translate(None, _NOT_CONTINUATION)),
                             bool(data) and 0x80 <= data[0] < 0xC0)
                    info[tid] = entry
                total += entry[0]
                starts.append(chars - 1 if entry[2] else chars)
                chars += entry[1]
                ends.append(chars)
        except Exception:  # noqa: BLE001 - an id without bytes: use another way
            return None
        if total != len(text.encode("utf-8")) or chars != len(text):
            return None  # the tokenizer changes the text (normalizes it): its tokens do not spell it
        return starts, ends

    def tokens(self, text: str, allowed: Collection[str] = (), cuts: Sequence[int] = ()) -> tuple[list[int], list[int], list[int]] | None:
        """``(ids, starts, ends)`` of ``text`` with ``allowed`` special tokens read as such;
        ``None`` when offsets cannot be had with specials (the caller encodes run by run)."""
        if callable(self.token_bytes):
            ids = list(self.tok.encode(text, allowed_special=allowed, disallowed_special=(), **self.extra))
            placed = self._by_bytes(text, ids)
            if placed is not None:
                return ids, placed[0], placed[1]
        if self.has_pieces:
            got = self.tok.pieces(text, allowed_special=allowed, disallowed_special=(), **self.pieces_extra)
            return [p.id for p in got], [p.start for p in got], [p.end for p in got]
        if allowed:
            return None
        placed = _tokens_by_prefixes(self.ordinary, text, cuts)
        return [t[0] for t in placed], [t[1] for t in placed], [t[2] for t in placed]


def _tokens_by_prefixes(encode: Callable[[str], list[int]], text: str, cuts: Sequence[int]) -> list[tuple[int, int, int]]:
    """Place the tokens of ``text`` between the part boundaries ``cuts`` using only ``encode``.

    The tokens before a boundary are the common prefix of ``encode(text[:cut])`` and
    ``encode(text)``; when that prefix is shorter than the left side's own tokens, the next token
    straddles the boundary and gets both regions as its offsets. Offsets are the regions', not
    the tokens' own (a tokenizer with ``pieces`` gives exact ones).

    >>> enc = lambda s: [ord(c) for c in s]  # one token per character
    >>> _tokens_by_prefixes(enc, "abc", [1])
    [(97, 0, 1), (98, 1, 3), (99, 1, 3)]
    >>> pairs = lambda s: [s[i:i + 2] for i in range(0, len(s), 2)]  # "abcd" -> "ab", "cd"
    >>> _tokens_by_prefixes(pairs, "abcd", [1])
    [('ab', 0, 4), ('cd', 1, 4)]
    """
    ids = encode(text)
    cuts = sorted({c for c in cuts if 0 < c < len(text)})
    bounds = [0, *cuts, len(text)]
    firsts = [0]
    straddles = set()
    for cut in cuts:
        left = encode(text[:cut])
        k = 0
        while k < len(left) and k < len(ids) and left[k] == ids[k]:
            k += 1
        if k < len(left):
            straddles.add(k)
        firsts.append(max(k, firsts[-1]))
    firsts.append(len(ids))
    out = []
    for r in range(len(bounds) - 1):
        for k in range(firsts[r], firsts[r + 1]):
            lo = bounds[r - 1] if (r and k == firsts[r] and k in straddles) else bounds[r]
            out.append((ids[k], lo, bounds[r + 1]))
    return out


_KIND_LETTER = {SPECIAL_PART: TEMPLATE, TEXT_PART: TEMPLATE, CONTENT_PART: CONTENT, TOOLS_PART: TOOLS}


def encode_parts(enc: Encoder, r: Rendering) -> tuple[list[int], list[str], list[tuple[int, int]], list[int], dict[str, FormatToken]]:
    parts = r.parts
    starts = []
    pos = 0
    for p in parts:
        starts.append(pos)
        pos += len(p.text)
    part_ends = [st + len(p.text) for st, p in zip(starts, parts)]
    text = "".join(p.text for p in parts)
    # a special part that is not a special token of this tokenizer (nor assumed) is template text
    real_special = [(p.kind == SPECIAL_PART and (p.text in enc.specials or p.text in r.assumed))
                    or (p.as_special and p.text in enc.specials) for p in parts]

    placed = None
    if not r.piecewise and not r.assumed:
        placed = _whole_text(enc, text, parts, starts, real_special)
    if placed is not None:
        ids, tstart, tend = placed
    else:
        ids, tstart, tend = [], [], []
        run_start: int | None = None

        def flush(a: int, b: int) -> None:
            lo, hi = starts[a], part_ends[b - 1]
            if hi <= lo:
                return
            got = enc.tokens(text[lo:hi], (), [starts[k] - lo for k in range(a + 1, b)])
            assert got is not None
            ids.extend(got[0])
            tstart.extend(x + lo for x in got[1])
            tend.extend(x + lo for x in got[2])

        for k, p in enumerate(parts):
            if real_special[k]:
                if run_start is not None:
                    flush(run_start, k)
                    run_start = None
                ids.append(enc.specials.get(p.text, r.assumed.get(p.text)))
                tstart.append(starts[k])
                tend.append(part_ends[k])
                continue
            if run_start is not None and r.piecewise and p.new_run:
                flush(run_start, k)
                run_start = None
            if run_start is None:
                run_start = k
        if run_start is not None:
            flush(run_start, len(parts))

    # attribute every token to the parts it overlaps
    kinds: list[str] = []
    owners: list[int] = []
    nparts = len(parts)
    k = 0
    for s, e in zip(tstart, tend):
        if e <= s:
            e = s + 1
        while k < nparts and part_ends[k] <= s:
            k += 1
        if k >= nparts:
            kinds.append(TEMPLATE)
            owners.append(parts[-1].owner if parts else PREFIX)
            continue
        part = parts[k]
        if e <= part_ends[k]:
            kinds.append(_KIND_LETTER[part.kind])
            owners.append(part.owner)
            continue
        has_content = has_other = has_tools = False
        j = k
        while j < nparts and starts[j] < e:
            pk = parts[j].kind
            if pk == CONTENT_PART:
                has_content = True
            elif pk == TOOLS_PART:
                has_tools = True
            else:
                has_other = True
            j += 1
        if has_content:
            kinds.append(MIXED if (has_other or has_tools) else CONTENT)
        else:
            kinds.append(TOOLS if has_tools else TEMPLATE)
        owners.append(part.owner)
    offsets = list(zip(tstart, tend))

    report: dict[str, FormatToken] = {}
    uses: dict[str, int] = {}
    for p in parts:
        if p.kind == SPECIAL_PART:
            uses[p.text] = uses.get(p.text, 0) + 1
    written = "\0".join(p.text for p in parts if p.kind == TEXT_PART)
    for control in r.controls:
        if control in enc.specials:
            report[control] = FormatToken(control, enc.specials[control], enc.count(control), uses.get(control, 0))
        elif control in r.assumed:
            report[control] = FormatToken(control, r.assumed[control], enc.count(control), uses.get(control, 0), True)
        else:
            report[control] = FormatToken(control, None, enc.count(control), uses.get(control, 0) + written.count(control))
    return ids, kinds, offsets, owners, report


def _whole_text(enc: Encoder, text: str, parts: list[Part], starts: list[int],
                real_special: list[bool]) -> tuple[list[int], list[int], list[int]] | None:
    """Encode the whole rendered text in one call with the template's special tokens allowed,
    when that cannot read anything else as a special token; else ``None`` (encode run by run)."""
    if not enc.exact:
        return None
    allowed = {p.text for p, real in zip(parts, real_special) if real}
    pattern = special_regex(allowed)
    expected = {(starts[k], starts[k] + len(p.text)) for k, (p, real) in enumerate(zip(parts, real_special)) if real}
    if pattern is not None:
        for found in pattern.finditer(text):
            if found.span() not in expected:
                return None
    # another special token spelled in text stays text either way (it is not allowed)
    return enc.tokens(text, allowed)
