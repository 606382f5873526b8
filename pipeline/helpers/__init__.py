"""The floor below everything: columns, stages, packing of cards and values, memory,
progress, errors, and the one rule for showing input text (`display.py`). They import
nothing of the project above them."""
