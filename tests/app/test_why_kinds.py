"""The why screen for every kind that is not byte-level BPE from ranks: Hugging Face tokenizer.json
files of each family (built by ``tests/core/hf_files.py``, never fetched), opened through the
explorer as a user opens them (``encoding=<path>``). WordPiece's greedy steps and why a word became
[UNK]; byte-fallback BPE's bytes and its merge replay and tree with ranks from the merge list;
Unigram's best segmentation beside the next-best ones; the form the model saw; keys that do not
apply are off; snapshots at 80x24."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from textual.widgets import Input, Static

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))  # hf_files lives with the core tests

import hf_files
from helpers import idle

from tokscope.app.app import ExplorerApp
from tokscope.app.screens.why import NO_CUTOFF, MergeTree, WhyScreen
from tokscope.core.explain import why as core_why
from tokscope.core.explain.merge_trees import merge_tree, walk
from tokscope.sources.registry import load

TEXT = "naïve ☃ hello 🦜 unbelievable"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """``name -> path`` of the families these tests open (a family whose package is missing skips)."""
    folder = tmp_path_factory.mktemp("hf")
    out = {}
    for name in ("bert", "llama2", "t5", "wordlevel"):
        try:
            out[name] = hf_files.save(name, folder)
        except hf_files.Missing as exc:
            out[name] = exc
    return out


def path_of(files, name: str) -> str:
    found = files[name]
    if isinstance(found, Exception):
        pytest.skip(str(found))
    return str(found)


def make(files, name: str, text: str = TEXT) -> ExplorerApp:
    return ExplorerApp(text, encoding=path_of(files, name), palette="truecolor")


async def ready(pilot):
    """Wait until the explorer has loaded its file and tokenized the text; its tokenizer."""
    await idle(pilot)
    assert pilot.app.tokenizer is not None
    return pilot.app.tokenizer


async def open_why(pilot, token_id: int) -> WhyScreen:
    """Select the first piece of ``token_id`` and press F3 in the token view."""
    app = pilot.app
    await idle(pilot)
    index = list(app.doc.ids).index(token_id)
    app.select_piece(index)
    await pilot.pause()
    app.token_view.focus()
    await pilot.press("f3")
    await idle(pilot)
    screen = app.screen
    assert isinstance(screen, WhyScreen)
    return screen


def pane_text(screen: WhyScreen) -> str:
    return str(screen.query_one("#why-explain", Static).render())


def tree_labels(screen: WhyScreen) -> list[tuple[int, str]]:
    tree = screen.query_one(MergeTree)
    out, stack = [], [tree.root]
    while stack:
        n = stack.pop()
        out.append((n.data, str(n.label)))
        stack.extend(reversed(n.children))
    return out


# ----- WordPiece ---------------------------------------------------------------------------------


async def test_bert_unknown_character_says_why_it_became_unk(files):
    app = make(files, "bert")
    async with app.run_test(size=(100, 30)) as pilot:
        tok = await ready(pilot)
        unk = tok.unknown_id
        screen = await open_why(pilot, unk)
        w = screen.why
        assert w is not None and screen.why.ranks is None
        assert w.method == "WordPiece" and w.chunk.text == "☃" and w.tokens == (unk,)
        assert w.wordpiece.reason == "no_match" and w.wordpiece.failed_at == 0
        text = pane_text(screen)
        assert f'no match at character 0: "☃" is not in the vocabulary, so the whole word "☃" is [UNK] {unk}' in text
        assert f"pieces [UNK] {unk}" in text
        assert w.summary in text
        # no merges: the tree is the token alone, and says so
        tree = screen.query_one(MergeTree)
        assert tree.root.data == unk and not tree.root.allow_expand
        assert tree.border_title == f"token {unk}" and tree.border_subtitle == "WordPiece: no merges"
        assert "unknown token" in str(tree.root.label)
        assert "WordPiece" in str(screen.query_one("#why-title", Static).render())


async def test_bert_keys_that_do_not_apply_are_off_and_say_so(files):
    app = make(files, "bert")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_why(pilot, (await ready(pilot)).unknown_id)
        assert not screen.query_one("#why-cutoff", Input).display
        assert str(screen.query_one("#why-cut-label", Static).render()) == NO_CUTOFF
        for action in ("focus_cutoff", "step", "step_to", "used_in"):
            assert screen.check_action(action, ()) is False
        assert screen.check_action("vocabulary", ()) is True
        before = pane_text(screen)
        await pilot.press("c", "n", "e", "u")
        await idle(pilot)
        assert not isinstance(screen.focused, Input) and screen.position == 0
        assert pane_text(screen) == before
        assert not screen.query_one("#why-used").display
        footer_keys = {b.binding.key for b in screen.active_bindings.values() if b.binding.show and b.enabled}
        assert not footer_keys & {"c", "n", "p", "u"}


async def test_bert_greedy_steps_and_the_form_after_the_normalizer(files):
    app = make(files, "bert", "Naïve tokenizers")
    async with app.run_test(size=(100, 30)) as pilot:
        tok = await ready(pilot)
        screen = await open_why(pilot, tok.encode("tokenizers")[1])  # ##izer
        w = screen.why
        assert [s.text for s in w.wordpiece.steps] == ["token", "##izer", "##s"]
        text = pane_text(screen)
        assert "greedy longest match from the left (words up to 100 characters)" in text
        for k, step in enumerate(w.wordpiece.steps, 1):
            assert f"{k:>2} [{step.start}:{step.end}] {step.text} {step.token}" in text
        assert "model saw" not in text  # "tokenizers" is what the model saw
        screen.query_one(MergeTree).focus()
        await pilot.press("escape")
        await idle(pilot)
        naive = tok.encode("Naïve")[0]
        screen = await open_why(pilot, naive)
        assert screen.why.chunk.text == "Naïve" and screen.why.form == "naive"
        assert "model saw naive" in pane_text(screen)


async def test_bert_word_over_max_input_chars_per_word(files):
    app = make(files, "bert", "a" * 120)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_why(pilot, (await ready(pilot)).unknown_id)
        assert screen.why.wordpiece.reason == "too_long"
        assert "120 characters, more than max_input_chars_per_word (100)" in pane_text(screen)


# ----- BPE from a merge list (byte fallback) -----------------------------------------------------


async def test_llama2_byte_fallback_shows_the_bytes_and_why(files):
    app = make(files, "llama2", "🦜")
    async with app.run_test(size=(100, 30)) as pilot:
        tok = await ready(pilot)
        ids = tok.encode("🦜")
        byte_ids = [t for t in ids if tok.token_str(t).startswith("<0x")]
        assert [tok.token_str(t) for t in byte_ids] == ["<0xF0>", "<0x9F>", "<0xA6>", "<0x9C>"]
        screen = await open_why(pilot, byte_ids[0])
        w = screen.why
        assert w.method == "BPE" and [s.kind for s in w.bpe.initial].count("byte") == 4
        text = pane_text(screen)
        # the command line's sentence (tokscope.core.explain.sentences), then each byte token with its id
        assert 'byte fallback "🦜" is not in the vocabulary: its UTF-8 bytes ‹f0 9f a6 9c› are 4 byte tokens' in text
        assert "  ".join(f"‹{b:02x}› {t}" for b, t in zip("🦜".encode(), byte_ids)) in text
        assert "<0x" not in text.split("why")[0]  # the bytes in the one notation, not the vocabulary's names
        assert "model saw ▁🦜" in text  # the normalizer's ▁
        assert str(screen.query_one(MergeTree).root.label) == f"{byte_ids[0]} ‹f0› byte"


async def test_llama2_merge_replay_and_tree_ranks_from_the_merge_list(files):
    app = make(files, "llama2", "hello")
    async with app.run_test(size=(100, 30)) as pilot:
        tok = await ready(pilot)
        first = tok.encode("hello")[0]  # ▁hell
        screen = await open_why(pilot, first)
        tree = screen.query_one(MergeTree)
        assert tree.border_title == f"merge tree of {first}" and tree.root.allow_expand
        await pilot.press("a")
        await idle(pilot)
        expected = {n.id: n for _, n in walk(merge_tree(tok, first))}
        labels = tree_labels(screen)
        assert {i for i, _ in labels} == set(expected)
        for token_id, label in labels:
            rank = expected[token_id].merge_rank
            assert (f" rank {rank}" in label) == (rank is not None), label
        assert expected[first].merge_rank is not None
        # the replay: each step's pairs with their ranks in the merge list, the lowest merged
        replay = screen.why.bpe
        assert replay.steps and screen.total_steps() == len(replay.steps)
        await pilot.press("n")
        step = replay.steps[0]
        text = pane_text(screen)
        assert f"step 1 of {len(replay.steps)}" in text
        merged = tok.token_str(step.rule.result)
        assert f"→ {merged}  rank {step.rule.rank} (the lowest)" in text
        for cand in step.candidates:
            if cand.rank is not None:
                assert f"{tok.token_str(cand.left)}+{tok.token_str(cand.right)} {cand.rank}" in text
        await pilot.press("e")
        assert screen.position == len(replay.steps)
        assert screen.query_one("#why-scroll").border_title == f"explain · step {len(replay.steps)}/{len(replay.steps)}"


async def test_llama2_token_picked_from_the_tree_is_explained_by_its_spelling(files):
    app = make(files, "llama2", "hello")
    async with app.run_test(size=(100, 30)) as pilot:
        tok = await ready(pilot)
        first = tok.encode("hello")[0]
        screen = await open_why(pilot, first)
        await pilot.press("down", "down", "enter")  # the second parent
        await idle(pilot)
        child = merge_tree(tok, first).children[1].id
        assert screen.token_id == child and not screen.from_text
        assert screen.why.tokens == (child,)
        # the spelling as the model sees it, not normalized again ("hell", not "▁hell")
        assert screen.why.form == tok.token_str(child) == core_why.explain_token(tok, child).form
        assert "its own spelling" in str(screen.query_one("#why-title", Static).render())


async def test_llama2_moving_within_one_chunk_keeps_its_explanation(files):
    """Llama 2 has no pre-tokenizer: a paragraph is one chunk, replayed once, not per piece."""
    app = make(files, "llama2", "hello there friend")
    async with app.run_test(size=(100, 30)) as pilot:
        tok = await ready(pilot)
        ids = list(app.doc.ids)
        screen = await open_why(pilot, ids[0])
        found = screen.why
        assert found.chunk.text == "hello there friend" and found.tokens == tuple(ids)
        await pilot.press("n", "n")
        app.select_piece(len(ids) - 1)
        await idle(pilot)
        assert screen.token_id == ids[-1] and screen.query_one(MergeTree).root.data == ids[-1]
        assert screen.why is found and screen.position == 2  # not worked out again, still at step 2
        app.set_text("hello there")
        await idle(pilot)
        assert screen.why is not found and screen.why.chunk.text == "hello there"
        assert screen.why.tokens == tuple(tok.encode("hello there"))


async def test_llama2_a_long_chunk_is_shown_cut(files):
    from tokscope.app.screens.why import MAX_CHARS, MAX_SYMBOLS

    text = "word " * 600  # one chunk (no pre-tokenizer), over the replay's limit of symbols
    app = make(files, "llama2", text)
    async with app.run_test(size=(100, 30)) as pilot:
        tok = await ready(pilot)
        screen = await open_why(pilot, app.doc.ids[0])
        assert not screen.why.bpe.replayed and screen.total_steps() == 0
        shown = pane_text(screen)
        assert f"{len(screen.why.bpe.initial)} symbols: too long to replay step by step" in shown
        assert f"… {len(text) - MAX_CHARS:,} more characters" in shown
        assert f"… and {len(tok.encode(text)) - MAX_SYMBOLS} more" in shown


# ----- Unigram ------------------------------------------------------------------------------------


async def test_t5_best_segmentation_beside_the_next_best(files):
    app = make(files, "t5", "unbelievable")
    async with app.run_test(size=(100, 30)) as pilot:
        tok = await ready(pilot)
        screen = await open_why(pilot, tok.encode("unbelievable")[0])
        u = screen.why.unigram
        assert u is not None and len(u.alternatives) == core_why.NBEST
        text = pane_text(screen)
        assert f"best {u.best.score:8.3f}          {' + '.join(u.best.pieces)}" in text
        for k, seg in enumerate(u.alternatives):
            label = "next " if k == 0 else "     "
            line = f"{label}{seg.score:8.3f} {seg.score - u.best.score:7.3f}  {' + '.join(seg.pieces)}"
            assert line in text, line
        scores = " + ".join(f"{p} {tok.model.score(i):.3f}" for p, i in zip(u.best.pieces, u.best.ids))
        assert f"scores {scores} = {u.best.score:.3f}" in text
        assert "model saw ▁unbelievable" in text
        assert screen.query_one(MergeTree).border_subtitle == "Unigram: no merges"


async def test_t5_unknown_character_is_an_unknown_piece_with_its_score(files):
    app = make(files, "t5", "☃")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_why(pilot, (await ready(pilot)).unknown_id)
        u = screen.why.unigram
        text = pane_text(screen)
        assert f'unknown "☃" is not in the vocabulary: an unknown piece scored {u.unk_score:.3f}' in text
        assert "byte fallback" not in text  # T5 has none
        assert "next   none: no other segmentation was found" in text


async def test_tokens_picked_elsewhere_are_explained_by_their_spelling(files):
    app = make(files, "t5", "the end")
    async with app.run_test(size=(100, 30)) as pilot:
        tok = await ready(pilot)
        screen = await open_why(pilot, tok.encode("the end")[0])
        hello = tok.token_to_id("▁hello")
        app.open_token(hello, source="test")
        await idle(pilot)
        assert screen.token_id == hello and not screen.from_text
        assert screen.why.form == "▁hello" and screen.why.unigram.best.pieces == ("▁hello",)
        assert "its own spelling" in str(screen.query_one("#why-title", Static).render())
    app = make(files, "bert", "tokenizers")
    async with app.run_test(size=(100, 30)) as pilot:
        tok = await ready(pilot)
        screen = await open_why(pilot, tok.encode("tokenizers")[0])
        izer = tok.token_to_id("##izer")
        app.open_token(izer, source="test")
        await idle(pilot)
        assert screen.token_id == izer and screen.why.wordpiece is None
        assert "'##izer' continues a word" in pane_text(screen)


# ----- switching kinds ------------------------------------------------------------------------------


async def test_a_cutoff_set_for_ranks_does_not_break_another_kind(files, notes):
    bert = path_of(files, "bert")
    app = ExplorerApp("hello there", tokenizer=load("gpt2"), palette="truecolor")
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        app.select_piece(0)
        app.token_view.focus()
        await pilot.press("f3")
        await idle(pilot)
        screen = app.screen
        screen.set_cutoff(100)
        await idle(pilot)
        assert screen.why.ranks is not None and "ranks below 100" in pane_text(screen)
        app.switch_encoding(bert)
        await idle(pilot)
        assert app.tokenizer.kind == "WordPiece"
        assert screen.why is not None and screen.why.tokens == tuple(app.tokenizer.encode("hello"))
        assert not screen.query_one("#why-cutoff", Input).display
        assert not [m for m, severity in notes if severity == "error"]
        app.switch_encoding("gpt2")
        await idle(pilot)
        assert screen.query_one("#why-cutoff", Input).display and screen.max_rank == 100
        assert screen.why.ranks is not None and all(s.rank < 100 for s in screen.why.ranks.steps)


# ----- readable --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "text", "pick"), [("bert", TEXT, "unk"), ("llama2", TEXT, "<0xF0>"),
                                                   ("t5", TEXT, "▁hello")])
async def test_every_text_drawn_reaches_4_5_to_1_contrast(files, name, text, pick):
    from test_newcomer import border_cells, contrast, drawn_cells, is_graphic

    app = make(files, name, text)
    async with app.run_test(size=(80, 24)) as pilot:
        tok = await ready(pilot)
        token_id = tok.unknown_id if pick == "unk" else tok.token_to_id(pick)
        await open_why(pilot, token_id)
        cells = drawn_cells(app)
        bad = [(t, fg, bg, round(contrast(fg, bg), 2)) for t, fg, bg in cells
               if not is_graphic(t) and contrast(fg, bg) < 4.5]
        assert not bad, bad[:8]
        assert not [c for c in border_cells(cells) if contrast(c[1], c[2]) < 3]


# ----- snapshots -----------------------------------------------------------------------------------


def test_snapshot_bert_unknown_80x24(snap_compare, files):
    async def run_before(pilot):
        await open_why(pilot, (await ready(pilot)).unknown_id)

    assert snap_compare(make(files, "bert"), terminal_size=(80, 24), run_before=run_before)


def test_snapshot_llama2_byte_fallback_80x24(snap_compare, files):
    async def run_before(pilot):
        await open_why(pilot, (await ready(pilot)).token_to_id("<0xF0>"))

    assert snap_compare(make(files, "llama2", "hi 🦜"), terminal_size=(80, 24), run_before=run_before)
