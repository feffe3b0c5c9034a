"""Meituan, the food delivery app: app.py (its data and what taps do), browse.py and order.py (its screens)."""
