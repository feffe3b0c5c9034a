"""The simulated phone (phone.py) and the parts it owns, one job each: packages.py, settings.py, tasks.py,
input.py, display.py; fs.py is its in-memory file system."""
