"""The command palette (Ctrl+P): every explorer action, every encoding, and every view."""

from __future__ import annotations

from functools import partial

from ..core.text.display import safe_text
from .command_list import CommandList
from .views import VIEWS


class ExplorerCommands(CommandList):
    """Commands for the explorer (Ctrl+P)."""

    def _commands(self) -> list[tuple[str, str, object]]:
        app = self.app
        run = app.run_action
        out: list[tuple[str, str, object]] = [
            ("Pick encoding…", "choose from every encoding in a list (F2)", partial(run, "pick_encoding")),
            ("Select all", "select the whole text in the input pane (Ctrl+A)", partial(run, "select_all")),
            ("Clear the text", "empty the input pane; Ctrl+Z brings it back (Ctrl+L)", partial(run, "clear_text")),
            ("View: text", "token view shows each piece's text", partial(app.set_mode, "text")),
            ("View: ids", "token view shows each piece's id", partial(app.set_mode, "ids")),
            ("View: text and ids", "token view shows text followed by id", partial(app.set_mode, "both")),
            ("Toggle visible whitespace", "spaces, tabs, newlines as · → ⏎ (Ctrl+G)", partial(run, "toggle_ws")),
            ("Toggle rank colours", "colour pieces by merge rank, light = early (Ctrl+R)", partial(run, "toggle_rank")),
            ("Toggle special tokens", "treat <|endoftext|> and friends as special tokens (Ctrl+O)",
             partial(run, "toggle_specials")),
            ("Toggle template tokens", "show the BOS/EOS or [CLS]/[SEP] the model's template adds (Ctrl+N)",
             partial(run, "toggle_template")),
            ("Copy ids", "all token ids, space separated", partial(run, "copy('ids')")),
            ("Copy pieces", "all pieces as a JSON list", partial(run, "copy('pieces')")),
            ("Copy selected token bytes", "hex bytes of the selected token", partial(run, "copy('bytes')")),
            ("Save", "save the text (Ctrl+S)", partial(run, "save")),
            ("Save as…", "save the text to another file", partial(run, "save_as")),
            ("Help", "every key (F1)", partial(run, "help")),
        ]
        try:
            from ..sources.registry import list_encodings

            for info in list_encodings():
                size = f"{info.n_vocab:,} tokens" if info.n_vocab else ""
                name = safe_text(info.name)
                out.append((f"Encoding: {name}", f"switch to {name} ({info.kind}, {size})",
                            partial(app.switch_encoding, info.name)))
        except Exception:  # noqa: BLE001 - listing is best effort in the palette
            pass
        for view in VIEWS:
            out.append((view.title, f"{view.description} ({view.key.upper()})", partial(app.open_view, view.name)))
        return out
