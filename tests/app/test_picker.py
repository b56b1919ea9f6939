"""The encoding picker (F2): type to filter by name or kind, move in the list while the filter keeps
focus, Enter loads, Escape cancels; built-ins, open models, saved tokenizers and the models of a
(fake) Hugging Face hub cache; long model ids keep their end; 80x24 and 60x16."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from textual.widgets import Input, OptionList, Static

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))

import hf_files
from helpers import settle
from test_newcomer import contrast, is_graphic

from tokscope.app.app import ExplorerApp
from tokscope.app.screens.dialogs import EncodingPicker, short_name
from tokscope.sources import registry

COMMIT = "0123456789abcdef0123456789abcdef01234567"
LONG = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"
MODELS = {"google-bert/bert-base-uncased": "bert", "meta-llama/Llama-2-7b-hf": "llama2", LONG: "wordlevel"}


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """A hub cache laid out as the hub library does (refs/main holds the commit), and empty data and
    cache folders for tokscope (no saved tokenizer of the user's shows)."""
    root = tmp_path / "hub"
    for model_id, family in MODELS.items():
        org, name = model_id.split("/")
        folder = root / f"models--{org}--{name}"
        snap = folder / "snapshots" / COMMIT
        snap.mkdir(parents=True)
        (folder / "refs").mkdir()
        (folder / "refs" / "main").write_text(COMMIT)
        try:
            (snap / "tokenizer.json").write_text(hf_files.build(family), encoding="utf-8")
        except hf_files.Missing as exc:
            pytest.skip(str(exc))
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    registry.forget()
    yield root
    registry.forget()


def make(encoding: str = "o200k_base") -> ExplorerApp:
    return ExplorerApp("Hello wörld", encoding=encoding, palette="truecolor")


async def open_picker(pilot) -> EncodingPicker:
    await settle(pilot)
    await pilot.press("f2")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, EncodingPicker)
    return screen


def shown_names(picker: EncodingPicker) -> list[str]:
    return [picker.infos[k].name for k in picker.shown]


def option_lines(picker: EncodingPicker) -> list[str]:
    option_list = picker.query_one(OptionList)
    return [str(option_list.get_option_at_index(i).prompt) for i in range(option_list.option_count)]


def highlighted_name(picker: EncodingPicker) -> str | None:
    k = picker.highlighted
    return None if k is None else picker.infos[k].name


async def test_it_lists_every_source_and_marks_the_current_one(hub):
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await open_picker(pilot)
        kinds = {info.kind for info in picker.infos}
        assert {"builtin", "open model", "hub cache"} <= kinds
        names = shown_names(picker)
        assert {"o200k_base", "llama3", "llama4", "qwen", "tekken", *MODELS} <= set(names)
        lines = dict(zip(names, option_lines(picker)))
        assert lines["o200k_base"].lstrip().startswith("● o200k_base")
        assert "200,019" in lines["o200k_base"]
        assert all("●" not in line for name, line in lines.items() if name != "o200k_base")
        # a hub model's vocabulary size is not known before it is loaded
        assert "      ?  hub cache" in lines["meta-llama/Llama-2-7b-hf"]
        assert highlighted_name(picker) == "o200k_base"
        assert isinstance(app.focused, Input)


@pytest.mark.parametrize(("query", "expected"), [
    ("llama", {"llama3", "llama4", "meta-llama/Llama-2-7b-hf"}),
    ("LLaMa", {"llama3", "llama4", "meta-llama/Llama-2-7b-hf"}),
    ("hub", set(MODELS)),
    ("hub llama", {"meta-llama/Llama-2-7b-hf"}),
    ("open", {"llama3", "llama4", "qwen", "tekken", "tekken-240718"}),
])
async def test_typing_filters_by_name_and_kind(hub, query, expected):
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await open_picker(pilot)
        await pilot.press(*("space" if c == " " else c for c in query))
        await pilot.pause()
        assert set(shown_names(picker)) == expected
        assert picker.query_one(Input).value == query
        assert f"of {len(picker.infos)} match" in str(picker.query_one("#picker-count", Static).render())


async def test_keys_move_in_the_list_while_the_filter_keeps_focus(hub):
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await open_picker(pilot)
        names = shown_names(picker)
        start = names.index("o200k_base")
        await pilot.press("down")
        assert highlighted_name(picker) == names[start + 1]
        await pilot.press("up", "up")
        assert highlighted_name(picker) == names[start - 1]
        await pilot.press("pagedown")
        assert names.index(highlighted_name(picker)) > start + 1
        await pilot.press("pageup", "pageup", "pageup")
        assert highlighted_name(picker) == names[0]
        assert isinstance(app.focused, Input) and app.focused.id == "picker-filter"
        # letters go to the filter, never to a key of the app or the list
        await pilot.press("q", "x")
        assert picker.query_one(Input).value == "qx" and app.screen is picker


async def test_enter_loads_the_highlighted_hub_model(hub):
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await open_picker(pilot)
        await pilot.press(*"bert")
        await pilot.pause()
        assert shown_names(picker) == ["google-bert/bert-base-uncased"]
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is not picker
        assert app.encoding_name == "google-bert/bert-base-uncased"
        assert app.tokenizer.kind == "WordPiece"
        # the next look marks it
        picker = await open_picker(pilot)
        assert highlighted_name(picker) == "google-bert/bert-base-uncased"


async def test_filtering_keeps_the_highlight_when_it_still_matches(hub):
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await open_picker(pilot)
        await pilot.press(*"hub")
        await pilot.press("down")
        chosen = highlighted_name(picker)
        await pilot.press("space", "l")
        await pilot.pause()
        assert highlighted_name(picker) == chosen == "meta-llama/Llama-2-7b-hf"


async def test_no_match_says_so_and_enter_does_nothing(hub):
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await open_picker(pilot)
        await pilot.press(*"zzz")
        await pilot.pause()
        assert shown_names(picker) == [] and picker.highlighted is None
        assert "no encoding matches 'zzz'" in str(picker.query_one("#picker-count", Static).render())
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is picker
        await pilot.press("backspace", "backspace", "backspace")
        await pilot.pause()
        assert len(shown_names(picker)) == len(picker.infos)


async def test_escape_cancels(hub):
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_picker(pilot)
        await pilot.press(*"llama", "escape")
        await settle(pilot)
        assert not isinstance(app.screen, EncodingPicker)
        assert app.encoding_name == "o200k_base"


async def test_a_click_loads_that_encoding(hub):
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await open_picker(pilot)
        await pilot.press(*"hub")
        await pilot.pause()
        await pilot.click(OptionList, offset=(4, 1 + 1))  # below the border: the second model
        await settle(pilot)
        assert app.encoding_name == shown_names(picker)[1]


@pytest.mark.parametrize("size", [(80, 24), (60, 16)])
async def test_long_model_ids_keep_their_end_and_the_dialog_fits(hub, size):
    app = make()
    async with app.run_test(size=size) as pilot:
        picker = await open_picker(pilot)
        await pilot.press(*"hub")
        await pilot.pause()
        await pilot.pause()
        option_list = picker.query_one(OptionList)
        room = option_list.scrollable_content_region.width
        lines = option_lines(picker)
        assert all(len(line) <= room for line in lines), (room, lines)
        by_name = dict(zip(shown_names(picker), lines))
        assert "…" in by_name[LONG] and "MiniLM-L12-v2" in by_name[LONG]
        assert "bert-base-uncased" in by_name["google-bert/bert-base-uncased"]
        # the whole dialog is on screen: title, filter, list and count line
        for widget in (picker.query_one("#picker-title"), picker.query_one(Input), option_list,
                       picker.query_one("#picker-count")):
            region = widget.region
            assert region.height > 0 and region.bottom <= size[1] and region.right <= size[0], widget
        assert option_list.region.height >= 3 + 2  # at least three encodings in view


def cells_in(app, region) -> list[tuple[str, tuple, tuple]]:
    """The runs of text drawn inside ``region`` with their colours (as test_newcomer's
    ``drawn_cells``, kept to the dialog: the screen behind a modal is dimmed on purpose)."""
    import io

    from rich.console import Console
    from rich.text import Text

    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True))
    text = Text.from_ansi(console.export_text(styles=True))
    starts = [0]
    for line in text.plain.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    out = []
    for span in text.spans:
        row = max(k for k, s in enumerate(starts) if s <= span.start)
        col = span.start - starts[row]
        chunk = text.plain[span.start:span.end]
        style = span.style
        if isinstance(style, str) or not chunk.strip() or not region.contains(col, row):
            continue
        if style.color is None or style.bgcolor is None:
            continue
        fg, bg = tuple(style.color.get_truecolor()), tuple(style.bgcolor.get_truecolor())
        if style.reverse:
            fg, bg = bg, fg
        if style.dim:
            fg = tuple((f + b) // 2 for f, b in zip(fg, bg))
        out.append((chunk, fg, bg))
    return out


async def test_the_picker_is_readable(hub):
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await open_picker(pilot)
        await pilot.press("l")
        await pilot.pause()
        cells = cells_in(app, picker.query_one("#picker").region)
        assert any("llama3" in t for t, _, _ in cells)
        bad = [(t, round(contrast(fg, bg), 2)) for t, fg, bg in cells if not is_graphic(t) and contrast(fg, bg) < 4.5]
        assert not bad, bad[:8]


def test_short_names_keep_the_end():
    assert short_name(LONG, 30) == "…se-multilingual-MiniLM-L12-v2"
    assert short_name("meta-llama/Meta-Llama-3-8B", 22) == "meta-…/Meta-Llama-3-8B"
    assert short_name("meta-llama/Meta-Llama-3-8B", 17) == "…/Meta-Llama-3-8B"
    for room in range(4, 40):
        assert len(short_name(LONG, room)) <= room


def test_snapshot_hub_models_80x24(snap_compare, hub):
    async def run_before(pilot):
        picker = await open_picker(pilot)
        picker.query_one(Input).cursor_blink = False
        await pilot.press(*"hub")
        await pilot.pause()

    assert snap_compare(make("meta-llama/Llama-2-7b-hf"), terminal_size=(80, 24), run_before=run_before)


def snapshot_of(hub: Path, model_id: str) -> Path:
    org, name = model_id.split("/")
    return hub / f"models--{org}--{name}" / "snapshots" / COMMIT


@pytest.mark.parametrize("size", [(80, 24), (60, 16)])
@pytest.mark.parametrize("what", ["file", "folder"])
async def test_a_typed_path_is_offered_and_loads(hub, what, size):
    folder = snapshot_of(hub, "google-bert/bert-base-uncased")
    path = str(folder / "tokenizer.json") if what == "file" else str(folder)
    app = make()
    async with app.run_test(size=size) as pilot:
        picker = await open_picker(pilot)
        picker.query_one(Input).value = path[:-5]  # the start as if typed; the end typed
        await pilot.press(*path[-5:])
        await pilot.pause()
        assert picker.shown[0] == -1 and picker.highlighted == -1
        assert option_lines(picker)[0].startswith(f" ▸ the {what} ")
        assert f"Enter loads the {what}" in str(picker.query_one("#picker-count", Static).render())
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is not picker
        assert app.tokenizer.kind == "WordPiece"
        assert app.doc.ids == registry.load(path).encode("Hello wörld")


async def test_a_missing_path_says_so(hub, tmp_path):
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await open_picker(pilot)
        await pilot.press(*"./nowhere/tokenizer.json")
        await pilot.pause()
        assert picker.highlighted is None
        assert "no file or folder './nowhere/tokenizer.json'" in str(picker.query_one("#picker-count", Static).render())
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is picker


async def test_compare_adds_a_path(hub):
    from tokscope.app.screens.compare import CompareScreen
    from helpers import idle

    path = str(snapshot_of(hub, "google-bert/bert-base-uncased") / "tokenizer.json")
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.push_screen(CompareScreen(["o200k_base", "gpt2"]))
        await idle(pilot)
        await pilot.press("a")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, EncodingPicker)
        picker.query_one(Input).value = path[:-5]
        await pilot.press(*path[-5:], "enter")
        await idle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen) and len(screen.slots) == 3
        added = screen.slots[-1]
        assert added.error is None and added.tokenizer.kind == "WordPiece"
        assert list(added.doc.ids) == registry.load(path).encode("Hello wörld")
