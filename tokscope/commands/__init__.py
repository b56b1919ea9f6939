"""The subcommands of the command line, one module per command named after it (``import_`` for
``import``, a Python keyword), each with a ``register(subparsers)`` that adds its parser; the table
in :mod:`tokscope.cli` (``COMMANDS``) lists them, and a module is imported only when its command
runs. What several commands share is in :mod:`.common` (and :mod:`.train_options`); the one
renderer of "why" as text and JSON is :mod:`.why_text`.
"""
