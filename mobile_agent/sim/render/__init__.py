"""Pixels for the simulated phone: renderer.py lays a view tree out and encodes it; the other modules draw."""
