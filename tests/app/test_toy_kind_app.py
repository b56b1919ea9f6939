"""The explorer with a kind of tokenizer that only tests/core/test_toy_kind.py knows (one piece per
character, an upper-casing normalizer, a words pre-tokenizer), built from the core's protocols
alone: the token view, the inspector, the why screen, compare and insights all draw it, with no
change anywhere else. The registry is asked for it by name, as it is for every encoding."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))

from helpers import idle, settle  # noqa: E402
from test_toy_kind import toy  # noqa: E402

from tokscope.app.app import ExplorerApp  # noqa: E402
from tokscope.app.widgets.inspector import Inspector  # noqa: E402
from tokscope.sources import registry  # noqa: E402

TEXT = "Hi café ☃ ok\nbye"


@pytest.fixture()
def toy_encoding(monkeypatch):
    tokenizer = toy()
    real_load, real_check = registry.load, registry.check
    monkeypatch.setattr(registry, "load", lambda name: tokenizer if name == "toy" else real_load(name))
    monkeypatch.setattr(registry, "check", lambda name: None if name == "toy" else real_check(name))
    return tokenizer


def rows(view) -> list[str]:
    return [view._render_row(r)[0].text for r in range(len(view.rows))]


async def test_the_explorer_draws_a_kind_defined_elsewhere(toy_encoding):
    app = ExplorerApp(TEXT, encoding="toy", palette="truecolor")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.doc.ids == toy_encoding.encode(TEXT, disallowed_special=())
        view = app.token_view
        # the original text, not the upper-cased form the model saw; "☃" is the unknown <?>
        assert rows(view) == ["Hi café ☃ ok", "bye"]
        assert [s.style for s in view._render_row(0)[0] if s.text == "☃"] == [view.palette.unknown]
        app.select_piece(app.doc.piece_at(TEXT.index("é")))
        await pilot.pause()
        shown = str(app.query_one(Inspector).render())
        assert "É" in shown or "é" in shown
        await pilot.press("ctrl+t", "ctrl+t")
        await settle(pilot)
        assert "☃ " + str(toy_encoding.token_to_id("<?>")) in " ".join(rows(view))


@pytest.mark.parametrize("view", ["why", "compare", "insights", "vocab"])
async def test_every_view_opens_on_it(toy_encoding, view, notes):
    app = ExplorerApp(TEXT, encoding="toy", palette="truecolor")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.select_piece(0)
        await pilot.pause()
        app.open_view(view)
        await idle(pilot)
        assert app.screen is not app.screen_stack[0]
        assert not [m for m, severity in notes if severity == "error"], notes
        text = "\n".join(str(w.render()) for w in app.screen.query("Static"))
        assert "Traceback" not in text


@pytest.fixture()
def toy_file(tmp_path, monkeypatch):
    """The toy file format (tests/core/toy_format.py) as one row of the sniffing table, and a file."""
    import toy_format

    from tokscope.core.formats import sniff

    monkeypatch.setattr(sniff, "FORMATS", (*sniff.FORMATS, toy_format.ROW))
    path = tmp_path / "tokenizer.toy"
    path.write_bytes(toy_format.dump())
    yield str(path)
    registry.forget()


async def test_e_file_of_a_toy_format_opens_the_explorer_inspector_why_and_compare(toy_file, notes):
    from tokscope.app.screens.compare import CompareScreen
    from tokscope.app.screens.why import WhyScreen

    app = ExplorerApp(TEXT, encoding=toy_file, palette="truecolor")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.tokenizer.kind == "per-character"
        assert app.doc.ids == app.tokenizer.encode(TEXT, disallowed_special=())
        app.select_piece(app.doc.piece_at(TEXT.index("é")))
        await pilot.pause()
        assert "é" in str(app.query_one(Inspector).render()) or "É" in str(app.query_one(Inspector).render())
        app.open_view("why")
        await idle(pilot)
        assert isinstance(app.screen, WhyScreen) and app.screen.why is not None
        assert app.screen.why.method == "model" and "per-character" in app.screen.why.summary
        await pilot.press("escape")
        await idle(pilot)
        app.open_view("compare")
        await idle(pilot)
        assert isinstance(app.screen, CompareScreen)
        assert not [m for m, severity in notes if severity == "error"], notes
