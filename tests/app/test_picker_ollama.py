"""The encoding picker (F2) lists the models of Ollama's local store (a fake one) beside the
others, filters them by kind, loads one with Enter, and the explorer's status line and inspector
title show a GGUF's default pre-tokenizer; at 80x24 and 60x16."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from textual.widgets import OptionList, Static

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sources"))

from helpers import settle  # noqa: E402
from ollama_store import make_store, tiny_gguf  # noqa: E402

from tokscope.app.app import ExplorerApp  # noqa: E402
from tokscope.app.screens.dialogs import EncodingPicker  # noqa: E402
from tokscope.app.widgets.status import StatusLine  # noqa: E402
from tokscope.sources import registry  # noqa: E402


@pytest.fixture
def store(tmp_path, monkeypatch):
    root = tmp_path / "ollama"
    make_store(root, tiny_gguf(), name="tiny")
    make_store(root, tiny_gguf(pre="default"), namespace="me", name="plain", tag="v1")
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "no-hub"))
    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    registry.forget()
    yield root
    registry.forget()


def shown(picker: EncodingPicker) -> list[str]:
    return [picker.infos[k].name for k in picker.shown]


@pytest.mark.parametrize("size", [(80, 24), (60, 16)])
async def test_f2_lists_and_loads_an_ollama_model(store, size):
    app = ExplorerApp("hello world", encoding="o200k_base", palette="truecolor")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("f2")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, EncodingPicker)
        assert {"ollama:tiny", "ollama:me/plain:v1", "o200k_base"} <= set(shown(picker))
        await pilot.press(*"ollama")
        await pilot.pause()
        assert shown(picker) == ["ollama:me/plain:v1", "ollama:tiny"]
        lines = [str(picker.query_one(OptionList).get_option_at_index(i).prompt) for i in range(2)]
        assert all("ollama" in line and "?" in line for line in lines)
        await pilot.press("down", "enter")
        await settle(pilot)
        assert app.screen is not picker
        assert app.encoding_name == "ollama:tiny"
        tokenizer = app.tokenizer
        assert app.doc is not None and list(app.doc.ids) == [tokenizer.token_to_id("hello"),
                                                             tokenizer.token_to_id("Ġworld")]
        assert "⚠" not in str(app.query_one(StatusLine).render())


async def test_a_default_pre_tokenizer_shows_in_the_status_line_and_inspector(store):
    app = ExplorerApp("hello world", encoding="ollama:me/plain:v1", palette="truecolor")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "⚠ default pre-tokenizer" in str(app.query_one(StatusLine).render())
        await pilot.press("tab")
        await pilot.pause()
        inspector = app.query_one("#inspector")
        assert "⚠ default pre-tokenizer" in str(inspector.border_title)
        assert isinstance(inspector, Static)
