"""Who owns each piece of a rendered chat template: the prefix, a message or the suffix.

Given where the messages' strings landed (content ranges), the rendered text is cut at each
turn's start (the special token the generation prompt starts with, when there is one) or, failing
that, after the previous turn's end; then it is cut into parts: content, the template's own special
tokens and template text."""

from __future__ import annotations

import bisect
from collections.abc import Collection, Mapping, Sequence

import regex

from .conversation import Conversation
from .parts import CONTENT_PART, PREFIX, SPECIAL_PART, TEXT_PART, Part


#: where a message's text is cut into pieces searched one by one when it is not found whole
_PIECES = regex.compile(r"\n+|</?think>")


def search_contents(text: str, conv: Conversation) -> list[tuple[int, int, int]]:
    """Content ranges found by searching each message's text in order (the fallback): the text
    stripped, else its lines one by one (a template that drops the reasoning before ``</think>``
    or rewrites some lines still shows the rest).

    >>> from tokscope.core.chat.conversation import parse_conversation
    >>> conv = parse_conversation([{"role": "user", "content": "Hi"},
    ...                            {"role": "assistant", "content": "<think>\\nhm\\n</think>\\n\\nHello!"}])
    >>> text = "<u>Hi</u><a>Hello!</a>"
    >>> [text[s:e] for s, e, _ in search_contents(text, conv)]
    ['Hi', 'Hello!']
    """
    ranges = []
    pos = 0
    for i, m in enumerate(conv.messages):
        for part in m.parts:
            core = part.strip()
            if not core:
                continue
            at = text.find(core, pos)
            if at >= 0:
                ranges.append((at, at + len(core), i))
                pos = at + len(core)
                continue
            for piece in _PIECES.split(core):
                piece = piece.strip()
                at = text.find(piece, pos) if piece else -1
                if at >= 0:
                    ranges.append((at, at + len(piece), i))
                    pos = at + len(piece)
    return ranges


def turn_start(gen_text: str | None, specials: Mapping[str, int]) -> str | None:
    """The special token a turn starts with, learnt from the generation prompt.

    >>> turn_start("<|im_start|>assistant\\n", {"<|im_start|>": 1}), turn_start("[/INST]", {"<|x|>": 2})
    ('<|im_start|>', None)
    """
    if not gen_text:
        return None
    best = None
    for s in specials:
        if gen_text.startswith(s) and (best is None or len(s) > len(best)):
            best = s
    return best


def _cut_gap(text: str, lo: int, hi: int, special_re: regex.Pattern[str] | None, leading: bool) -> int:
    """Where the template text between two messages' contents (``text[lo:hi]``) is cut when no
    turn-start token is known: after the first special token (the previous turn's end) and the
    whitespace after it, else after the first run of newlines, else at ``lo``. Before the first
    message (``leading``) the prefix ends after the first special token only when the gap holds
    two or more (a BOS, then the turn's own start); otherwise it is all the first message's.

    >>> import regex
    >>> specials = regex.compile("|".join(map(regex.escape, ["<s>", "[INST]", "</s>"])))
    >>> text = "<s>[INST] Hi [/INST] Hello</s>[INST] Bye"
    >>> _cut_gap(text, 0, 10, specials, True), _cut_gap(text, 26, 37, specials, False)
    (3, 30)
    """
    hits = list(special_re.finditer(text, lo, hi)) if special_re is not None else []
    if leading:
        return hits[0].end() if len(hits) >= 2 else lo
    if hits:
        cut = hits[0].end()
        while cut < hi and text[cut].isspace():
            cut += 1
        return cut
    newline = text.find("\n", lo, hi)
    if newline < 0:
        return lo
    while newline < hi and text[newline] == "\n":
        newline += 1
    return newline


def owner_cuts(text: str, ranges: list[tuple[int, int, int]], conv: Conversation, start_token: str | None,
               suffix_at: int, boundary_re: regex.Pattern[str] | None,
               dropped: Collection[int] = ()) -> list[tuple[int, int]]:
    """Cut the rendered text into ``(start, owner)`` pieces: prefix, messages, suffix. Messages in
    ``dropped`` (the template left them out) own nothing; a message with nothing located in the
    text owns a turn start between its neighbours when there are enough of them. ``boundary_re``
    matches the control tokens a gap between turns is cut after (see :func:`_cut_gap`)."""
    n = len(conv.messages)
    regions: list[list[int]] = []  # [message, start, end]
    for start, end, i in sorted(ranges):
        if regions and regions[-1][0] == i:
            regions[-1][2] = max(regions[-1][2], end)
        else:
            regions.append([i, start, end])
    cuts: list[tuple[int, int]] = [(0, PREFIX)]

    def starts_in(lo: int, hi: int) -> list[int]:
        if not start_token or hi <= lo:
            return []
        out, at = [], text.find(start_token, lo, hi)
        while at >= 0:
            out.append(at)
            at = text.find(start_token, at + len(start_token), hi)
        return out

    anchored = {reg[0] for reg in regions} | set(dropped)
    prev_msg, prev_end = PREFIX, 0
    for msg, start, end in regions:
        between = [k for k in range(prev_msg + 1, msg) if k not in anchored] if msg > prev_msg else []
        hits = starts_in(prev_end, start)
        if hits and len(hits) >= len(between) + 1:
            hits = hits[len(hits) - len(between) - 1:]
            for k, at in zip(between, hits):
                cuts.append((at, k))
            cut = hits[-1]
        elif hits:
            cut = hits[-1]
        else:
            cut = _cut_gap(text, prev_end, start, boundary_re, leading=prev_msg == PREFIX)
        cuts.append((max(cut, prev_end if prev_msg != PREFIX else 0), msg))
        prev_msg, prev_end = msg, end
    if regions:
        after = [k for k in range(prev_msg + 1, n) if k not in anchored]
        hits = starts_in(prev_end, suffix_at)
        if after and len(hits) >= len(after):
            for k, at in zip(after, hits[len(hits) - len(after):]):
                cuts.append((at, k))
    else:
        kept = [k for k in range(n) if k not in anchored]
        hits = starts_in(0, suffix_at)
        if kept and len(hits) >= len(kept):
            for k, at in zip(kept, hits[len(hits) - len(kept):]):
                cuts.append((at, k))
    cuts.append((suffix_at, n))
    # keep the cuts in text order; a later cut never moves before an earlier one
    ordered: list[tuple[int, int]] = []
    for at, owner in cuts:
        if ordered and at < ordered[-1][0]:
            at = ordered[-1][0]
        ordered.append((at, owner))
    return ordered


def _merge_intervals(intervals: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, merged ``(start, end)`` intervals.

    >>> _merge_intervals([(5, 7), (0, 2), (1, 3), (3, 4)])
    [(0, 4), (5, 7)]
    """
    out: list[tuple[int, int]] = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def parts_from_text(text: str, ranges: list[tuple[int, int, int]], literal: list[tuple[int, int]],
                     owners: list[tuple[int, int]], special_re: regex.Pattern[str] | None) -> list[Part]:
    """Parts of a rendered template: message content, the special tokens of the template's own
    text (never inside content or look-alike ranges), and template text, each with its owner."""
    content = _merge_intervals([(s, e) for s, e, _ in ranges if e > s])
    protected = _merge_intervals(content + [(s, e) for s, e in literal if e > s])
    specials: dict[int, int] = {}
    if special_re is not None:
        starts = [s for s, _ in protected]
        for found in special_re.finditer(text):
            s, e = found.span()
            k = bisect.bisect_right(starts, s) - 1
            overlaps = (k >= 0 and protected[k][1] > s) or (k + 1 < len(protected) and protected[k + 1][0] < e)
            if not overlaps:
                specials[s] = e
    inside_special = sorted(specials.items())

    def in_special(at: int) -> bool:
        k = bisect.bisect_right(inside_special, (at, len(text) + 1)) - 1
        return k >= 0 and inside_special[k][0] < at < inside_special[k][1]

    bounds = {0, len(text)}
    for s, e in content:
        bounds.update((s, e))
    for s, e in literal:
        bounds.update((s, e))
    for s, e in specials.items():
        bounds.update((s, e))
    owner_at = []
    for at, owner in owners:
        at = min(at, len(text))
        while in_special(at):  # a turn never starts inside a special token
            at -= 1
        owner_at.append((at, owner))
        bounds.add(at)
    points = sorted(bounds)
    cut_points = [at for at, _ in owner_at]
    content_starts = [s for s, _ in content]
    parts: list[Part] = []
    for a, b in zip(points, points[1:]):
        if a == b:
            continue
        k = bisect.bisect_right(cut_points, a) - 1
        owner = owner_at[k][1] if k >= 0 else PREFIX
        c = bisect.bisect_right(content_starts, a) - 1
        if specials.get(a) == b:
            parts.append(Part(text[a:b], SPECIAL_PART, owner, True))
        elif c >= 0 and content[c][1] >= b:
            parts.append(Part(text[a:b], CONTENT_PART, owner))
        else:
            parts.append(Part(text[a:b], TEXT_PART, owner))
    return parts
