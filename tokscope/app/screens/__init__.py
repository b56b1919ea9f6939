"""Screens of the explorer (help, pickers, dialogs); feature screens live here too."""
