"""Placeholder: this feature's subcommands are being written."""


def register(subparsers) -> None:  # noqa: ARG001
    return None
