"""Synthetic hand histories: tables simulated by the rules, settled by the engine, faults listed."""
