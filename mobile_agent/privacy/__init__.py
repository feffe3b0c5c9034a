"""Keeping secrets out of everything the runtime writes or prints."""
