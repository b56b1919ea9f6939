"""The explorer's row layout and input pane over the document: partial relayouts equal full ones."""

from __future__ import annotations

import contextlib

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import BLOCK_TEXTS, small_blocks, texts

from tokscope.core.document.document import Document
from tokscope.sample_texts import read_sample

@settings(max_examples=300, deadline=None)
@given(old=texts, insert=texts, data=st.data(), width=st.integers(8, 30), size=st.sampled_from([1, 3, 1024]),
       mode=st.sampled_from(["text", "ids", "both"]))
def test_relayout_matches_full_layout(load, old, insert, data, width, size, mode):
    from tokscope.app.render import layout, relayout

    tok = load("o200k_base")
    start = data.draw(st.integers(0, len(old)))
    end = data.draw(st.integers(start, len(old)))
    new = old[:start] + insert + old[end:]
    with small_blocks(size):
        doc = Document.build(tok, old)
        rows = layout(doc, width, mode, False)
        edited = doc.edited(new)
    assert relayout(rows, doc, edited, width, mode, False) == layout(edited, width, mode, False)


def _layout_pieces_reference(doc: Document, width: int, mode: str) -> list[int]:
    """The ids/both row layout written plainly over flat lists (what render.layout_pieces does)."""
    from tokscope.app.render import IDS, piece_units, units_width

    ids, starts = list(doc.ids), list(doc.starts)
    tok = doc.tokenizer
    width = max(width, 8)
    rows, cur, last_start = [0], 0, -1
    for i, token_id in enumerate(ids):
        start = starts[i]
        w = len(str(token_id)) + 1 if mode == IDS else units_width(piece_units(tok.token_bytes(token_id), True)) + len(str(token_id)) + 2
        if cur + w > width and cur > 0 and start != last_start and start != rows[-1]:
            rows.append(start)
            cur = 0
        cur += w
        last_start = start
        if b"\n" in tok.token_bytes(token_id) and i + 1 < len(ids) and starts[i + 1] != rows[-1]:
            rows.append(starts[i + 1])
            cur = 0
    return rows


@settings(max_examples=100, deadline=None)
@given(text=BLOCK_TEXTS, width=st.integers(8, 30), mode=st.sampled_from(["ids", "both"]), size=st.sampled_from([2, 5, 1024]))
def test_layout_pieces_matches_the_plain_reference(load, text, width, mode, size):
    from tokscope.app.render import layout_pieces

    with small_blocks(size):
        doc = Document.build(load("o200k_base"), text)
    assert layout_pieces(doc, width, mode, False) == _layout_pieces_reference(doc, width, mode)


# ----- the input pane's caches and the early re-tokenization (speed paths of the explorer) ------


@pytest.mark.parametrize("soft_wrap", [True, False])
async def test_editor_caches_agree_with_textual_after_edits(load, soft_wrap):
    """The editor remembers its joined text, line widths and wrapped height between edits; after
    typing, pasting, deleting, undo and redo they equal what Textual computes from scratch."""
    from textual.document._document import Document
    from textual.document._wrapped_document import WrappedDocument

    from tokscope.app.app import ExplorerApp
    from tokscope.app.widgets.editor import from_editor

    text = "alpha\tbeta\r\nγάμμα\x85 👍 wide 你好\n\nlast line with more words" * 3
    app = ExplorerApp(text, encoding="o200k_base", palette="truecolor", tokenizer=load("o200k_base"))
    async with app.run_test(size=(100, 30)) as pilot:
        editor = app.editor
        editor.soft_wrap = soft_wrap
        await pilot.pause()

        def check():
            doc = editor.document
            assert doc.text == Document.text.fget(doc) == editor.text
            assert editor.real_text == text_now()
            assert doc.get_size(4) == Document.get_size(doc, 4)
            assert editor.wrapped_document.height == WrappedDocument.height.fget(editor.wrapped_document)

        def text_now():
            return from_editor("\n".join(editor.document.lines))

        check()
        assert editor.real_text == text
        editor.move_cursor((1, 3))
        for keys in (["x", "y"], ["enter"], ["backspace", "backspace"], ["tab"]):
            await pilot.press(*keys)
            check()
        editor.insert("new\nlines\there 一二三四五六七八九十一二三四五六七八九十一二三四五六七八九十一二三四五六七八九十\n", (0, 0))
        check()
        editor.delete((0, 2), (3, 1))
        check()
        editor.replace("Z" * 300, (2, 0), (2, 4))
        check()
        editor.undo()
        check()
        editor.redo()
        check()
        app.set_text("short")
        check()
        assert app.text == "short"


async def test_an_edit_re_tokenizes_before_the_next_frame(load):
    """The input pane hands each edit to the app as it happens (not a few event-loop turns later,
    after a frame showing only the input pane), and the Changed message that follows does not
    re-tokenize a second time."""
    from tokscope.app.app import ExplorerApp
    from helpers import settle

    app = ExplorerApp("Hello world", encoding="o200k_base", palette="truecolor", tokenizer=load("o200k_base"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        version = app._text_version
        app.editor.insert(" again", (0, 11))
        # no await: the pieces already follow the text
        assert app.doc.text == app.text == "Hello world again"
        assert app.doc.ids == app.tokenizer.encode("Hello world again")
        assert app._text_version == version + 1
        await settle(pilot)
        assert app._text_version == version + 1 and app.idle
        # no line-break stand-in in the text yet: the real text is the editor's text as is
        assert app.editor.document.flagged is False and app.editor.real_text is app.editor.text
        app.editor.insert("\r\x85", (0, 0))
        assert app.editor.document.flagged is True
        assert app.text == "\r\x85Hello world again" == app.doc.text


@settings(max_examples=100, deadline=None)
@given(old=BLOCK_TEXTS, edits=st.lists(st.tuples(BLOCK_TEXTS, st.integers(0, 10**6), st.integers(0, 6)), min_size=1, max_size=6),
       width=st.integers(8, 24), mode=st.sampled_from(["text", "ids", "both"]))
def test_relayout_after_a_run_of_edits_matches_full_layout(load, old, edits, width, mode):
    from tokscope.app.render import layout, relayout

    tok = load("o200k_base")
    with small_blocks(4):
        doc = Document.build(tok, old * 3)
        rows = layout(doc, width, mode, False)
        text = doc.text
        for insert, where, cut in edits:
            a = where % (len(text) + 1)
            text = text[:a] + insert + text[a + cut :]
            edited = doc.edited(text)
            rows = relayout(rows, doc, edited, width, mode, False) if edited is not doc else rows
            doc = edited
            assert rows == layout(doc, width, mode, False)



@settings(max_examples=100, deadline=None)
@given(old=BLOCK_TEXTS, edits=st.lists(st.tuples(BLOCK_TEXTS, st.integers(0, 10**6), st.integers(0, 6)), min_size=1, max_size=6),
       width=st.integers(8, 24))
def test_relayout_of_a_long_line_matches_full_layout(load, old, edits, width):
    """A long line is laid out again only from the rows an edit reached, until they meet the old
    rows (LONG_LINE made tiny here so the generated lines count as long)."""
    from tokscope.app import render
    from tokscope.app.render import layout, relayout

    saved, render.LONG_LINE = render.LONG_LINE, 4
    tok = load("gpt2")
    with small_blocks(4), contextlib.ExitStack() as stack:
        stack.callback(setattr, render, "LONG_LINE", saved)
        doc = Document.build(tok, (old * 3).replace("\n", " ") + "é👍")
        rows = layout(doc, width, "text", False)
        text = doc.text
        for insert, where, cut in edits:
            a = where % (len(text) + 1)
            text = text[:a] + insert.replace("\n", " ") + text[a + cut :]
            edited = doc.edited(text)
            rows = relayout(rows, doc, edited, width, "text", False) if edited is not doc else rows
            doc = edited
            assert rows == layout(doc, width, "text", False)


def test_a_last_line_one_cell_wider_than_the_view_is_wrapped(load):
    """Only a line's newline may hang past the width (it draws as ⏎ at the end of a full row);
    a last line with no newline that is one cell too wide wraps like any other."""
    from tokscope.app.render import layout

    tok = load("o200k_base")
    doc = Document.build(tok, "abcdefghij\n" + "x" * 8 + " yz")  # a full row plus its newline, then 11 cells
    rows = layout(doc, 10, "text", False)
    assert rows[:2] == [0, 11] and len(rows) == 3
    doc = Document.build(tok, "abcdefghij")
    assert layout(doc, 10, "text", False) == [0]
    doc = Document.build(tok, "abcdefghijk")
    assert len(layout(doc, 10, "text", False)) == 2
