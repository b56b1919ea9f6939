"""The explorer: a Textual app over the core (see ``features.py`` for the hooks other screens use)."""
