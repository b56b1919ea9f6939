"""The one save helper (issue 14 High 1, Medium 7 and 8; issue 10 item 8): atomic on a full disk,
modes, symbolic links, non-regular targets, exclusive creation, files changed on disk."""

from __future__ import annotations

import os
import stat
import threading

import pytest

from tokscope.core.formats import files
from tokscope.core.formats.files import ChangedOnDiskError, ExistsError, SaveError, save_text, stamp, write_atomic


def names(folder):
    return sorted(p.name for p in folder.iterdir())


def test_a_write_that_fails_half_way_leaves_the_old_file_whole(tmp_path, monkeypatch):
    """A full disk: the data is written, then the disk is full (os.write fails part-way)."""
    path = tmp_path / "notes.txt"
    old = ("line %d\n" % i for i in range(2000))
    path.write_text("".join(old))
    before = path.read_bytes()
    real_write = os.write
    written = []

    def full_disk(fd, data):
        if written:
            raise OSError(28, "No space left on device")
        written.append(len(data))
        return real_write(fd, bytes(data)[: len(data) // 2])

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(SaveError, match="No space left on device"):
        save_text(path, "new text " * 5000)
    assert path.read_bytes() == before
    assert names(tmp_path) == ["notes.txt"]


def test_the_original_mode_is_kept_and_new_files_get_a_plain_writes(tmp_path):
    old = os.umask(0o027)
    try:
        kept = tmp_path / "kept.txt"
        kept.write_text("x")
        os.chmod(kept, 0o604)
        write_atomic(kept, b"y")
        assert stat.S_IMODE(kept.stat().st_mode) == 0o604
        new = tmp_path / "new.txt"
        write_atomic(new, b"y")
        plain = tmp_path / "plain.txt"
        plain.write_text("y")
        assert stat.S_IMODE(new.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode) == 0o640
        private = write_atomic(tmp_path / "private", b"z", mode=0o600)
        assert stat.S_IMODE(private.stat().st_mode) == 0o600
    finally:
        os.umask(old)


def test_a_symlink_is_followed_to_its_target(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    assert write_atomic(link, b"new") == real
    assert link.is_symlink() and real.read_text() == "new"
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "later.txt")
    write_atomic(dangling, b"made")
    assert (tmp_path / "later.txt").read_text() == "made" and dangling.is_symlink()


def test_non_regular_targets_are_refused(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    for target, reason in ((tmp_path / "fifo", "not a regular file"), ("/dev/null", "not a regular file"),
                           (tmp_path, "is a directory")):
        with pytest.raises(SaveError, match=reason):
            write_atomic(target, b"x")
        with pytest.raises(SaveError, match=reason):
            files.check_target(target)
    assert names(tmp_path) == ["fifo"]


def test_exclusive_creation_never_replaces(tmp_path):
    path = tmp_path / "one.json"
    write_atomic(path, b"first", exclusive=True)
    with pytest.raises(ExistsError, match="--force"):
        write_atomic(path, b"second", exclusive=True)
    assert path.read_bytes() == b"first" and names(tmp_path) == ["one.json"]


def test_exclusive_creation_races(tmp_path):
    """Many threads create one name at once: exactly one wins, the file is whole."""
    path = tmp_path / "race.json"
    start = threading.Barrier(8)
    wins, losses = [], []

    def attempt(k):
        start.wait()
        try:
            write_atomic(path, b"%d" % k * 10000, exclusive=True)
            wins.append(k)
        except ExistsError:
            losses.append(k)

    threads = [threading.Thread(target=attempt, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1 and len(losses) == 7
    assert path.read_bytes() == b"%d" % wins[0] * 10000
    assert names(tmp_path) == ["race.json"]


def test_exclusive_creation_without_hard_links(tmp_path, monkeypatch):
    def no_links(src, dst):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    path = tmp_path / "fat.json"
    write_atomic(path, b"one", exclusive=True)
    with pytest.raises(ExistsError):
        write_atomic(path, b"two", exclusive=True)
    assert path.read_bytes() == b"one" and names(tmp_path) == ["fat.json"]


def test_a_file_changed_on_disk_is_not_overwritten(tmp_path):
    path = tmp_path / "notes.txt"
    seen = save_text(path, "mine")
    assert seen == stamp(path)
    with open(path, "a") as other:  # another program appends
        other.write(" and theirs")
    with pytest.raises(ChangedOnDiskError):
        save_text(path, "mine, edited", expect=seen)
    assert path.read_text() == "mine and theirs"
    save_text(path, "mine, edited", expect=stamp(path))
    assert path.read_text() == "mine, edited"


def test_a_lone_surrogate_cannot_be_saved(tmp_path):
    with pytest.raises(SaveError, match="surrogate"):
        save_text(tmp_path / "x.txt", "a\ud800b")
    assert names(tmp_path) == []


def test_check_target_probes_without_touching(tmp_path):
    path = tmp_path / "out.json"
    files.check_target(path)
    assert names(tmp_path) == []
    path.write_text("x")
    with pytest.raises(ExistsError, match="--force"):
        files.check_target(path, overwrite=False)
    source = tmp_path / "in.txt"
    source.write_text("corpus")
    (tmp_path / "alias").symlink_to(source)
    with pytest.raises(SaveError, match="it is the input"):
        files.check_target(tmp_path / "alias", inputs=[str(source)])
