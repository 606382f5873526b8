"""handaudit: audit hand histories of Taiwanese Poker (and Taiwanese Jokers), closed
Chinese Poker, Open-Face Chinese and Pineapple, row by row and cent by cent."""

__version__ = "0.1.0"
