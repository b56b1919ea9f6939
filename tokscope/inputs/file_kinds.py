"""What kind of file a path is, in words, for the messages that refuse anything but a regular file
(a named pipe blocks, a device never ends): the user's text files and the model files alike."""

from __future__ import annotations

import stat

#: what a non-regular file is, for the message
_KINDS = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


def kind_of(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words (``a regular file`` for one).

    >>> kind_of(stat.S_IFIFO | 0o644), kind_of(stat.S_IFREG | 0o600)
    ('a named pipe', 'a regular file')
    """
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"
