"""The explorer: a Textual app over the core (``views.py`` is the registry of its screens and the
state API they read; ``messages.py`` the events they get)."""
