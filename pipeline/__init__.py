"""handaudit: audit Taiwanese Poker hand histories, row by row and cent by cent."""

__version__ = "0.1.0"
