"""The why screen: the lazy merge-tree pane, "used in", the explain pane stepping through the merge
replay, the rank cut-off, tokens picked elsewhere, and snapshots."""

from __future__ import annotations


import pytest
from textual.widgets import Input, OptionList, Static

from tokscope.app.app import ExplorerApp
from helpers import idle
from tokscope.app.views import BY_NAME
from tokscope.app.screens.why import MergeTree, WhyScreen
from tokscope.core.explain.merge_trees import merge_tree, used_in
from tokscope.sources.registry import load

TEXT = "Hello tokenizers, unbelievable!"
SCREEN = "tokscope.app.screens.why:WhyScreen"


def make(text: str = TEXT, encoding: str = "gpt2") -> ExplorerApp:
    return ExplorerApp(text, tokenizer=load(encoding), palette="truecolor")




async def select_text(pilot, piece_text: str) -> int:
    """Select the first piece whose text is ``piece_text``; its index."""
    app = pilot.app
    await idle(pilot)
    index = next(i for i, p in enumerate(app.pieces) if p.text == piece_text)
    app.select_piece(index)
    await pilot.pause()
    return index


async def open_why(pilot, piece_text: str = " token") -> WhyScreen:
    await select_text(pilot, piece_text)
    pilot.app.token_view.focus()
    await pilot.press("f3")
    await idle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, WhyScreen)
    return screen


def pane_text(screen: WhyScreen) -> str:
    return str(screen.query_one("#why-explain", Static).render())


def test_registered_as_a_view():
    assert BY_NAME["why"].key == "f3" and BY_NAME["why"].screen.__name__ == "WhyScreen"


async def test_x_opens_the_tree_of_the_selected_token_and_escape_closes():
    app = make()
    tok = load("gpt2")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_why(pilot)
        token_id = tok.rank_of(b" token")
        assert screen.token_id == app.selected_token_id == token_id
        tree = screen.query_one(MergeTree)
        assert tree.root.data == token_id and tree.root.is_expanded
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, WhyScreen)


async def test_tree_is_lazy_and_matches_the_core():
    app = make()
    tok = load("gpt2")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_why(pilot)
        tree = screen.query_one(MergeTree)
        expected = merge_tree(tok, screen.token_id)
        assert [c.data for c in tree.root.children] == [c.id for c in expected.children]
        first = tree.root.children[0]
        assert first.allow_expand and not first.children  # not loaded until expanded
        # → on the root (expanded) moves to its first child; → again expands it, loading its parents
        await pilot.press("right")
        assert tree.cursor_node is first
        await pilot.press("right")
        await pilot.pause()
        assert first.is_expanded and [c.data for c in first.children] == [c.id for c in expected.children[0].children]
        # ← collapses, ← again goes to the parent node
        await pilot.press("left")
        assert not first.is_expanded
        await pilot.press("left")
        assert tree.cursor_node is tree.root
        # expanding everything reaches single bytes whose bytes rejoin to the token
        await pilot.press("a")
        await pilot.pause()

        def leaves(n):
            return [n] if not n.children else [x for c in n.children for x in leaves(c)]

        got = b"".join(tok.token_bytes(n.data) for n in leaves(tree.root))
        assert got == tok.token_bytes(screen.token_id)
        assert all(len(tok.token_bytes(n.data)) == 1 and not n.allow_expand for n in leaves(tree.root))


async def test_enter_on_a_node_reroots_and_backspace_returns():
    app = make()
    tok = load("gpt2")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_why(pilot)
        root = screen.token_id
        await pilot.press("down", "enter")
        await idle(pilot)
        child = merge_tree(tok, root).children[0].id
        assert screen.token_id == child and screen.query_one(MergeTree).root.data == child
        assert not screen.from_text  # now explaining the token's own bytes
        await pilot.press("backspace")
        await idle(pilot)
        assert screen.token_id == root


async def test_explain_pane_steps_forward_and_back():
    app = make()
    tok = load("gpt2")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_why(pilot)
        e = screen.why.ranks
        assert e is not None and e.chunk.text == " tokenizers"
        assert list(e.tokens) == tok.encode(" tokenizers")
        total = len(e.steps)
        assert total >= 5 and screen.position == 0
        assert "start: 11 single bytes" in pane_text(screen)
        await pilot.press("n", "n", "n")
        assert screen.position == 3
        step = e.steps[2]
        text = pane_text(screen)
        assert f"step 3 of {total}" in text and f"rank {step.rank} (the lowest)" in text
        await pilot.press("p")
        assert screen.position == 2 and f"step 2 of {total}" in pane_text(screen)
        await pilot.press("e")
        assert screen.position == total
        await pilot.press("n")
        assert screen.position == total  # stays at the end
        await pilot.press("b")
        assert screen.position == 0
        assert "why" in pane_text(screen) and "variants" in pane_text(screen)


async def test_cutoff_reruns_the_replay():
    app = make()
    tok = load("gpt2")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_why(pilot)
        await pilot.press("c")
        assert isinstance(screen.focused, Input)
        await pilot.press("3", "0", "0", "enter")
        await idle(pilot)
        assert screen.max_rank == 300
        e = screen.why.ranks
        assert list(e.tokens) == tok.encode(" tokenizers", max_rank=300)
        assert all(s.rank < 300 for s in e.steps)
        assert "ranks below 300" in pane_text(screen)
        # letters typed into the box are not taken as keys; clearing it restores the full vocabulary
        await pilot.press("c", "end", "backspace", "backspace", "backspace", "enter")
        await idle(pilot)
        assert screen.max_rank is None and list(screen.why.ranks.tokens) == tok.encode(" tokenizers")
        screen.set_cutoff(0)
        await idle(pilot)
        assert all(len(p) == 1 for p in screen.why.ranks.parts)


async def test_used_in_list_and_opening_an_entry():
    app = make()
    tok = load("gpt2")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_why(pilot)
        root = merge_tree(tok, screen.token_id).children[0].id  # " to": used by many tokens
        await pilot.press("down", "u")
        await idle(pilot)
        used = screen.query_one("#why-used", OptionList)
        expected = used_in(tok, root)
        assert used.display and used.option_count == len(expected) > 0
        assert [used.get_option_at_index(i).id for i in range(used.option_count)] == [
            f"{u.child}:{u.side}" for u in expected]
        assert screen.focused is used
        await pilot.press("enter")
        await idle(pilot)
        assert screen.token_id == expected[0].child
        pair = tok.parents(screen.token_id)
        assert root in (pair.left, pair.right)


async def test_a_token_picked_elsewhere_opens_here():
    app = make()
    tok = load("gpt2")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_why(pilot)
        hello = tok.rank_of(b"hello")
        app.open_token(hello, source="test")
        await idle(pilot)
        assert screen.token_id == hello and not screen.from_text
        assert [s.merged for s in screen.why.ranks.steps][-1] == b"hello"


async def test_special_token_and_no_selection():
    app = make("<|endoftext|>")
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        app.push_screen(WhyScreen(50256))
        await idle(pilot)
        screen = app.screen
        assert screen.query_one(MergeTree).root.allow_expand is False
        assert "special token 50256" in pane_text(screen)
    app = make("")
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        app.push_screen(WhyScreen())
        await idle(pilot)
        assert "Select a token" in pane_text(app.screen)


@pytest.mark.parametrize("size", [(100, 30), (80, 24)])
def test_snapshot(snap_compare, size):
    async def run_before(pilot):
        await open_why(pilot)
        await pilot.press("right", "right", "n", "n", "n")
        await pilot.pause()

    assert snap_compare(make(), terminal_size=size, run_before=run_before)


def test_snapshot_used_in_and_cutoff(snap_compare):
    async def run_before(pilot):
        await open_why(pilot, " unbelievable")
        await pilot.press("c", "5", "0", "0", "enter")
        await idle(pilot)
        await pilot.press("down", "u")
        await idle(pilot)

    assert snap_compare(make(), terminal_size=(100, 30), run_before=run_before)


async def test_switching_encoding_follows_the_new_pieces():
    app = make()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_why(pilot)
        app.switch_encoding("o200k_base")
        await idle(pilot)
        o200k = load("o200k_base")
        assert app.tokenizer is o200k
        assert screen.token_id == app.selected_token_id is not None
        assert screen.query_one(MergeTree).root.data == screen.token_id
        assert list(screen.why.ranks.tokens) == o200k.encode(screen.why.ranks.chunk.text)


async def test_footer_fits_80_columns_with_every_key_and_the_tree_has_focus():
    from textual.widgets import Footer

    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_why(pilot)
        assert isinstance(screen.focused, MergeTree)  # opens with its tree focused
        keys = [str(k.render()) for k in screen.query_one(Footer).query("FooterKey")]
        shown = " ".join(keys)
        for key in ("a All", "esc Back", "n/p Step", "b/e End", "u Uses", "c Cut", "f Vocab", "f2 Encoding"):
            assert key in shown, (key, shown)
        assert len(shown) <= 80, shown
        # a expands the whole tree from wherever the cursor is
        await pilot.press("down")
        tree = screen.query_one(MergeTree)
        assert tree.cursor_node is not tree.root
        await pilot.press("a")
        await pilot.pause()

        def nodes(n):
            return [n] + [x for c in n.children for x in nodes(c)]

        assert all(n.is_expanded or not n.allow_expand for n in nodes(tree.root))
        assert len(nodes(tree.root)) == 2 * len(load("gpt2").token_bytes(screen.token_id)) - 1


async def test_the_reason_names_the_cut_off_when_it_stops_merging():
    app = make("a tokenization")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_why(pilot)
        screen.set_cutoff(300)
        await idle(pilot)
        why = screen.why.ranks.why
        assert "because of the cut-off" in why.summary and "no adjacent pair of them is a token" not in why.summary
        assert "because of the cut-off" in pane_text(screen).replace("\n", " ")
