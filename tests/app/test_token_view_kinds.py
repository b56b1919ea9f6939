"""The token view for every kind of tokenizer: the original text drawn under each piece, the
unknown token as the text it stands for, byte-fallback bytes grouped under their character,
Unigram's ``▁`` before an unknown character as a mark, text no token covers as a gap, and the
template's tokens at the ends (Ctrl+N), marked as added."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("tokenizers")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))

import hf_files  # noqa: E402
from helpers import settle  # noqa: E402
from test_newcomer import contrast, drawn_cells, is_graphic  # noqa: E402

from tokscope.app.app import ExplorerApp  # noqa: E402

TEXT = "naïve  ☃ hello 🦜 unbelievable\nThe quick brown fox"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kinds")
    out = {}
    for name in ("bert", "t5", "llama2"):
        try:
            out[name] = str(hf_files.save(name, folder))
        except hf_files.Missing as exc:
            pytest.skip(str(exc))
    return out


def row_texts(view) -> list[str]:
    return [view._render_row(r)[0].text for r in range(len(view.rows))]


def styles_of(view, row: int, glyph: str):
    return [seg.style for seg in view._render_row(row)[0] if seg.text == glyph]


async def test_wordpiece_draws_the_original_text_with_its_gaps_and_unknowns(files):
    app = ExplorerApp(TEXT, encoding=files["bert"], palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = app.token_view
        # every character of the text is drawn: "naïve" (the model saw "naive"), the spaces no
        # token covers, and "☃" and "🦜" that became [UNK]
        assert row_texts(view) == ["naïve  ☃ hello 🦜 unbelievable", "The quick brown fox"]
        pal = view.palette
        assert styles_of(view, 0, "☃") == [pal.unknown] and styles_of(view, 0, "🦜") == [pal.unknown]
        assert all(style == pal.gap for style in styles_of(view, 0, " "))
        assert "[UNK]" not in "".join(row_texts(view))
        await pilot.press("ctrl+t", "ctrl+t")  # both: the bytes each token adds, then its id
        await settle(pilot)
        both = " ".join(row_texts(view))
        assert "·naive 15743" in both and "☃ 100" in both and "🦜 100" in both


async def test_unigram_marks_the_metaspace_before_an_unknown_character(files):
    app = ExplorerApp(TEXT, encoding=files["t5"], palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = app.token_view
        first = row_texts(view)[0]
        assert first.startswith("naïve") and "▁☃" in first and "▁🦜" in first and "hello" in first
        pal = view.palette
        assert styles_of(view, 0, "☃") == [pal.unknown]
        assert any(style is not None and style.italic for style in styles_of(view, 0, "▁"))


async def test_byte_fallback_draws_the_bytes_under_their_character(files):
    app = ExplorerApp(TEXT, encoding=files["llama2"], palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        first = row_texts(app.token_view)[0]
        assert "‹f0›‹9f›‹a6›‹9c›🦜" in first and first.startswith("naïve")


async def test_the_template_toggle_draws_its_tokens_at_the_ends_and_counts_them(files):
    app = ExplorerApp(TEXT, encoding=files["bert"], palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = app.token_view
        width = view.layout_width
        await pilot.press("ctrl+n")
        await settle(pilot)
        rows = row_texts(view)
        assert rows[0].startswith("[CLS] naïve") and rows[-1].endswith("fox [SEP]")
        assert styles_of(view, 0, "[CLS]") == [view.palette.added]
        assert view.layout_width == width - len("[SEP] ")  # room for the template's tokens
        assert max(len(r) for r in rows) <= view.scrollable_content_region.width
        from tokscope.app.widgets.status import StatusLine

        assert "template +2" in str(app.query_one(StatusLine).render())
        await pilot.press("ctrl+t")
        await settle(pilot)
        rows = row_texts(view)
        assert rows[0].startswith("101 ") and rows[-1].endswith(" 102")
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert not row_texts(view)[0].startswith("101 ")


async def test_a_tokenizer_without_a_template_says_so(notes):
    app = ExplorerApp("hi there", encoding="o200k_base")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert any("has no template" in message for message, _ in notes)
        assert row_texts(app.token_view) == ["hi there"]


@pytest.mark.parametrize("name", ["bert", "t5", "llama2"])
async def test_every_kind_is_drawn_readably(files, name):
    app = ExplorerApp(TEXT, encoding=files[name], palette="truecolor")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n", "ctrl+g")
        await settle(pilot)
        cells = drawn_cells(app)
        bad = [(t, fg, bg, round(contrast(fg, bg), 2)) for t, fg, bg in cells if not is_graphic(t) and contrast(fg, bg) < 4.5]
        assert not bad, bad[:8]


def test_snapshot_wordpiece_with_template_and_whitespace_80x24(snap_compare, files):
    async def ready(pilot):
        pilot.app.editor.cursor_blink = False
        await settle(pilot)
        await pilot.press("ctrl+n", "ctrl+g")
        await settle(pilot)

    assert snap_compare(ExplorerApp(TEXT, encoding=files["bert"], palette="truecolor"), terminal_size=(80, 24), run_before=ready)


def test_snapshot_unigram_both_mode_80x24(snap_compare, files):
    async def ready(pilot):
        pilot.app.editor.cursor_blink = False
        await settle(pilot)
        await pilot.press("ctrl+t", "ctrl+t")
        await settle(pilot)

    assert snap_compare(ExplorerApp(TEXT, encoding=files["t5"], palette="truecolor"), terminal_size=(80, 24), run_before=ready)


async def test_compare_takes_the_explorers_tokenizer_loaded_from_a_file(files):
    from helpers import idle

    app = ExplorerApp(TEXT, encoding=files["bert"], palette="truecolor")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.open_view("compare")
        await idle(pilot)
        screen = app.screen
        first = screen.slots[0]
        assert first.name == "bert" and first.error is None and first.tokenizer is app.tokenizer
        assert list(first.seg.ids) == app.tokenizer.encode(TEXT)
