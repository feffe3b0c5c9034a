"""The simulated phone's /system/bin/sh: the `sh` language (sh.py), the Android commands (commands/) and the
session adbd runs them in (android.py)."""
