"""tokscope's version, in a module of its own: the cache tags files with it, and ``--version``
prints it, without importing the package's entry points (no import cycle through ``tokscope``)."""

__version__ = "0.1.0"
