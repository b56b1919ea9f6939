"""Helpers shared by the test modules (importable as ``helpers``: pytest puts ``tests/`` on the path)."""

from __future__ import annotations

from hypothesis import strategies as st

from tokscope.core import blocks
from tokscope.core.document import Document

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
