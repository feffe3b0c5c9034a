"""The Android commands of the simulated phone's shell, one module per area; shell/android.py joins them."""
