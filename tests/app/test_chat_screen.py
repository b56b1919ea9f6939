"""The chat screen (issue 12): a conversation edited with keys and counted as ``count_chat`` counts
it, under the explorer's tokenizer and its format, with warnings, failures, files and compare;
snapshots at 80x24 and 120x40."""

from __future__ import annotations

import asyncio
import json

import pytest
from textual.widgets import Checkbox, DataTable, Footer, Input, Static

from helpers import idle, settle
from tokscope.app.app import ExplorerApp
from tokscope.app.chat_model import EXAMPLE, ChatDraft
from tokscope.app.screens.chat import ChatScreen
from tokscope.app.screens.compare import CompareScreen
from tokscope.app.screens.dialogs import ChoiceDialog, PathPrompt
from tokscope.app.widgets.chat_view import ChatPromptView
from tokscope.app.widgets.form import Select
from tokscope.core import chat as core_chat
from tokscope.sources import registry
from tokscope.sources.model_files import chat_template_of


def make(text: str = "Hello world", encoding: str = "o200k_harmony", **kw) -> ExplorerApp:
    kw.setdefault("palette", "truecolor")
    return ExplorerApp(text, encoding=encoding, **kw)


async def counted(pilot, timeout: float = 20.0) -> ChatScreen:
    """Wait until the chat screen has counted what it holds (no timer pending, no worker running)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        await pilot.pause(0.05)
        screen = pilot.app.screen
        if (isinstance(screen, ChatScreen) and screen._timer is None and screen.result is not None
                and not any(w.is_running for w in pilot.app.workers)):
            await pilot.pause(0.05)
            return screen
    raise AssertionError("the chat screen did not finish counting")


async def open_chat(pilot) -> ChatScreen:
    await settle(pilot)
    await pilot.press("f12")  # from the input pane: the view key works with the focus anywhere
    return await counted(pilot)


def expected(app, draft: ChatDraft, fmt="auto"):
    tok = app.tokenizer
    return core_chat.count_chat(tok, draft.conversation(), fmt, add_generation_prompt=draft.generation,
                                template=chat_template_of(tok))


def column(screen: ChatScreen, key: str) -> list[str]:
    table = screen.query_one("#chat-messages", DataTable)
    return [str(table.get_cell(str(k), key)) for k in range(table.row_count)]


def notes(screen: ChatScreen) -> str:
    return str(screen.query_one("#chat-notes-text", Static).render())


def info(screen: ChatScreen) -> str:
    return str(screen.query_one("#chat-info").render())


def assert_counts(app, screen: ChatScreen, fmt="auto") -> None:
    want = expected(app, screen.draft, fmt)
    got = screen.result.count
    assert got is not None and got.ids == want.ids and got.text == want.text
    assert [m.tokens for m in got.messages] == [m.tokens for m in want.messages]
    assert column(screen, "tok") == [f"{m.tokens:,}" for m in want.messages]
    assert list(screen.prompt.doc.ids) == list(want.ids)  # the rendered prompt is drawn from these ids
    assert f"{want.total:,} tokens" in info(screen)
    assert f"{want.content_tokens:,} content + {want.overhead:,} overhead" in notes(screen)


def footer_text(app) -> str:
    return " ".join(str(k.render()) for k in app.screen.query_one(Footer).query("FooterKey"))


# ----- opening ------------------------------------------------------------------------------------


async def test_f12_opens_the_chat_from_the_input_and_every_view_key_fits_the_explorers_footer():
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        shown = footer_text(app)
        for label in ("Quit", "Help", "Encoding", "Why", "Find", "Compare", "Langs", "Stats", "Train", "Chat"):
            assert label in shown, label
        keys = app.screen.query_one(Footer).query("FooterKey")
        assert sum(k.size.width for k in keys) + len(keys) - 1 <= 80  # nothing cut at 80 columns
        screen = await open_chat(pilot)
        assert isinstance(screen, ChatScreen)
        # untouched sample: the example conversation, counted with the tokenizer's own format
        assert [m["role"] for m in screen.draft.messages] == [m["role"] for m in EXAMPLE]
        assert screen.result.count.format == "harmony"
        assert_counts(app, screen)
        chat_footer = footer_text(app)
        for label in ("Back", "Help", "New", "Role", "Move", "Gen", "Format", "Compare", "Quit"):
            assert label in chat_footer, label


async def test_the_palette_opens_the_chat():
    from tokscope.app.command_palette import ExplorerCommands

    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        provider = ExplorerCommands(app.screen)
        titles = {title: callback for title, _, callback in provider._commands()}
        titles["Chat cost"]()
        screen = await counted(pilot)
        assert isinstance(screen, ChatScreen)


async def test_the_explorers_own_text_starts_as_one_user_message():
    app = make("My own prompt <|endoftext|> here", source="stdin")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_chat(pilot)
        assert screen.draft.messages == [{"role": "user", "content": "My own prompt <|endoftext|> here"}]
        assert_counts(app, screen)
        assert "spells the special token '<|endoftext|>'" in notes(screen)  # injection warning
        assert column(screen, "n") == ["1!"]  # the message with a warning is marked
        assert "1 warning" in info(screen)


# ----- editing ------------------------------------------------------------------------------------


async def test_add_remove_undo_reorder_and_role_with_keys():
    app = make(encoding="llama3")  # harmony refuses a tool message with no call before it
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_chat(pilot)
        table = screen.query_one("#chat-messages", DataTable)
        assert app.focused is table
        await pilot.press("n", "x")  # letters do nothing here: no letter key acts on this screen
        assert len(screen.draft.messages) == 4
        await pilot.press("down")  # message 2 (user)
        await pilot.press("ctrl+n")
        assert screen.current == 2 and screen.draft.messages[2] == {"role": "assistant", "content": ""}
        assert app.focused is screen.editor  # a new message is typed into at once
        await pilot.press(*"It depends.")
        screen = await counted(pilot)
        assert screen.draft.messages[2]["content"] == "It depends."
        assert_counts(app, screen)
        # reorder: Ctrl+Up from the editor moves the message up, the editor keeps the focus
        await pilot.press("ctrl+up")
        screen = await counted(pilot)
        assert [m.get("content") for m in screen.draft.messages[1:3]] == ["It depends.", "What is a token?"]
        assert screen.current == 1 and app.focused is screen.editor
        assert_counts(app, screen)
        await pilot.press("ctrl+down")
        await counted(pilot)
        assert screen.draft.messages[2]["content"] == "It depends."
        # role: Ctrl+R cycles system, developer, user, assistant, tool
        await pilot.press("ctrl+r")
        screen = await counted(pilot)
        assert screen.draft.messages[2]["role"] == "tool"
        assert column(screen, "role")[2] == "tool"
        assert_counts(app, screen)
        # remove with Delete in the list (in the editor Delete deletes a character), then undo
        await pilot.press("escape")  # out of the editor
        assert app.focused is table
        await pilot.press("delete")
        screen = await counted(pilot)
        assert len(screen.draft.messages) == 4 and all(m.get("content") != "It depends." for m in screen.draft.messages)
        assert_counts(app, screen)
        await pilot.press("ctrl+z")
        screen = await counted(pilot)
        assert screen.draft.messages[2] == {"role": "tool", "content": "It depends."}
        assert_counts(app, screen)


async def test_editing_content_counts_again_and_a_row_picks_the_message():
    app = make(encoding="llama3")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_chat(pilot)
        await pilot.press("down", "down", "enter")  # the assistant message, into the editor
        assert app.focused is screen.editor
        assert screen.editor.text == EXAMPLE[2]["content"]
        await pilot.press("ctrl+l")  # clear (Ctrl+Z in the editor brings it back)
        await pilot.press(*"Four.")
        screen = await counted(pilot)
        assert screen.draft.messages[2]["content"] == "Four."
        assert_counts(app, screen)
        await pilot.press("ctrl+z")  # the editor's own undo
        screen = await counted(pilot)
        assert screen.draft.messages[2]["content"] != "Four."
        assert_counts(app, screen)
        # the prompt view points at the selected message's first token
        m = screen.result.count.messages[2]
        assert screen.prompt.selected == m.spans[0][0]


async def test_generation_prompt_key_and_checkbox():
    app = make(encoding="llama3")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_chat(pilot)
        with_prompt = screen.result.count.total
        await pilot.press("ctrl+g")
        screen = await counted(pilot)
        box = screen.query_one("#chat-gen", Checkbox)
        assert box.value is False and screen.draft.generation is False
        assert screen.result.count.total == with_prompt - 4  # <|start_header_id|>assistant<|end_header_id|>\n\n
        assert_counts(app, screen)
        box.focus()
        await pilot.press("space")  # the checkbox itself
        screen = await counted(pilot)
        assert screen.draft.generation is True and screen.result.count.total == with_prompt


async def test_switching_encodings_renders_in_that_tokenizers_format():
    app = make(encoding="o200k_harmony")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_chat(pilot)
        assert screen.result.count.format == "harmony"
        app.switch_encoding("llama3")
        await pilot.pause(0.2)
        screen = await counted(pilot)
        assert app.tokenizer.name == "llama3" and screen.result.count.format == "llama3"
        assert str(screen.query_one("#chat-format", Select).value) == "auto"
        assert "auto: llama3" in str(screen.query_one("#chat-format SelectCurrent #label").render())
        assert_counts(app, screen)
        assert "llama3 8,192" in notes(screen)  # the context size of the model


async def test_the_format_key_and_select_and_chatml_with_the_web_counters_ids():
    app = make(encoding="o200k_base")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_chat(pilot)
        assert screen.result.count.format == "chatml"
        assert "not special tokens of o200k_base" in notes(screen)  # format strings that are text here
        await pilot.press("ctrl+f")  # auto -> chatml
        await pilot.press("ctrl+f")  # -> chatml with the web counters' ids
        screen = await counted(pilot)
        assert screen.draft.format == "chatml-ids"
        want = expected(app, screen.draft, core_chat.ChatMLFormat(assume_ids=True))
        assert screen.result.count.ids == want.ids and 200264 in want.ids
        assert "assume" in notes(screen)
        assert screen.prompt.kind_of(0) == "special"  # an assumed id is drawn as a special token
        select = screen.query_one("#chat-format", Select)
        select.value = "llama3"
        screen = await counted(pilot)
        assert screen.result.count.format == "llama3"
        assert_counts(app, screen, "llama3")


# ----- warnings and failures ------------------------------------------------------------------------


def model_folder(tmp_path, template: str):
    pytest.importorskip("tokenizers")
    from tokenizers import Tokenizer, models, pre_tokenizers

    folder = tmp_path / "model"
    folder.mkdir()
    vocab = {"<unk>": 0, "<s>": 1, "hi": 2, "user": 3, "system": 4, "assistant": 5}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens(["<s>", "<turn>"])
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": template, "bos_token": "<s>"}))
    return folder


async def test_the_models_own_template_and_a_doubled_bos(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    folder = model_folder(tmp_path, "{{ bos_token }}{{ bos_token }}{% for m in messages %}<turn>{{ m['role'] }} "
                                    "{{ m['content'] }}\n{% endfor %}{% if add_generation_prompt %}<turn>assistant{% endif %}")
    app = make(encoding=str(folder))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_chat(pilot)
        assert screen.result.count.format == "template"
        assert screen.result.count.text.startswith("<s><s><turn>system")
        assert_counts(app, screen)
        assert "twice" in notes(screen)  # the doubled BOS


async def test_a_failing_template_is_one_line_with_its_line_number(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    folder = model_folder(tmp_path, "{% for m in messages %}{{ m['content'] }}\n"
                                    "{% if m['role'] == 'system' %}{{ raise_exception('no system messages, please') }}"
                                    "{% endif %}{% endfor %}")
    app = make(encoding=str(folder))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_chat(pilot)
        assert screen.result.count is None
        text = notes(screen)
        assert "no system messages, please" in text and "line 2" in text and "\n" not in text.strip()
        assert "cannot render" in info(screen)
        assert "failed" in str(screen.prompt.border_title)
        # without the system message it renders
        await pilot.press("delete")
        screen = await counted(pilot)
        assert screen.result.count is not None and "no system messages" not in notes(screen)
        assert_counts(app, screen)


async def test_an_unknown_role_is_warned_and_marked(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps([{"role": "narrator", "content": "Once upon a time"}, {"role": "user", "content": "hi"}]))
    app = make(encoding="llama3")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_chat(pilot)
        await open_file(pilot, str(path))
        screen = await counted(pilot)
        assert [m["role"] for m in screen.draft.messages] == ["narrator", "user"]
        assert "no role 'narrator'" in notes(screen)
        assert column(screen, "n")[0] == "1!"
        assert_counts(app, screen)


async def test_nothing_drawn_holds_a_control_character_from_a_conversation(tmp_path):
    from test_newcomer import BAD, drawn_cells

    hostile = "evil\x1b[31m red \u202e reversed \x07 bell\r\nline"
    path = tmp_path / "c\x1b]0;x\x07.json"
    path.write_text(json.dumps({"messages": [{"role": "user\x1b[2J", "content": hostile},
                                             {"role": "assistant", "content": hostile}]}))
    app = make(encoding="o200k_base")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_chat(pilot)
        await open_file(pilot, str(path))
        screen = await counted(pilot)
        assert screen.draft.messages[1]["content"] == hostile
        await pilot.press("down")
        await pilot.pause(0.2)
        drawn = "".join(c for t, _, _ in drawn_cells(app) for c in t)
        assert not (set(drawn) & BAD), [hex(ord(c)) for c in set(drawn) & BAD]
        assert screen.editor.real_text == hostile  # the editor keeps the text exactly


# ----- files ------------------------------------------------------------------------------------------


async def open_file(pilot, path: str) -> None:
    await pilot.press("ctrl+o")
    await pilot.pause()
    prompt = pilot.app.screen
    assert isinstance(prompt, PathPrompt)
    prompt.query_one(Input).value = path
    await pilot.press("enter")
    await idle(pilot)


TOOLS = [{"type": "function", "function": {"name": "add", "description": "Add two numbers", "parameters": {
    "type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}}}]


async def test_open_and_save_a_conversation_with_tools(tmp_path, monkeypatch):
    from tokscope.core.formats import files

    source = tmp_path / "in.json"
    conv = {"messages": [{"role": "system", "content": "Use tools."}, {"role": "user", "content": "2+2?"},
                         {"role": "assistant", "content": None, "tool_calls": [
                             {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a":2,"b":2}'}}]},
                         {"role": "tool", "tool_call_id": "c1", "content": "4"}],
            "tools": TOOLS}
    source.write_text(json.dumps(conv))
    app = make(encoding="o200k_harmony")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_chat(pilot)
        await open_file(pilot, str(source))
        screen = await counted(pilot)
        assert screen.draft.tools == TOOLS and len(screen.draft.messages) == 4
        assert_counts(app, screen)
        count = screen.result.count
        assert count.tool_tokens and f"the tool definitions add {count.tool_tokens:,}" in notes(screen)
        assert "d" in count.kinds and "tools" in str(screen.prompt.border_subtitle)  # drawn and in the legend
        assert column(screen, "text")[2] == "→ add"  # a message of tool calls only
        # save: atomically, through the core's one writer
        written = []
        real = files.write_atomic

        def spy(path, data, **kw):
            written.append(str(path))
            return real(path, data, **kw)

        monkeypatch.setattr(files, "write_atomic", spy)
        target = tmp_path / "out.json"
        await pilot.press("ctrl+s")
        await pilot.pause()
        prompt = app.screen
        assert isinstance(prompt, PathPrompt)
        prompt.query_one(Input).value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        assert written == [str(target)]
        assert json.loads(target.read_text()) == conv
        # saving over another file asks first
        other = tmp_path / "other.json"
        other.write_text("keep me")
        await pilot.press("ctrl+s")
        await pilot.pause()
        app.screen.query_one(Input).value = str(other)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceDialog)
        await pilot.press("escape")
        await pilot.pause()
        assert other.read_text() == "keep me"


async def test_a_bad_file_is_one_line_and_the_conversation_stays(tmp_path, notes):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"content": "no role"}]')
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_chat(pilot)
        before = screen.draft.snapshot().messages
        await open_file(pilot, str(bad))
        await pilot.pause(0.2)
        assert screen.draft.messages == before
        errors = [m for m, severity in notes if severity == "error"]
        assert errors and "has no 'role'" in errors[-1] and "\n" not in errors[-1]
        await open_file(pilot, str(tmp_path / "missing.json"))
        await pilot.pause(0.2)
        assert screen.draft.messages == before and len([m for m, s in notes if s == "error"]) == 2


async def test_the_conversation_stays_when_the_screen_closes():
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_chat(pilot)
        await pilot.press("ctrl+n", *"kept")
        await counted(pilot)
        await pilot.press("escape", "escape")  # out of the editor, then back to the explorer
        await pilot.pause()
        assert app.screen is app.screen_stack[0]
        await pilot.press("f12")
        screen = await counted(pilot)
        assert screen.draft.messages[1] == {"role": "user", "content": "kept"} and screen.current == 1
        assert screen.editor.text == "kept"


async def test_a_newer_edit_cancels_the_count_running():
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_chat(pilot)
        first = screen._cancel
        screen.count_now()
        second = screen._cancel
        screen.count_now()
        assert first.is_set() and second.is_set() and not screen._cancel.is_set()
        screen = await counted(pilot)
        assert_counts(app, screen)


# ----- compare ---------------------------------------------------------------------------------------


async def test_compare_takes_the_chat_each_tokenizer_in_its_own_format():
    app = make(encoding="o200k_base")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_chat(pilot)
        await pilot.press("ctrl+f", "ctrl+f")  # chatml with the web counters' ids, for o200k_base
        screen = await counted(pilot)
        await pilot.press("f5")
        await pilot.pause()
        cmp = app.screen
        assert isinstance(cmp, CompareScreen) and cmp.chat is not None
        await wait_compared(pilot, cmp)
        names = [s.tokenizer.name for s in cmp.slots]
        assert names == ["o200k_base", "o200k_harmony", "llama3"]
        table = cmp.query_one("#cmp-stats", DataTable)
        for row, slot in enumerate(cmp.slots):
            tok = registry.load(slot.tokenizer.name)
            fmt = core_chat.ChatMLFormat(assume_ids=True) if row == 0 else "auto"
            want = core_chat.count_chat(tok, screen.draft.conversation(), fmt, add_generation_prompt=True,
                                        template=chat_template_of(tok))
            pane = cmp.query_one(f"#view-{slot.key}", ChatPromptView)
            assert list(pane.doc.ids) == list(want.ids) and pane.kinds == want.kinds
            cells = [str(c) for c in table.get_row_at(row)]
            assert cells[0] == slot.tokenizer.name and cells[1].startswith(want.format)
            assert cells[2:5] == [f"{want.total:,}", f"{want.content_tokens:,}", f"{want.overhead:,}"]
        # Escape goes back to the chat, its conversation as it was
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ChatScreen)


async def wait_compared(pilot, screen: CompareScreen, timeout: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        await pilot.pause(0.05)
        if all(s.gen == screen.gen for s in screen.slots) and not any(w.is_running for w in pilot.app.workers):
            await pilot.pause(0.05)
            return
    raise AssertionError("the comparison did not finish")


async def test_compare_with_a_chat_reaches_4_5_to_1_contrast():
    from test_newcomer import border_cells, contrast, drawn_cells, is_graphic

    app = make(encoding="o200k_base")
    async with app.run_test(size=(100, 30)) as pilot:
        await open_chat(pilot)
        await pilot.press("f5")
        await pilot.pause()
        await wait_compared(pilot, app.screen)
        cells = drawn_cells(app)
        bad = [(t, fg, bg, round(contrast(fg, bg), 2)) for t, fg, bg in cells
               if not is_graphic(t) and contrast(fg, bg) < 4.5]
        assert not bad, bad[:8]
        assert not [c for c in border_cells(cells) if contrast(c[1], c[2]) < 3]


# ----- snapshots -------------------------------------------------------------------------------------


def snap_app(encoding: str) -> ExplorerApp:
    return ExplorerApp("Hello world", encoding=encoding, palette="truecolor")


async def _ready(pilot) -> None:
    await open_chat(pilot)
    screen = pilot.app.screen
    screen.editor.cursor_blink = False
    await pilot.press("down")  # message 2 selected: its first token picked in the prompt
    await counted(pilot)


@pytest.mark.parametrize(("size", "encoding"), [((80, 24), "llama3"), ((120, 40), "o200k_harmony")])
def test_snapshot_chat(snap_compare, size, encoding):
    assert snap_compare(snap_app(encoding), terminal_size=size, run_before=_ready)


def test_snapshot_chat_warnings_80x24(snap_compare):
    async def run_before(pilot):
        await _ready(pilot)
        screen = pilot.app.screen
        screen.editor.focus()
        await pilot.press("end", *" <|endoftext|>")
        await counted(pilot)
        screen.query_one("#chat-notes").scroll_end(animate=False)
        await pilot.pause()

    assert snap_compare(snap_app("o200k_base"), terminal_size=(80, 24), run_before=run_before)


def test_snapshot_compare_chat_120x40(snap_compare):
    async def run_before(pilot):
        await open_chat(pilot)
        await pilot.press("f5")
        await pilot.pause()
        await wait_compared(pilot, pilot.app.screen)

    assert snap_compare(snap_app("o200k_base"), terminal_size=(120, 40), run_before=run_before)


async def edited_conversation(pilot, tmp_path) -> tuple[ChatScreen, object]:
    """F12, open a conversation file, type into its second message."""
    source = tmp_path / "talk.json"
    source.write_text(json.dumps([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]))
    await open_chat(pilot)
    await open_file(pilot, str(source))
    screen = await counted(pilot)
    assert not screen.draft.modified
    await pilot.press("down", "enter")  # the user message, into the editor
    await pilot.pause()
    screen.editor.focus()
    screen.editor.move_cursor(screen.editor.document.end)
    await pilot.press("!")
    await pilot.pause()
    assert screen.draft.messages[1]["content"] == "Hi!" and screen.draft.modified
    return screen, source


async def test_quit_asks_before_losing_the_chats_edits(tmp_path):
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        screen, source = await edited_conversation(pilot, tmp_path)
        await pilot.press("ctrl+q")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog) and "talk.json" in dialog.message
        await pilot.press("c")  # cancel: still here, the edits too
        await pilot.pause()
        assert app.is_running and app.screen is screen and screen.draft.messages[1]["content"] == "Hi!"
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("s")  # save: to its own file, then quit
        await pilot.pause(0.3)
    assert app.return_code == 0
    assert json.loads(source.read_text())["messages"][1]["content"] == "Hi!"


async def test_quit_after_leaving_the_chat_still_asks_and_discard_quits(tmp_path):
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        screen, source = await edited_conversation(pilot, tmp_path)
        await pilot.press("escape", "escape")  # the editor, then the chat screen: the draft lives on
        await pilot.pause()
        assert not isinstance(app.screen, ChatScreen)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceDialog)
        await pilot.press("d")
        await pilot.pause(0.3)
    assert app.return_code == 0
    assert json.loads(source.read_text())[1]["content"] == "Hi"  # discarded: the file is as it was


async def test_quit_without_chat_edits_does_not_ask():
    app = make()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_chat(pilot)
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0
