"""Statistics that explain a tokenization: token lengths, Zipf's law, coverage, digit groups.

Everything here works from a text and the ids a tokenizer gave it (plus the tokenizer's
vocabulary), so one encode of a 1 MB text is the only expensive step. The figures are plain
frozen dataclasses; :func:`text_stats` gathers them all, and each figure also has its own small
function for tests and for the explorer's screens.

The pure plot geometry (histogram bars in eighths of a cell, log-log scaling onto a grid of
braille dots) lives here too, so the command line, the explorer and the tests share it.

Words: a *token* is a vocabulary entry, a *piece* is a token where it occurs in the text. A piece's
length in characters is the number of characters that *begin* in it (bytes that are not UTF-8
continuation bytes), so a partial piece holding only the tail of a character counts 0.
"""

from __future__ import annotations

import math
import threading
import unicodedata
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate

import regex

from ..text.errors import CancelledError, TokscopeError

#: The four Unicode normalisation forms, in the order the explorer shows them.
NORMAL_FORMS: tuple[str, ...] = ("NFC", "NFD", "NFKC", "NFKD")

#: Numbers encoded (after a space, as in running text) to show an encoding's digit groups even
#: when the text has no numbers.
PROBE_NUMBERS: tuple[str, ...] = ("7", "42", "365", "2026", "31415", "1234567", "9876543210")

#: A model width to size the embedding table with when none is given (a common model width).
DEFAULT_WIDTH = 4096

_DIGITS = regex.compile(rb"[0-9]+")
#: Text a token label shows as it is (apart from spaces): no controls, format characters, separators
#: or backslashes.
_PLAIN_LABEL = regex.compile(r"[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}\\]*")


# ----- data ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Histogram:
    """How many pieces have each length: ``bins[i] == (length, count)`` for every length from
    ``1`` (or ``0`` when some piece has length 0) to the longest, zeros included."""

    unit: str  # "bytes" or "chars"
    bins: tuple[tuple[int, int], ...]
    total: int
    mean: float

    @property
    def counts(self) -> list[int]:
        return [count for _, count in self.bins]

    def count(self, length: int) -> int:
        """The number of pieces of exactly ``length`` units (0 when none)."""
        for bin_length, count in self.bins:
            if bin_length == length:
                return count
        return 0


def capped_bins(hist: Histogram, max_len: int = 16) -> list[tuple[str, int]]:
    """The histogram's bins as ``(label, count)`` with every length above ``max_len`` in one
    last bin labelled ``">max_len"`` (left out when empty), for a plot of bounded width.

    >>> capped_bins(histogram({1: 2, 2: 1, 5: 1, 9: 3}, "bytes"), 4)
    [('1', 2), ('2', 1), ('3', 0), ('4', 0), ('>4', 4)]
    """
    out = [(str(n), c) for n, c in hist.bins if n <= max_len]
    over = sum(c for n, c in hist.bins if n > max_len)
    if over:
        out.append((f">{max_len}", over))
    return out


@dataclass(frozen=True, slots=True)
class LineFit:
    """A least-squares line ``y = slope * x + intercept`` with its coefficient of determination."""

    slope: float
    intercept: float
    r2: float
    n_points: int


@dataclass(frozen=True, slots=True)
class TopToken:
    """One of the most frequent tokens in the text: ``share`` is its count over all pieces."""

    id: int
    bytes: bytes
    count: int
    share: float
    special: bool = False

    @property
    def text(self) -> str:
        return self.bytes.decode("utf-8", errors="replace")


@dataclass(frozen=True, slots=True)
class Coverage:
    """How much of the vocabulary the text uses: ``distinct`` tokens out of ``n_vocab``."""

    distinct: int
    n_vocab: int

    @property
    def fraction(self) -> float:
        return self.distinct / self.n_vocab if self.n_vocab else 0.0


@dataclass(frozen=True, slots=True)
class NumberCut:
    """One run of ASCII digits in the text and how the pieces cut it.

    ``start``/``end`` are byte offsets into the text's UTF-8 (digits are one byte each, so the
    groups are the digits each covering piece holds). ``kind`` is from :func:`classify_groups`.
    """

    digits: str
    start: int
    end: int
    groups: tuple[str, ...]
    kind: str

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(len(g) for g in self.groups)

    def pattern(self) -> str:
        """The cut as bracketed groups.

        >>> NumberCut("1234567", 0, 7, ("123", "456", "7"), "ltr").pattern()
        '[123][456][7]'
        """
        return "".join(f"[{g}]" for g in self.groups)


@dataclass(frozen=True, slots=True)
class DigitGroups:
    """How numbers are cut into tokens across a text.

    ``numbers`` holds the first numbers found (at most ``limit`` of :func:`digit_groups`);
    ``total`` counts them all; ``kinds`` counts every number by its kind; ``summary`` says in
    words what rule the cuts follow (e.g. ``"left-to-right groups of up to 3"`` or
    ``"irregular"``); ``group`` is the largest group size seen.
    """

    numbers: tuple[NumberCut, ...]
    total: int
    kinds: tuple[tuple[str, int], ...]
    summary: str
    group: int


@dataclass(frozen=True, slots=True)
class EmbeddingSize:
    """The embedding table of a model: ``n_vocab`` rows of ``width`` numbers."""

    n_vocab: int
    width: int

    @property
    def params(self) -> int:
        return self.n_vocab * self.width

    @property
    def millions(self) -> float:
        return self.params / 1e6

    def megabytes(self, bytes_per_param: int = 2) -> float:
        """Its size in MB (10^6 bytes) at ``bytes_per_param`` (2 for 16-bit weights)."""
        return self.params * bytes_per_param / 1e6


@dataclass(frozen=True, slots=True)
class NormalForm:
    """The text after one normalisation form (``"none"`` for the text as given) and its count."""

    form: str
    text: str
    chars: int
    bytes: int
    tokens: int
    changed: bool


@dataclass(frozen=True, slots=True)
class TextStats:
    """Every insight about one text under one tokenizer (see :func:`text_stats`)."""

    encoding: str
    n_vocab: int
    tokens: int
    chars: int
    bytes: int
    bytes_histogram: Histogram
    chars_histogram: Histogram
    frequencies: tuple[int, ...]  # counts of the distinct tokens, most frequent first
    zipf: LineFit | None
    top: tuple[TopToken, ...]
    coverage: Coverage
    digits: DigitGroups
    probe: DigitGroups
    embedding: EmbeddingSize
    normalization: tuple[NormalForm, ...] | None = None

    @property
    def chars_per_token(self) -> float:
        return self.chars / self.tokens if self.tokens else 0.0

    @property
    def bytes_per_token(self) -> float:
        return self.bytes / self.tokens if self.tokens else 0.0


# ----- single figures -------------------------------------------------------------------------


def chars_begun(data: bytes) -> int:
    """How many characters begin in ``data`` (bytes that are not UTF-8 continuation bytes).

    >>> chars_begun(b"abc"), chars_begun("é".encode()), chars_begun("é".encode()[1:])
    (3, 1, 0)
    """
    return sum(1 for b in data if not 0x80 <= b < 0xC0)


def histogram(lengths: Mapping[int, int], unit: str) -> Histogram:
    """A histogram from ``{length: count}``, with every length between the smallest bin and the
    longest present (missing ones as zero).

    >>> h = histogram({1: 5, 3: 2}, "bytes")
    >>> h.bins, h.total, round(h.mean, 3)
    (((1, 5), (2, 0), (3, 2)), 7, 1.571)
    """
    lengths = {k: v for k, v in lengths.items() if v}
    if not lengths:
        return Histogram(unit, (), 0, 0.0)
    low = min(0 if 0 in lengths else 1, min(lengths))
    high = max(lengths)
    total = sum(lengths.values())
    mean = sum(k * v for k, v in lengths.items()) / total
    return Histogram(unit, tuple((n, lengths.get(n, 0)) for n in range(low, high + 1)), total, mean)


def length_histograms(counts: Mapping[int, int], token_bytes: Callable[[int], bytes]) -> tuple[Histogram, Histogram]:
    """Histograms of piece lengths in bytes and in characters, from token counts.

    >>> vocab = {0: b"a", 1: b"bc", 2: "\\u00e9".encode()}
    >>> by_bytes, by_chars = length_histograms({0: 3, 1: 1, 2: 2}, vocab.__getitem__)
    >>> by_bytes.bins, by_chars.bins
    (((1, 3), (2, 3)), ((1, 5), (2, 1)))
    """
    by_bytes: Counter[int] = Counter()
    by_chars: Counter[int] = Counter()
    for token_id, count in counts.items():
        data = token_bytes(token_id)
        by_bytes[len(data)] += count
        by_chars[chars_begun(data)] += count
    return histogram(by_bytes, "bytes"), histogram(by_chars, "chars")


def rank_frequency(counts: Mapping[int, int] | Iterable[int]) -> tuple[int, ...]:
    """The counts of the distinct tokens sorted most frequent first (rank 1 is index 0).

    >>> rank_frequency({7: 2, 9: 5, 4: 1})
    (5, 2, 1)
    """
    values = counts.values() if isinstance(counts, Mapping) else counts
    return tuple(sorted((v for v in values if v > 0), reverse=True))


def fit_line(xs: Sequence[float], ys: Sequence[float]) -> LineFit:
    """Ordinary least squares ``y = a*x + b``, written out (no numpy).

    >>> fit = fit_line([0, 1, 2, 3], [1, 3, 5, 7])
    >>> fit.slope, fit.intercept, fit.r2
    (2.0, 1.0, 1.0)
    """
    n = len(xs)
    if n != len(ys):
        raise ValueError("xs and ys differ in length")
    if n < 2:
        raise ValueError("a line needs at least two points")
    mean_x = sum(xs) / n
    mean_y = sum(ys) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    if sxx == 0 or min(xs) == max(xs):  # the mean of equal floats may round off the value
        raise ValueError("all points have the same x")
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys))
    syy = sum((y - mean_y) ** 2 for y in ys)
    slope = sxy / sxx
    intercept = mean_y - slope * mean_x
    # mathematically 0 <= r2 <= 1; clamp the rounding error of nearly collinear points
    denominator = sxx * syy  # may underflow to 0 for tiny spreads
    r2 = 1.0 if denominator == 0 else min(1.0, (sxy * sxy) / denominator)
    return LineFit(slope, intercept, r2, n)


def zipf_fit(frequencies: Sequence[int]) -> LineFit | None:
    """Fit ``log(count) = slope * log(rank) + c`` over every rank (natural logs).

    Zipf's law says the count of the token of rank r falls like 1/r^s, so the slope is -s (close
    to -1 for natural text). Every rank is one point, so the long tail of rare tokens weighs as
    much as it occupies. ``None`` when fewer than two distinct tokens occur.

    >>> round(zipf_fit([1000, 500, 333, 250, 200]).slope, 2)
    -1.0
    """
    freqs = [f for f in frequencies if f > 0]
    if len(freqs) < 2:
        return None
    xs = [math.log(r) for r in range(1, len(freqs) + 1)]
    ys = [math.log(f) for f in freqs]
    return fit_line(xs, ys)


def top_tokens(
    counts: Mapping[int, int], token_bytes: Callable[[int], bytes], n: int = 10,
    is_special: Callable[[int], bool] | None = None,
) -> tuple[TopToken, ...]:
    """The ``n`` most frequent tokens, ties broken by the smaller id.

    >>> vocab = {0: b"a", 1: b"b", 2: b"c"}
    >>> [(t.text, t.count) for t in top_tokens({0: 1, 1: 3, 2: 3}, vocab.__getitem__, 2)]
    [('b', 3), ('c', 3)]
    """
    total = sum(counts.values())
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: max(n, 0)]
    return tuple(
        TopToken(i, token_bytes(i), c, c / total if total else 0.0, bool(is_special and is_special(i)))
        for i, c in ranked
    )


def coverage(counts: Mapping[int, int], n_vocab: int) -> Coverage:
    """The distinct tokens the text uses against the vocabulary size.

    >>> c = coverage({1: 4, 2: 1}, 8)
    >>> c.distinct, c.fraction
    (2, 0.25)
    """
    return Coverage(sum(1 for v in counts.values() if v > 0), n_vocab)


def embedding_size(n_vocab: int, width: int) -> EmbeddingSize:
    """The embedding table for a model of ``width`` (n_vocab x width numbers).

    >>> e = embedding_size(200019, 4096)
    >>> e.params, round(e.millions, 1)
    (819277824, 819.3)
    """
    if width < 1:
        raise TokscopeError(f"the model width must be a positive number, not {width}")
    return EmbeddingSize(n_vocab, width)


# ----- digit groups ---------------------------------------------------------------------------


def classify_groups(sizes: Sequence[int]) -> str:
    """Name the rule one number's cut follows.

    ``whole`` (one group), ``single`` (every digit alone), ``ltr`` (equal groups from the left,
    the last one shorter or equal), ``rtl`` (equal groups from the right, the first shorter),
    ``equal`` (equal groups: both ltr and rtl fit) or ``irregular``.

    >>> [classify_groups(s) for s in [(4,), (1, 1, 1), (3, 3, 1), (1, 3, 3), (2, 2), (3, 2, 2)]]
    ['whole', 'single', 'ltr', 'rtl', 'equal', 'irregular']
    """
    if len(sizes) <= 1:
        return "whole"
    if all(s == 1 for s in sizes):
        return "single"
    head = sizes[0]
    ltr = all(s == head for s in sizes[:-1]) and 1 <= sizes[-1] <= head
    tail = sizes[-1]
    rtl = all(s == tail for s in sizes[1:]) and 1 <= sizes[0] <= tail
    if ltr and rtl:
        return "equal"
    if ltr:
        return "ltr"
    if rtl:
        return "rtl"
    return "irregular"


def summarize_cuts(cuts: Sequence[Sequence[int]]) -> tuple[str, int]:
    """The rule that every number's cut follows, in words, and the largest group size.

    A text is cut "left-to-right groups of up to N" when every number is N-digit groups from the
    left with a shorter last group (numbers of up to N digits, left whole, agree with it).

    >>> summarize_cuts([(3, 3, 1), (3,), (2,)])
    ('left-to-right groups of up to 3', 3)
    >>> summarize_cuts([(3, 2, 2), (2, 2)])
    ('irregular', 3)
    >>> summarize_cuts([(1, 1, 1), (1,)])
    ('single digits', 1)
    """
    cuts = [tuple(c) for c in cuts if c]
    if not cuts:
        return "no numbers", 0
    group = max(max(c) for c in cuts)
    if all(len(c) == 1 for c in cuts):
        return "each number is one token", group
    if group == 1:
        return "single digits", 1
    if all(all(s == group for s in c[:-1]) and c[-1] <= group for c in cuts):
        return f"left-to-right groups of up to {group}", group
    if all(all(s == group for s in c[1:]) and c[0] <= group for c in cuts):
        return f"right-to-left groups of up to {group}", group
    return "irregular", group


def token_offsets(ids: Sequence[int], token_bytes: Callable[[int], bytes]) -> list[int]:
    """Byte offsets where each token starts, plus the end: ``len(ids) + 1`` numbers.

    >>> token_offsets([0, 1, 0], {0: b"ab", 1: b"c"}.__getitem__)
    [0, 2, 3, 5]
    """
    lengths = {i: len(token_bytes(i)) for i in set(ids)}
    out = [0]
    out.extend(accumulate(map(lengths.__getitem__, ids)))
    return out


def digit_groups(
    data: bytes, offsets: Sequence[int], *, limit: int = 200, cancel: threading.Event | None = None
) -> DigitGroups:
    """How the pieces whose byte ``offsets`` are given cut each run of ASCII digits in ``data``.

    ``offsets`` are the pieces' start offsets plus the end (see :func:`token_offsets`). Each
    number's groups are its digits as the covering pieces hold them (a piece such as ``" 123"``
    contributes ``"123"``).

    >>> g = digit_groups(b"x 1234567", [0, 1, 2, 5, 8, 9])
    >>> g.numbers[0].pattern(), g.summary
    ('[123][456][7]', 'left-to-right groups of up to 3')
    """
    numbers: list[NumberCut] = []
    kinds: Counter[str] = Counter()
    kind_of: dict[tuple[int, ...], str] = {}
    last = len(offsets) - 1
    total = 0
    for found in _DIGITS.finditer(data):
        if cancel is not None and total % 4096 == 0 and cancel.is_set():
            raise CancelledError("cancelled")
        start, end = found.span()
        i = bisect_right(offsets, start) - 1
        bounds = [start]
        while i < last and offsets[i + 1] < end:
            i += 1
            bounds.append(offsets[i])
        bounds.append(end)
        sizes = tuple(b - a for a, b in zip(bounds, bounds[1:]))
        kind = kind_of.get(sizes)
        if kind is None:
            kind = kind_of[sizes] = classify_groups(sizes)
        kinds[kind] += 1
        total += 1
        if len(numbers) < limit:
            groups = tuple(data[a:b].decode("ascii") for a, b in zip(bounds, bounds[1:]))
            numbers.append(NumberCut(found.group().decode("ascii"), start, end, groups, kind))
    sizes_seen = kind_of.keys()
    summary, group = summarize_cuts(sorted(sizes_seen))
    return DigitGroups(tuple(numbers), total, tuple(sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))), summary, group)


def probe_digits(encode: Callable[[str], Sequence[int]], token_bytes: Callable[[int], bytes],
                 numbers: Sequence[str] = PROBE_NUMBERS, *,
                 offsets: Callable[[str, Sequence[int]], list[int]] | None = None) -> DigitGroups:
    """Encode each of ``numbers`` after a space (as in running text) and report the cuts.
    ``offsets(text, ids)`` places the pieces when their bytes do not simply follow one another
    (see :func:`text_offsets`)."""
    text = " " + " ".join(numbers)
    ids = encode(text)
    found = offsets(text, ids) if offsets is not None else token_offsets(ids, token_bytes)
    return digit_groups(text.encode("utf-8"), found, limit=len(numbers))


def text_offsets(tokenizer, text: str, ids: Sequence[int]) -> list[int]:  # noqa: ANN001
    """Where each of the text's pieces starts in its UTF-8, plus the end (as :func:`token_offsets`
    gives them), for any kind of tokenizer: the tokens' lengths when the pieces tile the text's
    bytes (byte-level BPE), else the pieces' own byte offsets into the original text (a
    normalizer, ``▁`` or ``##`` make the tokens' bytes differ from the text's)."""
    if getattr(tokenizer, "pieces_tile_bytes", True):
        offsets = token_offsets(ids, tokenizer.token_bytes)
        if offsets[-1] != len(text.encode("utf-8", "surrogatepass")):
            raise TokscopeError("the token ids do not decode to the text")
        return offsets
    ids = list(ids)
    for mode in ({"disallowed_special": ()}, {"allowed_special": "all"}):
        pieces = tokenizer.pieces(text, **mode)
        if [p.id for p in pieces] == ids:
            return [p.byte_start for p in pieces] + [len(text.encode("utf-8", "surrogatepass"))]
    raise TokscopeError("the token ids are not the text's tokens")


# ----- normalisation --------------------------------------------------------------------------


def normalize(text: str, form: str) -> str:
    """The text after a Unicode normalisation ``form`` (``"none"`` leaves it as it is).

    >>> [len(normalize("caf\\u00e9", f)) for f in ("none", "NFC", "NFD")]
    [4, 4, 5]
    """
    if form == "none":
        return text
    if form not in NORMAL_FORMS:
        raise TokscopeError(f"unknown normalisation form {form!r}; choose one of {', '.join(NORMAL_FORMS)}")
    return unicodedata.normalize(form, text)


def normalization_counts(
    text: str, encode: Callable[[str], Sequence[int]], forms: Sequence[str] = ("none", *NORMAL_FORMS),
    *, cancel: threading.Event | None = None, known: Mapping[str, int] | None = None,
) -> tuple[NormalForm, ...]:
    """The token count of the text under each normalisation form, side by side.

    A form that leaves the text unchanged reuses the count of the text as given (``known`` may
    hold counts already computed, keyed by form).

    >>> rows = normalization_counts("caf\\u00e9", lambda s: list(s.encode()))
    >>> [(r.form, r.tokens, r.changed) for r in rows]
    [('none', 5, False), ('NFC', 5, False), ('NFD', 6, True), ('NFKC', 5, False), ('NFKD', 6, True)]
    """
    counts: dict[str, int] = dict(known or {})
    by_text: dict[str, int] = {}
    if "none" in counts:
        by_text[text] = counts["none"]
    out = []
    for form in forms:
        if cancel is not None and cancel.is_set():
            raise CancelledError("cancelled")
        if form != "none" and unicodedata.is_normalized(form, text):
            result = text
        else:
            result = normalize(text, form)
        n = by_text.get(result)
        if n is None:
            n = by_text[result] = len(encode(result))
        out.append(NormalForm(form, result, len(result), len(result.encode("utf-8", "surrogatepass")), n,
                              result != text))
    return tuple(out)


# ----- everything at once ---------------------------------------------------------------------


def text_stats(
    tokenizer,  # a tokscope.core.tokenizer.tokenizer.Tokenizer (duck-typed: encode, token_bytes, is_special, n_vocab, name)
    text: str,
    *,
    ids: Sequence[int] | None = None,
    top: int = 10,
    width: int = DEFAULT_WIDTH,
    normalization: bool = False,
    digit_limit: int = 200,
    cancel: threading.Event | None = None,
) -> TextStats:
    """All the insights about ``text`` under ``tokenizer``.

    ``ids`` are the text's token ids when already known (else the text is encoded with special
    tokens treated as ordinary text). ``normalization`` adds the token counts under NFC, NFD, NFKC
    and NFKD (up to four more encodes). ``cancel`` stops the work between steps with
    :class:`~tokscope.core.text.errors.CancelledError`.
    """
    from ..tokenizer.tokenizer import fix_surrogates

    def check() -> None:
        if cancel is not None and cancel.is_set():
            raise CancelledError("cancelled")

    text = fix_surrogates(text)
    if ids is None:
        ids = tokenizer.encode(text, disallowed_special=())
    check()
    token_bytes = tokenizer.token_bytes
    counts = Counter(ids)
    by_bytes, by_chars = length_histograms(counts, token_bytes)
    frequencies = rank_frequency(counts)
    zipf = zipf_fit(frequencies)
    check()
    data = text.encode("utf-8")
    offsets = text_offsets(tokenizer, text, ids)
    digits = digit_groups(data, offsets, limit=digit_limit, cancel=cancel)
    probe = probe_digits(tokenizer.encode_ordinary, token_bytes, offsets=lambda t, i: text_offsets(tokenizer, t, i))
    check()
    norm = None
    if normalization:
        norm = normalization_counts(
            text, lambda s: tokenizer.encode(s, disallowed_special=()), cancel=cancel, known={"none": len(ids)}
        )
    return TextStats(
        encoding=tokenizer.name,
        n_vocab=tokenizer.n_vocab,
        tokens=len(ids),
        chars=len(text),
        bytes=len(data),
        bytes_histogram=by_bytes,
        chars_histogram=by_chars,
        frequencies=frequencies,
        zipf=zipf,
        top=top_tokens(counts, token_bytes, top, tokenizer.is_special),
        coverage=coverage(counts, tokenizer.n_vocab),
        digits=digits,
        probe=probe,
        embedding=embedding_size(tokenizer.n_vocab, width),
        normalization=norm,
    )


# ----- plot geometry --------------------------------------------------------------------------

#: Eighth blocks, from empty to full.
BLOCKS = " ▁▂▃▄▅▆▇█"


def bar_heights(values: Sequence[float], height: int) -> list[int]:
    """Scale ``values`` to bar heights in eighths of a cell, for a plot ``height`` cells tall.

    The largest value fills the plot; any value above zero gets at least one eighth.

    >>> bar_heights([0, 1, 2, 4], 1)
    [0, 2, 4, 8]
    """
    top = max(values, default=0)
    if top <= 0 or height < 1:
        return [0] * len(values)
    full = height * 8
    return [0 if v <= 0 else max(1, round(v / top * full)) for v in values]


def bar_rows(values: Sequence[float], height: int, *, ascii_only: bool = False) -> list[str]:
    """Vertical bars as ``height`` text rows (top row first), one column per value.

    >>> bar_rows([1, 2, 4], 1)
    ['▂▄█']
    >>> bar_rows([1, 4], 2, ascii_only=True)
    [' #', '##']
    """
    heights = bar_heights(values, height)
    rows = []
    for row in range(height):
        floor = (height - 1 - row) * 8  # eighths below this row
        cells = []
        for h in heights:
            part = min(max(h - floor, 0), 8)
            if ascii_only:
                cells.append("#" if part >= 4 or (floor == 0 and h > 0) else " ")
            else:
                cells.append(BLOCKS[part])
        rows.append("".join(cells))
    return rows


def hbar(value: float, top: float, width: int, *, ascii_only: bool = False) -> str:
    """A horizontal bar ``width`` cells long at most, in eighths (or ``#`` in ASCII).

    >>> hbar(5, 10, 4), hbar(10, 10, 4, ascii_only=True)
    ('██', '####')
    """
    if top <= 0 or value <= 0 or width < 1:
        return ""
    eighths = max(1, round(value / top * width * 8))
    if ascii_only:
        return "#" * max(1, round(eighths / 8))
    full, rest = divmod(eighths, 8)
    return "█" * full + ("▏▎▍▌▋▊▉"[rest - 1] if rest else "")


def log_scale(value: float, low: float, high: float, steps: int) -> int:
    """Position of ``value`` on a log axis from ``low`` to ``high`` split into ``steps`` slots.

    >>> [log_scale(v, 1, 1000, 4) for v in (1, 10, 100, 1000)]
    [0, 1, 2, 3]
    """
    if steps <= 1 or high <= low:
        return 0
    t = (math.log(value) - math.log(low)) / (math.log(high) - math.log(low))
    return min(steps - 1, max(0, round(t * (steps - 1))))


def linear_scale(value: float, low: float, high: float, steps: int) -> int:
    """Position of ``value`` on a linear axis from ``low`` to ``high`` split into ``steps`` slots.

    >>> [linear_scale(v, 0, 10, 3) for v in (0, 5, 10)]
    [0, 1, 2]
    """
    if steps <= 1 or high <= low:
        return 0
    t = (value - low) / (high - low)
    return min(steps - 1, max(0, round(t * (steps - 1))))


@dataclass(frozen=True, slots=True)
class Axis:
    """One axis of a scatter plot: its range and whether it is logarithmic."""

    low: float
    high: float
    log: bool = False

    def place(self, value: float, steps: int) -> int:
        if self.log:
            return log_scale(value, self.low, self.high, steps)
        return linear_scale(value, self.low, self.high, steps)


def axis_for(values: Iterable[float], *, log: bool = False) -> Axis:
    """An axis spanning ``values`` (positive values only on a log axis).

    >>> axis_for([3, 10, 1], log=True)
    Axis(low=1, high=10, log=True)
    """
    vals = [v for v in values if not log or v > 0]
    if not vals:
        return Axis(1, 10, log) if log else Axis(0, 1, log)
    low, high = min(vals), max(vals)
    if high == low:
        high = low * 10 if log else low + 1
    return Axis(low, high, log)


#: Braille dot bits by (column 0..1, row 0..3) inside one cell.
BRAILLE_BITS = ((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80))


def dot_grid(
    series: Sequence[Sequence[tuple[float, float]]], x: Axis, y: Axis, width: int, height: int
) -> list[list[int]]:
    """Place each series' points as dot coordinates on a plot of ``width`` x ``height`` cells,
    each cell holding 2x4 dots (as braille does): ``[[(dot_x, dot_y), ...], ...]`` per series,
    dot_y 0 at the top. Points that a log axis cannot show (zero or negative) are dropped.

    >>> dot_grid([[(1, 1), (10, 10)]], Axis(1, 10, True), Axis(1, 10, True), 2, 1)
    [[(0, 3), (3, 0)]]
    """
    dots_w, dots_h = width * 2, height * 4
    out = []
    for points in series:
        placed = []
        for px, py in points:
            if (x.log and px <= 0) or (y.log and py <= 0):
                continue
            placed.append((x.place(px, dots_w), dots_h - 1 - y.place(py, dots_h)))
        out.append(placed)
    return out


def braille_rows(dots: Iterable[tuple[int, int]], width: int, height: int) -> list[str]:
    """Draw dot coordinates (from :func:`dot_grid`) as ``height`` rows of braille characters.

    >>> braille_rows([(0, 3), (3, 0)], 2, 1)
    ['⡀⠈']
    """
    cells = [[0] * width for _ in range(height)]
    for dx, dy in dots:
        col, sub_x = divmod(dx, 2)
        row, sub_y = divmod(dy, 4)
        if 0 <= row < height and 0 <= col < width:
            cells[row][col] |= BRAILLE_BITS[sub_x][sub_y]
    return ["".join(chr(0x2800 + c) if c else " " for c in row) for row in cells]


def ascii_rows(dots: Iterable[tuple[int, int]], width: int, height: int, mark: str = "*") -> list[str]:
    """The same dots at cell resolution with one ASCII ``mark`` per occupied cell.

    >>> ascii_rows([(0, 3), (3, 0)], 2, 1)
    ['**']
    """
    cells = [[" "] * width for _ in range(height)]
    for dx, dy in dots:
        col, row = dx // 2, dy // 4
        if 0 <= row < height and 0 <= col < width:
            cells[row][col] = mark
    return ["".join(row) for row in cells]


def line_dots(fit: LineFit, x: Axis, y: Axis, width: int, height: int) -> list[tuple[int, int]]:
    """Dots along a fitted line ``log y = slope * log x + intercept`` (natural logs) on log axes,
    one per dot column, clipped to the plot."""
    dots_w, dots_h = width * 2, height * 4
    out = []
    if not (x.log and y.log) or dots_w < 2:
        return out
    lx0, lx1 = math.log(x.low), math.log(x.high)
    ly0, ly1 = math.log(y.low), math.log(y.high)
    if ly1 <= ly0:
        return out
    for col in range(dots_w):
        lx = lx0 + (lx1 - lx0) * col / (dots_w - 1)
        ly = fit.slope * lx + fit.intercept
        t = (ly - ly0) / (ly1 - ly0)
        if 0 <= t <= 1:
            out.append((col, dots_h - 1 - round(t * (dots_h - 1))))
    return out
