"""Names a user types and the folders tokscope keeps things in (issue 10 items 3 and 8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tokscope.sources import names
from tokscope.sources.errors import BadNameError


@pytest.fixture
def home(tmp_path, monkeypatch):
    for var in ("TOKSCOPE_DATA_DIR", "TOKSCOPE_CACHE_DIR", "TOKSCOPE_STATE_DIR", "XDG_DATA_HOME", "XDG_CACHE_HOME",
                "XDG_STATE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def test_the_overrides_win(home, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "xdg-cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "xdg-state"))
    assert names.user_data_dir() == home / "xdg-data" / "tokscope"
    assert names.user_cache_dir() == home / "xdg-cache" / "tokscope"
    assert names.user_state_dir() == home / "xdg-state" / "tokscope"
    monkeypatch.setenv("TOKSCOPE_DATA_DIR", str(home / "mine"))
    monkeypatch.setenv("TOKSCOPE_CACHE_DIR", str(home / "cache"))
    monkeypatch.setenv("TOKSCOPE_STATE_DIR", str(home / "state"))
    assert (names.user_data_dir(), names.user_cache_dir(), names.user_state_dir()) == (
        home / "mine", home / "cache", home / "state")
    assert names.saved_dir() == home / "mine" / "tokenizers"


def test_platform_folders_and_the_old_locations(home, monkeypatch):
    import platformdirs

    assert names.user_data_dir() == Path(platformdirs.user_data_dir("tokscope", appauthor=False))
    # where platformdirs would put the folders elsewhere (macOS), a folder of an earlier tokscope is kept
    monkeypatch.setattr(platformdirs, "user_data_dir", lambda *a, **k: str(home / "Library" / "tokscope"))
    monkeypatch.setattr(platformdirs, "user_cache_dir", lambda *a, **k: str(home / "Library" / "Caches" / "tokscope"))
    assert names.user_data_dir() == home / "Library" / "tokscope"
    (home / ".local" / "share" / "tokscope").mkdir(parents=True)
    (home / ".cache" / "tokscope").mkdir(parents=True)
    assert names.user_data_dir() == home / ".local" / "share" / "tokscope"
    assert names.user_cache_dir() == home / ".cache" / "tokscope"
    (home / "Library" / "tokscope").mkdir(parents=True)
    assert names.user_data_dir() == home / "Library" / "tokscope"


@pytest.mark.parametrize("bad, why", [
    ("", "empty"), ("../x", "cannot be"), (".hidden", "cannot be"), ("-e", "cannot be"), ("a/b", "cannot be"),
    (" pad", "cannot be"), ("a:b", "cannot be"), ("gpt2", "built-in"), ("CL100K_BASE", "built-in"),
    ("o200k", "built-in"), ("x\x1b[2J", "control"), ("rlo\u202e", "control"), ("n\udcffame", "not valid UTF-8"),
    ("x" * 300, "too long"),
])
def test_saved_names_are_checked(bad, why):
    with pytest.raises(BadNameError, match=why) as info:
        names.check_saved_name(bad)
    assert "\x1b" not in str(info.value) and "\u202e" not in str(info.value)


@pytest.mark.parametrize("good", ["my-bpe", "v2.1_final", "日本語", "gpt2-mine", "café"])
def test_plain_names_pass(good):
    assert names.check_saved_name(good) == good


def test_one_default_training_pattern_for_the_cli_and_the_screen():
    from tokscope.commands import train_options

    assert train_options.DEFAULT_PATTERN == names.DEFAULT_TRAINING_PATTERN
    assert names.DEFAULT_TRAINING_PATTERN in names.PATTERN_NAMES
    assert set(names.PATTERN_HELP) == set(names.PATTERN_NAMES)
    for name in names.PATTERN_NAMES:
        pattern, label = names.pattern_for(name)
        assert label == name and pattern
