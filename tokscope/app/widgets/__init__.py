"""Widgets of the explorer."""
