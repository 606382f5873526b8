"""Checks: recorded outcomes against recomputed ones, and table rules across hands."""
