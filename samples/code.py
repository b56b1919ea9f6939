"""Inventory helpers for a small bakery.

This module is sample text for tokscope: it exists to show how a tokenizer
handles indentation, punctuation, numbers and identifiers in real code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, timedelta

# Prices are in cents to avoid floating-point surprises.
PRICES = {
    "sourdough": 650,
    "baguette": 320,
    "croissant": 275,
    "rye_loaf": 590,
    "cinnamon_roll": 410,
}

MAX_SHELF_LIFE_DAYS = 3
TAX_RATE = 0.0825
GOLDEN_RATIO = 1.6180339887

USAGE = """Usage: bakery.py [options]
	--date YYYY-MM-DD	report for a given day
	--verbose	print every line item
"""


@dataclass
class Batch:
    product: str
    quantity: int
    baked_on: date
    notes: list[str] = field(default_factory=list)

    def expires_on(self) -> date:
        return self.baked_on + timedelta(days=MAX_SHELF_LIFE_DAYS)

    def is_fresh(self, today: date) -> bool:
        # A batch baked today is always fresh, even at 23:59.
        return today <= self.expires_on()


class Inventory:
    def __init__(self) -> None:
        self._batches: list[Batch] = []

    def add(self, product: str, quantity: int, baked_on: date) -> Batch:
        if product not in PRICES:
            raise KeyError(f"unknown product: {product!r}")
        if quantity <= 0:
            raise ValueError(f"quantity must be positive, got {quantity}")
        batch = Batch(product, quantity, baked_on)
        self._batches.append(batch)
        return batch

    def discard_stale(self, today: date) -> int:
        """Remove expired batches and return how many items were thrown out."""
        kept, wasted = [], 0
        for batch in self._batches:
            if batch.is_fresh(today):
                kept.append(batch)
            else:
                wasted += batch.quantity
        self._batches = kept
        return wasted

    def value_cents(self) -> int:
        total = 0
        for batch in self._batches:
            total += PRICES[batch.product] * batch.quantity
        return total

    def report(self, today: date, verbose: bool = False) -> str:
        lines = [f"Inventory report for {today:%A %d %B %Y}"]
        if verbose:
            for i, batch in enumerate(self._batches, start=1):
                price = PRICES[batch.product] / 100
                lines.append(
                    f"  {i:>3}. {batch.product:<14} x{batch.quantity:<4}"
                    f" @ ${price:,.2f}  (expires {batch.expires_on()})"
                )
        gross = self.value_cents() / 100
        taxed = gross * (1 + TAX_RATE)
        lines.append(f"Total: ${gross:,.2f} (${taxed:,.2f} incl. tax)")
        return "\n".join(lines)


def loaves_for_party(guests: int, slices_per_guest: float = 2.5) -> int:
    """Each loaf gives about 18 slices; always round up."""
    return math.ceil(guests * slices_per_guest / 18)


if __name__ == "__main__":
    inv = Inventory()
    start = date(2026, 11, 28)
    inv.add("sourdough", 12, start)
    inv.add("croissant", 48, start + timedelta(days=1))
    inv.add("cinnamon_roll", 0x18, start + timedelta(days=2))
    print(inv.report(date(2026, 11, 30), verbose=True))
    print(f"Wasted: {inv.discard_stale(date(2026, 12, 2))} items")
    print(f"Loaves for 150 guests: {loaves_for_party(150)}")
