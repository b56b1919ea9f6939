"""Helpers shared by the test modules (importable as ``helpers``: pytest puts ``tests/`` on the path)."""

from __future__ import annotations

import asyncio

from hypothesis import strategies as st

from tokscope.core.document import blocks
from tokscope.core.document.document import Document

ALPHABET = st.sampled_from(list("ab AB12 \n\t.,'é👍你\u0301-") + ["  ", "\n\n", "'s", "123456", "<|endoftext|>"])
texts = st.lists(ALPHABET, max_size=40).map("".join)


class small_blocks:
    """Within the block, docs are cut into blocks of ``size`` rows (so edits cross block bounds)."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __enter__(self):
        self.saved = blocks.BLOCK
        blocks.BLOCK = self.size

    def __exit__(self, *exc):
        blocks.BLOCK = self.saved


def flat(doc: Document) -> dict:
    return {name: list(getattr(doc, name)) for name in ("ids", "starts", "ends", "flags", "chunk_starts", "chunk_ends")}


#: characters the pattern's two Unicode versions disagree on (so the pinned pattern is used)
SUSPECTS = [chr(661), chr(2191), chr(8349)]
BLOCK_TEXTS = st.lists(st.sampled_from(list("ab AB12 \n\t.,'é👍你\u0301-") + ["  ", "\n\n", "'s", "123456"] + SUSPECTS),
                       max_size=60).map("".join)


# ----- text that finds the corners of tokenizers ---------------------------------------------------

#: strings where tokenizers disagree if any: line breaks, odd spaces, contractions in odd cases,
#: combining marks, ZWJ emoji, digits of several scripts, code points whose Unicode class moved,
#: lone surrogates, special-token look-alikes
TRICKY = [
    "\r\n", "\r", "\n", "\n\n", " \n", "  \n ", "\u00a0", "\u2028", "\u3000", "\u202f", "\x85", "\x0b", "\x0c",
    "\x1c", "\x1d", "\x1e", "\x1f", "\t", "   ", " ", "'s", "'S", "'LL", "'ll", "'Ll", "'re", "'VE", "'d", "'M",
    "'t", "'ſ", "ſ", "\u212a", "'\u212a", "’s", "'", "\"", "e\u0301", "\u0301\u0302", "a\u0308", "\u0915\u094d\u0937",
    "👨\u200d👩\u200d👧\u200d👦", "🏳\ufe0f\u200d🌈", "\u200d", "\ufe0f", "👍🏽", "0", "123", "1234567", "3.14",
    "１２３", "٣٤٥", "Ⅻ", "中文字", "한국어", "ไทย", "Ελληνικά", "Привет", "שלום", "مرحبا", "İı", "ß", "ǅ",
    "ʕ", "\u0558", "\u0c5c", "\u1acf", "\ua7cb", "\U00011de0", "\U0001e5d0", "\ud800", "\udfff", "\ud83d", "/", "//",
    "...", "!?", "$", "<|", "|>", "<|endoftext|>", "Hello", "HELLO", "hELLo", "CamelCase", "x86_64",
]


def unicode_texts(lookalikes: list[str] | tuple[str, ...] = (), max_parts: int = 24):
    """Text built from runs of any code point, the :data:`TRICKY` strings, whitespace, digits,
    contraction letters and ``lookalikes`` (a tokenizer's special tokens and near misses)."""
    parts = [
        st.text(st.characters(exclude_categories=()), max_size=6),  # any code point, lone surrogates too
        st.text(st.characters(codec="utf-8"), max_size=10),
        st.sampled_from(TRICKY),
        st.text(alphabet=" \t\r\n\u00a0\x0b\x0c", min_size=1, max_size=8),
        st.text(alphabet="0123456789", min_size=1, max_size=9),
        st.text(alphabet="aAsStTlLdDmMrReEvV'’ſ", min_size=1, max_size=8),
    ]
    if lookalikes:
        parts.append(st.sampled_from(sorted(lookalikes)))
    return st.lists(st.one_of(*parts), max_size=max_parts).map("".join)


def lookalikes_of(specials) -> list[str]:
    """Special tokens and strings one edit away from them (for :func:`unicode_texts`)."""
    out: set[str] = set()
    for special in specials:
        out.update({special, special[:-1], special[1:], special[:-2], special[2:], special.upper()})
    return sorted(out)


# ----- the explorer under Textual's Pilot (tests of every screen) --------------------------------


async def settle(pilot, timeout: float = 10.0) -> None:
    """Wait until the app has loaded its encoding and its pieces match the input pane's text.

    ``async with app.run_test() as pilot: await settle(pilot)``
    """
    app = pilot.app
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        await pilot.pause(0.02)
        if app.idle:
            await pilot.pause()
            return
    raise AssertionError(f"explorer did not settle: loading={app._loading} current={app._doc_current}")


async def idle(pilot, timeout: float = 20.0) -> None:
    """Wait until no worker runs (on any screen) and the explorer has caught up with its text.

    Screens that compute in workers (insights, training, merge tree, vocabulary) use this after a
    key press: ``await pilot.press("enter"); await idle(pilot)``.
    """
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        await pilot.pause(0.05)
        if not any(w.is_running for w in pilot.app.workers) and getattr(pilot.app, "idle", True):
            await pilot.pause(0.05)
            return
    raise AssertionError("workers did not finish")


def plot_text(plot) -> list[str]:
    """A plot widget's rows as plain text."""
    width, height = plot.size.width, plot.size.height
    return ["".join(t for t, _ in row) for row in plot.build(width, height)]
