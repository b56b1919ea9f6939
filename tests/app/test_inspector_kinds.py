"""The inspector for tokenizer.json tokenizers of every kind: the facts each kind has (merge rank
from the merge list, Unigram score, byte fallback, the vocabulary's spelling, continuation, the
unknown token and what it covers, added tokens, the chunk as the model saw it), fitted to the
five rows it has at 80x24, and gathered in a worker without ever showing another piece's facts.
Then the views that show tokens on the same kinds: vocabulary search (F4), languages (F6) and
insights (F7) on WordPiece (bert), byte-fallback BPE (llama2) and Unigram (t5).

The files are built by ``tests/core/hf_files.py`` (a family whose package is missing skips).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import DataTable, Input

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))

import hf_files
from helpers import idle, settle

from tokscope.app.app import ExplorerApp
from tokscope.app.widgets.inspector import Inspector, inspect
from tokscope.core.document.document import Document
from tokscope.core.explain.facts import piece_facts, token_facts
from tokscope.sample_texts import read_sample
from tokscope.sources import registry

TEXT = "tokenization naïve ☃ hello 🦜 unbelievable Hello wörld"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kinds")
    made: dict[str, str] = {}

    def path(name: str) -> str:
        if name not in made:
            try:
                made[name] = str(hf_files.save(name, folder))
            except hf_files.Missing as exc:
                pytest.skip(f"{name}: {exc}")
        return made[name]

    return path


def app_for(path: str, text: str = TEXT) -> ExplorerApp:
    return ExplorerApp(text, tokenizer=registry.load(path), palette="truecolor")


def shown(app) -> str:
    return str(app.query_one(Inspector).render())


async def look_at(pilot, spelling: str, nth: int = 0) -> str:
    """Select the ``nth`` piece whose vocabulary spelling is ``spelling``; the inspector's text."""
    app = pilot.app
    tok = app.tokenizer
    found = [i for i, t in enumerate(app.doc.ids) if tok.token_str(t) == spelling]
    assert len(found) > nth, (spelling, [tok.token_str(t) for t in app.doc.ids])
    app.select_piece(found[nth])
    await idle(pilot)
    return shown(app)


async def test_bert_wordpiece_continuation_unknown_and_normalized_form(files):
    app = app_for(files("bert"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        text = await look_at(pilot, "##ization")
        assert "vocab ##ization" in text and "continues a word (##)" in text
        assert "rank" not in text  # WordPiece has no merges
        text = await look_at(pilot, "token")
        assert "starts a word" in text
        text = await look_at(pilot, "naive")
        assert "model saw naive" in text  # lowercased, accents stripped
        text = await look_at(pilot, "[UNK]")
        assert "unknown token" in text and "covers ☃" in text and "SNOWMAN" in text
        assert "e2:L 98:C 83:C" in text  # the bytes of the text it covers, not of "[UNK]"


async def test_llama2_merge_rank_is_from_the_merge_list_and_bytes_fall_back(files):
    app = app_for(files("llama2"))
    tok = app.tokenizer
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        text = await look_at(pilot, "▁hell")
        facts = token_facts(tok, tok.token_to_id("▁hell"))
        assert facts.merge_rank is not None and facts.merge_rank != facts.id
        assert f"rank {facts.merge_rank} " in text and f"rank {facts.id} " not in text
        assert "vocab ▁hell" in text and "leading space: yes" in text
        text = await look_at(pilot, "<0xF0>")
        assert "byte 0xF0 (byte fallback)" in text and "vocab <0xF0>" in text
        assert "PARROT (byte 1 of 4)" in text
        text = await look_at(pilot, "o")
        assert "no merge: in the alphabet" in text
        # no pre-tokenizer: the whole text is one chunk, shown cut on its line
        assert "model saw ▁tokenization▁" in text


async def test_t5_unigram_score_shared_character_and_unknown(files):
    app = app_for(files("t5"))
    tok = app.tokenizer
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        text = await look_at(pilot, "▁hello")
        score = token_facts(tok, tok.token_to_id("▁hello")).score
        assert f"score {score:.2f}" in text and "model saw ▁hello" in text
        text = await look_at(pilot, "<unk>")
        assert "unknown token" in text and "covers ☃" in text
        # the ▁ Metaspace put before ☃ has the character's offsets: it shares it, its bytes are whole
        text = await look_at(pilot, "▁")
        assert "shares ☃ with the next piece" in text and "partial" not in text
        assert "decoded U+0020" in text


async def test_hf_byte_level_bpe_shows_the_merge_rank_and_the_byte_level_spelling(files):
    app = app_for(files("gpt2"))
    tok = app.tokenizer
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        text = await look_at(pilot, "Ġhello")
        rank = token_facts(tok, tok.token_to_id("Ġhello")).merge_rank
        assert rank is not None and f"rank {rank} " in text
        assert "vocab Ġhello" in text and "model saw Ġhello" in text


async def test_added_tokens_say_so(files):
    app = app_for(files("bert"), "Hello wörld and [SEP]")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        text = await look_at(pilot, "hello world")  # a normalized added token of the test family
        assert "added token" in text and "(added)" in text and "Hello·wörld" in text


async def test_the_openai_inspector_is_unchanged():
    app = ExplorerApp("Hello world", encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.select_piece(1)
        await pilot.pause()
        text = shown(app)
        assert "rank 2375" in text and "vocab" not in text and "model saw" not in text
        assert app.query_one(Inspector).facts is None  # never asks the core for facts


async def test_fast_moves_end_on_the_last_piece_facts(files):
    """Moving faster than the facts come never leaves another piece's facts on screen."""
    app = app_for(files("t5"), read_sample("default.txt"))
    tok = app.tokenizer
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.token_view.focus()
        await pilot.press(*["right"] * 12)
        await idle(pilot)
        index = app.selected_index
        doc = app.doc
        facts = piece_facts(tok, doc.text, doc.piece(index), doc.chunk_of(index))
        inspector = app.query_one(Inspector)
        assert inspector.facts == facts
        size = inspector.content_size
        assert str(inspector.render()) == inspect(doc, index, size.width, facts, size.height).plain


@pytest.mark.parametrize("family", ["gpt2", "roberta", "llama3", "llama2", "gemma", "bert", "t5",
                                    "xlmr-bytefallback", "wordlevel", "o200k_base", "cl100k_base"])
def test_every_piece_fits_five_rows_at_80_columns(files, family):
    tok = registry.load(family if family.endswith("_base") else files(family))
    text = (read_sample("default.txt") + TEXT + " ﬁne 12345 中文字 Straße\t<unk> [UNK] ##ab " + " " * 90
            + "-" * 90 + "\n" + "x" * 90 + "\U0001d4d0\U0001d4d1" * 30)
    doc = Document.build(tok, text)
    console = Console(width=76, color_system=None)
    for i in range(len(doc.ids)):
        facts = piece_facts(tok, doc.text, doc.piece(i), doc.chunk_of(i))
        lines = inspect(doc, i, 76, facts, rows=5).wrap(console, 76)
        assert len(lines) <= 5, (family, i, tok.token_str(doc.ids[i]), [line.plain for line in lines])


def test_snapshot_llama2_byte_fallback_80x24(snap_compare, files):
    path = files("llama2")

    async def run_before(pilot):
        pilot.app.editor.cursor_blink = False
        await settle(pilot)
        await look_at(pilot, "<0xF0>")

    assert snap_compare(app_for(path), terminal_size=(80, 24), run_before=run_before)


def test_snapshot_bert_unknown_80x24(snap_compare, files):
    path = files("bert")

    async def run_before(pilot):
        pilot.app.editor.cursor_blink = False
        await settle(pilot)
        await look_at(pilot, "[UNK]")

    assert snap_compare(app_for(path), terminal_size=(80, 24), run_before=run_before)


# ----- the views on every kind: vocabulary search (F4), languages (F6), insights (F7) -------------

VIEW_FAMILIES = ["bert", "llama2", "t5"]


async def open_view(pilot, key: str):
    await settle(pilot)
    pilot.app.token_view.focus()
    await pilot.press(key)
    await idle(pilot)
    return pilot.app.screen


async def search(pilot, screen, mode: str, query: str) -> list[tuple[str, ...]]:
    """Search the vocabulary screen; its rows as plain strings."""
    screen.query_one("#voc-mode").value = mode
    screen.query_one("#voc-query", Input).value = query
    await pilot.pause(0.2)  # the debounce
    await idle(pilot)
    table = screen.query_one(DataTable)
    return [tuple(str(cell) for cell in table.get_row_at(i)) for i in range(table.row_count)]


@pytest.mark.parametrize(("family", "spelling"), [("bert", "##ing"), ("llama2", "▁the"), ("t5", "▁the")])
async def test_vocabulary_search_finds_spellings_and_bytes_for_every_kind(files, family, spelling):
    from tokscope.app.screens.vocab import VocabScreen
    from tokscope.app.screens.why import WhyScreen

    app = app_for(files(family))
    tok = app.tokenizer
    token_id = tok.token_to_id(spelling)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_view(pilot, "f4")
        assert isinstance(screen, VocabScreen)
        title = str(screen.query_one("#voc-title").render())
        assert tok.kind in title and f"{tok.n_vocab:,} ids" in title
        rows = await search(pilot, screen, "regex", f"^{spelling}$")
        assert [row[0] for row in rows] == [str(token_id)]
        assert rows[0][3] == spelling  # the vocabulary column
        assert rows[0][4] == tok.token_bytes(token_id).hex(" ")
        # a substring is looked for in the bytes: the spelling's marks are not there
        rows = await search(pilot, screen, "substring", spelling)
        status = str(screen.query_one("#voc-status").render())
        if not rows:
            assert "regex mode" in status
        rows = await search(pilot, screen, "substring", "the")
        assert rows and all(b"the" in bytes.fromhex(row[4].replace(" ", "")) for row in rows)
        rows = await search(pilot, screen, "id", str(token_id))
        assert rows[0][0] == str(token_id)
        target = "merge tree" if tok.kind.endswith("BPE") else "why view"
        assert f"Enter: {target}" in str(screen.query_one("#voc-status").render())
        screen.query_one(DataTable).focus()
        await pilot.press("enter")
        await idle(pilot)
        assert isinstance(app.screen, WhyScreen) and app.screen.token_id == token_id


async def test_vocabulary_finds_a_byte_fallback_token_by_spelling_and_by_hex(files):
    app = app_for(files("llama2"))
    tok = app.tokenizer
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_view(pilot, "f4")
        rows = await search(pilot, screen, "regex", "^<0xE2>$")
        assert len(rows) == 1 and rows[0][3] == "<0xE2>" and rows[0][4] == "e2"
        rows = await search(pilot, screen, "hex", "e2")
        assert str(tok.token_to_id("<0xE2>")) in [row[0] for row in rows]


@pytest.mark.parametrize("family", VIEW_FAMILIES)
async def test_languages_count_with_the_explorers_tokenizer_of_every_kind(files, family):
    from tokscope.app.screens.languages import LanguagesScreen
    from tokscope.sample_texts import language_text

    app = app_for(files(family))
    tok = app.tokenizer
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_view(pilot, "f6")
        assert isinstance(screen, LanguagesScreen)
        tbl = screen.table_data
        assert tbl is not None and not screen.failed
        assert tbl.encodings[0] == tok.name and len(tbl.encodings) == 3
        for row in tbl.rows[:5]:
            assert row.counts[0] == len(tok.encode_ordinary(language_text(row.code)))
        assert "cannot load" not in str(screen.query_one("#lang-note").render())
        chart = str(screen.query_one("#lang-chart").render())
        assert "English" in chart and "█" in chart


async def test_languages_keeps_the_defaults_for_a_default_encoding():
    from tokscope.core.insights.compare import DEFAULT_COMPARE

    app = ExplorerApp("x", encoding="cl100k_base", palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_view(pilot, "f6")
        assert screen.table_data.encodings == DEFAULT_COMPARE


@pytest.mark.parametrize("family", VIEW_FAMILIES)
async def test_insights_for_every_kind(files, family):
    from tokscope.app.screens.insights import InsightsScreen

    app = app_for(files(family), read_sample("default.txt"))
    tok = app.tokenizer
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_view(pilot, "f7")
        assert isinstance(screen, InsightsScreen)
        stats = screen.stats
        assert stats is not None and screen.forms is not None
        assert stats.tokens == len(app.doc.ids) and stats.coverage.n_vocab == tok.n_vocab
        summary = str(screen.query_one("#ins-summary").render())
        assert "cannot compute" not in summary and f"{stats.tokens:,} tokens" in summary
        top = str(screen.query_one("#ins-top").render())
        assert str(stats.top[0].id) in top
        await pilot.press("n", "n")
        await idle(pilot)
        assert screen.form == "NFD"
        assert "tokens" in str(screen.query_one("#ins-norm-counts").render())
