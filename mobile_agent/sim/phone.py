"""The simulated phone's world: screen, apps, activity stack, input, clipboard, state and event log.

CONTRACT (the wire side — adbd.py, shell.py, sync.py — codes against exactly these names; keep them stable):

    phone = Phone(PhoneConfig(...))
    phone.config.name / .serial_hint / .width / .height / .density / .model / .android_version / .sdk
    phone.profile: LatencyProfile          phone.faults: Faults
    phone.props -> dict[str, str]          # getprop (ro.product.model, ro.build.version.sdk, ...)
    phone.settings: dict[tuple[str, str], str]   # (namespace, key) -> value, for `settings get/put`
    phone.fs                                # mobile_agent.sim.fs.FileSystem (owned by the wire side)
    phone.installed_packages() -> list[str]
    phone.package_path(pkg) -> str | None   # "/data/app/<pkg>-1/base.apk"
    phone.current() -> tuple[str, str]      # (package, activity) in the foreground
    phone.launch(pkg, activity=None) -> bool          # False when not installed
    phone.force_stop(pkg); phone.clear_data(pkg)
    phone.tap(x, y); phone.long_press(x, y, duration_ms); phone.swipe(x1, y1, x2, y2, duration_ms)
    phone.swipe_points(points: list[tuple[int, int]], duration_ms); phone.drag(x1, y1, x2, y2, duration_ms)
    phone.key(code: int | str)              # keycode int or name: home back enter recent power wakeup menu del ...
    phone.input_text(text)                  # type into the focused editable field (from `input text` or AdbKeyboard)
    phone.clear_text()
    phone.clipboard -> str (get/set);  phone.paste()
    phone.ime_list() -> list[str]; phone.ime_current() -> str; phone.ime_set(ime_id) -> bool; phone.ime_enable(id)
    phone.hierarchy_xml() -> str            # uiautomator dump format (<hierarchy rotation="0"><node .../></hierarchy>)
    phone.screenshot(fmt: "png" | "jpeg", quality=80) -> bytes   # honours profile + faults; black on secure screens
    phone.screen_on: bool; phone.locked: bool; phone.battery_level: int; phone.orientation: int
    phone.u2_start() -> str | None          # None = started; else the error text to print ("already registered")
    phone.u2_stop(); phone.u2_running: bool
    phone.state                             # SimState: messages_sent, orders, transfers, settings_changed, typed ...
    phone.events: list[Event]               # append-only log of everything that happened (for tests and verify)
    phone.shell_log: list[str]              # every shell command line received, verbatim (injection proof)
    phone.lock: threading.RLock             # held by every mutating call; the wire side never needs it itself

Everything here is thread-safe: adbd serves each stream on its own thread.
"""
