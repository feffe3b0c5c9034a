"""The simulated phone's apps, as data plus small builders: base.py is the frame they plug into, node.py the view
tree they build, kit.py the widgets; catalog.py lists the built-in apps; popups.py, baits.py and system.py are the
screens that go on top of them (popups, red-team baits, the lock screen and recents)."""
