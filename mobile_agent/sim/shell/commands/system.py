"""System information: getprop, wm and dumpsys (window, activity, display, battery, power, input_method, package).

The dumpsys texts follow what the regexes in adbutils 2.12 and uiautomator2 3.7.1 parse.
"""

from __future__ import annotations

import json
import zlib

from mobile_agent.sim.shell.sh import CommandTable, Ctx

COMMANDS = CommandTable()


@COMMANDS.register("getprop")
def _getprop(ctx: Ctx) -> int:
    props = ctx.phone.props
    if len(ctx.args) == 1:
        ctx.out("".join(f"[{key}]: [{value}]\n" for key, value in sorted(props.items())))
    else:
        ctx.out(props.get(ctx.args[1], ctx.args[2] if len(ctx.args) > 2 else "") + "\n")
    return 0


@COMMANDS.register("wm")
def _wm(ctx: Ctx) -> int:
    config = ctx.phone.config
    sub = ctx.args[1] if len(ctx.args) > 1 else ""
    if sub == "size" and len(ctx.args) == 2:
        ctx.out(f"Physical size: {config.width}x{config.height}\n")
    elif sub == "density" and len(ctx.args) == 2:
        ctx.out(f"Physical density: {config.density}\n")
    else:
        return ctx.fail(f"wm: unsupported in the simulator: {' '.join(ctx.args[1:])}", 255)
    return 0


def _short_hash(*parts: object) -> str:
    return f"{zlib.crc32('/'.join(map(str, parts)).encode()):08x}"[:7]


def _pid_of(package: str) -> int:
    return 1000 + zlib.crc32(package.encode()) % 30000


def _task_id(package: str) -> int:
    return 10 + zlib.crc32(package.encode()) % 90


def _activity_record(package: str, activity: str) -> str:
    return f"ActivityRecord{{{_short_hash(package, activity)} u0 {package}/{activity} t{_task_id(package)}}}"


def _dumpsys_window(ctx: Ctx) -> str:
    phone = ctx.phone
    package, activity = phone.current()
    record = _activity_record(package, activity)
    if phone.locked:
        focus = f"Window{{{_short_hash('shade')} u0 NotificationShade}}"
    else:
        focus = f"Window{{{_short_hash(package, activity, 'w')} u0 {package}/{activity}}}"
    return (
        "WINDOW MANAGER WINDOWS (dumpsys window windows)\n"
        f"  Window #0 {focus}:\n"
        f"    mDisplayId=0 rootTaskId={_task_id(package)} mSession=Session{{{_short_hash(package)} "
        f"{_pid_of(package)}:u0a10123}}\n"
        f"    mHasSurface={str(phone.screen_on).lower()} isReadyForDisplay()={str(phone.screen_on).lower()}\n"
        "\n"
        f"  mGlobalConfiguration={{1.0 ?mcc?mnc [zh_CN] ldltr sw411dp w411dp h914dp 440dpi nrml long port}}\n"
        f"  mCurrentFocus={focus}\n"
        f"  mFocusedApp={record}\n"
        f"  mShowingLockscreen={str(phone.locked).lower()} mShowingDream=false mDreamingLockscreen=false\n"
    )


def _dumpsys_activity(ctx: Ctx, what: str) -> str:
    package, activity = ctx.phone.current()
    record = _activity_record(package, activity)
    task = _task_id(package)
    if what == "top":
        return (
            "TASK dumpsys activity top\n"
            f"TASK 10123:{package} id={task} userId=0\n"
            f"  ACTIVITY {package}/{activity} {_short_hash(package, activity)} pid={_pid_of(package)}\n"
        )
    return (
        "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n"
        "Display #0 (activities from top to bottom):\n"
        f"  * Task{{{_short_hash(task)} #{task} type=standard A=10123:{package} U=0 visible=true "
        "mode=fullscreen translucent=false sz=1}\n"
        f"    * {record}\n"
        "\n"
        f"  ResumedActivity: {record}\n"
        f"  mResumedActivity: {record}\n"
        f"  topResumedActivity={record}\n"
    )


def _dumpsys_display(ctx: Ctx) -> str:
    config, rotation = ctx.phone.config, ctx.phone.orientation
    w, h = (config.height, config.width) if rotation % 2 else (config.width, config.height)
    viewport = (
        f"DisplayViewport{{type=INTERNAL, valid=true, isActive=true, displayId=0, uniqueId='local:0', "
        f"physicalPort=0, orientation={rotation}, logicalFrame=Rect(0, 0 - {w}, {h}), "
        f"physicalFrame=Rect(0, 0 - {w}, {h}), deviceWidth={w}, deviceHeight={h}}}"
    )
    return (
        "DISPLAY MANAGER (dumpsys display)\n"
        f"  mViewports=[{viewport}]\n"
        f'  mBaseDisplayInfo=DisplayInfo{{"Built-in Screen", displayId 0, real {config.width} x {config.height}, '
        f"rotation {rotation}, density {config.density}, state {'ON' if ctx.phone.screen_on else 'OFF'}}}\n"
    )


def _dumpsys_battery(ctx: Ctx) -> str:
    return (
        "Current Battery Service state:\n  AC powered: false\n  USB powered: true\n  Wireless powered: false\n"
        "  Max charging current: 500000\n  Max charging voltage: 5000000\n  Charge counter: 3000000\n"
        "  status: 2\n  health: 2\n  present: true\n"
        f"  level: {ctx.phone.battery_level}\n  scale: 100\n  voltage: 4200\n  temperature: 280\n"
        "  technology: Li-ion\n"
    )


def _dumpsys_power(ctx: Ctx) -> str:
    on = ctx.phone.screen_on
    return (
        "POWER MANAGER (dumpsys power)\n\nPower Manager State:\n"
        f"  mWakefulness={'Awake' if on else 'Asleep'}\n  mWakefulnessChanging=false\n  mIsPowered=true\n"
        f"  mHoldingWakeLockSuspendBlocker={str(on).lower()}\n"
        f"  mHoldingDisplaySuspendBlocker={str(on).lower()}\n"
        f"Display Power: state={'ON' if on else 'OFF'}\n"
    )


def _dumpsys_input_method(ctx: Ctx) -> str:
    return f"  mCurMethodId={ctx.phone.ime_current()}\n  mInputShown=false\n"


def dumpsys_package(ctx: Ctx, package: str) -> str:
    if package not in ctx.phone.installed_packages():
        return ""
    return (
        f"Packages:\n  Package [{package}] ({_short_hash(package)}):\n    userId=10123\n"
        f"    codePath={ctx.phone.package_path(package) or ''}\n    versionCode=1 minSdk=24 targetSdk=33\n"
        "    versionName=1.0.0\n    pkgFlags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ]\n"
        "    firstInstallTime=2024-01-01 08:00:00\n    lastUpdateTime=2024-01-01 08:00:00\n"
    )


@COMMANDS.register("dumpsys")
def _dumpsys(ctx: Ctx) -> int:
    service = ctx.args[1] if len(ctx.args) > 1 else ""
    rest = ctx.args[2:]
    if service == "window":
        ctx.out(_dumpsys_window(ctx))
    elif service == "activity":
        what = rest[0] if rest else "activities"
        ctx.out(_dumpsys_activity(ctx, "top" if what == "top" else "activities"))
    elif service == "display":
        ctx.out(_dumpsys_display(ctx))
    elif service == "battery":
        ctx.out(_dumpsys_battery(ctx))
    elif service == "power":
        ctx.out(_dumpsys_power(ctx))
    elif service == "input_method":
        ctx.out(_dumpsys_input_method(ctx))
    elif service == "package" and rest:
        ctx.out(dumpsys_package(ctx, rest[-1]))
    else:
        return ctx.fail(f"Can't find service: {service}")
    return 0


@COMMANDS.register("sim-requests")
def _sim_requests(ctx: Ctx) -> int:
    """Not an Android command: the simulated phone's request counts as JSON (benchmarks read them; this command is
    not counted). ``sim-requests reset`` also sets them to zero."""
    phone = ctx.phone
    with phone.lock:
        counts = dict(phone.requests)
        if ctx.args[1:2] == ["reset"]:
            phone.requests.clear()
    ctx.out(json.dumps(counts, sort_keys=True) + "\n")
    return 0


@COMMANDS.register("sim-state")
def _sim_state(ctx: Ctx) -> int:
    """Not an Android command: everything a task's ``state:`` check can name (messages sent, orders, transfers,
    settings, the foreground app, the screen, the balance), as one JSON object. It is how a verifier in another
    process (a batch on `sim up` phones) reads the world state an in-process test reads with ``phone_state``; a real
    phone has no such command, so it has no state to read."""
    from mobile_agent.sim.scenario import phone_state

    ctx.out(json.dumps(phone_state(ctx.phone), ensure_ascii=False, sort_keys=True, default=str) + "\n")
    return 0
