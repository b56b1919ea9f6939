"""Subcommands of the CLI, one module per feature; each has ``register(subparsers)``."""
