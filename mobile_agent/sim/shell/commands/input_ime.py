"""Input and input methods: `input` (taps, swipes, keys, text), `ime`, `settings`, and the broadcasts the
AdbKeyboard input methods answer (`am broadcast -a ADB_KEYBOARD_...`)."""

from __future__ import annotations

import base64

from mobile_agent.sim.shell.sh import CommandTable, Ctx

U2_IME = "com.github.uiautomator/.AdbKeyboard"
ADBKEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"

COMMANDS = CommandTable()

INPUT_SOURCES = {
    "touchscreen",
    "touchpad",
    "keyboard",
    "dpad",
    "gamepad",
    "mouse",
    "stylus",
    "trackball",
    "joystick",
}

SECURITY_EXCEPTION = (
    "java.lang.SecurityException: Injecting input events requires the caller (or the source of the "
    "instrumentation, if any) to have the INJECT_EVENTS permission.\n"
)


def _key_arg(raw: str) -> int | str:
    """`input keyevent` takes 4, KEYCODE_BACK or BACK; the phone normalizes names."""
    return int(raw) if raw.lstrip("-").isdigit() else raw


def _num(raw: str) -> int:
    return int(float(raw))


@COMMANDS.register("input")
def _input(ctx: Ctx) -> int:
    args = ctx.args[1:]
    if args and args[0] in INPUT_SOURCES:
        args = args[1:]
    if len(args) >= 2 and args[0] == "-d":
        args = args[2:]
    if not args:
        return ctx.fail("Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]")
    sub, rest = args[0], args[1:]
    phone = ctx.phone
    if ctx.phone.faults.input_security_exception:
        return ctx.fail(f"Exception occurred while executing '{sub}':\n{SECURITY_EXCEPTION}")
    try:
        if sub == "tap" and len(rest) == 2:
            phone.tap(_num(rest[0]), _num(rest[1]))
        elif sub in ("swipe", "draganddrop") and len(rest) in (4, 5):
            x1, y1, x2, y2 = (_num(v) for v in rest[:4])
            duration = _num(rest[4]) if len(rest) == 5 else 300
            if sub == "swipe":
                phone.swipe(x1, y1, x2, y2, duration)
            else:
                phone.drag(x1, y1, x2, y2, duration)
        elif sub == "keyevent" and rest:
            codes = [a for a in rest if a not in ("--longpress", "--doubletap", "--async")]
            for code in codes:
                phone.key(_key_arg(code))
        elif sub == "text" and rest:
            text = rest[0].replace("%s", " ")
            if not text.isascii():
                # Android's KeyCharacterMap cannot map non-ASCII characters: nothing is typed.
                return ctx.fail("java.lang.NullPointerException: Attempt to get length of null array")
            phone.input_text(text)
        else:
            return ctx.fail(f"Error: Unknown command or bad arguments: {sub} {' '.join(rest)}")
    except ValueError:
        return ctx.fail(f"Error: Invalid arguments for command: {sub}")
    except PermissionError as exc:
        return ctx.fail(f"Exception occurred while executing '{sub}':\njava.lang.SecurityException: {exc}")
    return 0


def _decode_b64(text: str) -> str | None:
    try:
        return base64.b64decode(text, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None


def adb_keyboard_broadcast(ctx: Ctx, action: str, extras: dict[str, str]) -> tuple[int, str | None]:
    """(result, data) of the broadcasts the AdbKeyboard IMEs answer; (0, None) when no receiver is active."""
    phone = ctx.phone
    ime = phone.ime_current()
    if ime == U2_IME and action.startswith("ADB_KEYBOARD_"):
        if action == "ADB_KEYBOARD_INPUT_TEXT":
            text = _decode_b64(extras.get("text", ""))
            if text is None:
                return 0, "invalid base64 text"
            phone.input_text(text)
        elif action == "ADB_KEYBOARD_CLEAR_TEXT":
            phone.clear_text()
        elif action == "ADB_KEYBOARD_INPUT_KEYCODE":
            phone.key(int(extras.get("code", "0")))
        elif action in ("ADB_KEYBOARD_EDITOR_CODE", "ADB_KEYBOARD_SMART_ENTER"):
            phone.key("enter")
        elif action == "ADB_KEYBOARD_GET_CLIPBOARD":
            return -1, base64.b64encode(phone.clipboard.encode()).decode()
        elif action == "ADB_KEYBOARD_SET_CLIPBOARD":
            phone.clipboard = _decode_b64(extras.get("text", "")) or ""
        elif action != "ADB_KEYBOARD_HIDE":
            return 0, None
        return -1, "success"
    if ime == ADBKEYBOARD_IME and action in (
        "ADB_INPUT_TEXT",
        "ADB_INPUT_B64",
        "ADB_CLEAR_TEXT",
        "ADB_INPUT_CODE",
    ):
        if action == "ADB_INPUT_TEXT":
            phone.input_text(extras.get("msg", ""))
        elif action == "ADB_INPUT_B64":
            phone.input_text(_decode_b64(extras.get("msg", "")) or "")
        elif action == "ADB_CLEAR_TEXT":
            phone.clear_text()
        else:
            phone.key(int(extras.get("code", "0")))
    return 0, None


@COMMANDS.register("ime")
def _ime(ctx: Ctx) -> int:
    sub = ctx.args[1] if len(ctx.args) > 1 else ""
    rest = [a for a in ctx.args[2:] if not a.startswith("-")]
    phone = ctx.phone
    if sub == "list":
        ids = phone.ime_list()
        if "-s" in ctx.args:
            ctx.out("".join(f"{ime}\n" for ime in ids))
        else:
            ctx.out("".join(f"{ime}:\n  mId={ime} mSettingsActivityName=null\n" for ime in ids))
        return 0
    if sub in ("set", "enable", "disable") and rest:
        ime_id = rest[0]
        if ime_id not in phone.ime_list():
            return ctx.fail(f"Unknown input method {ime_id} cannot be {sub}d for user #0")
        if sub == "set":
            phone.ime_set(ime_id)
            ctx.out(f"Input method {ime_id} selected for user #0\n")
        elif sub == "enable":
            phone.ime_enable(ime_id)
            ctx.out(f"Input method {ime_id}: now enabled for user #0\n")
        else:
            ctx.out(f"Input method {ime_id}: now disabled for user #0\n")
        return 0
    return ctx.fail("ime: unknown command; use list, set, enable or disable", 255)


DEFAULT_IME_SETTING = ("secure", "default_input_method")


@COMMANDS.register("settings")
def _settings(ctx: Ctx) -> int:
    args = [a for a in ctx.args[1:]]
    if "--user" in args:
        at = args.index("--user")
        del args[at : at + 2]
    sub, rest = (args[0], args[1:]) if args else ("", [])
    phone = ctx.phone
    if sub == "get" and len(rest) == 2:
        key = (rest[0], rest[1])
        value = phone.ime_current() if key == DEFAULT_IME_SETTING else phone.settings.get(key)
        ctx.out(f"{'null' if value is None else value}\n")
        return 0
    if sub == "put" and len(rest) >= 3:
        key = (rest[0], rest[1])
        if key == DEFAULT_IME_SETTING and rest[2] in phone.ime_list():
            phone.ime_set(rest[2])
        phone.settings[key] = rest[2]
        return 0
    if sub == "delete" and len(rest) == 2:
        deleted = phone.settings.pop((rest[0], rest[1]), None) is not None
        ctx.out(f"Deleted {int(deleted)} rows\n")
        return 0
    if sub == "list" and len(rest) == 1:
        ctx.out("".join(f"{k}={v}\n" for (ns, k), v in sorted(phone.settings.items()) if ns == rest[0]))
        return 0
    return ctx.fail("usage: settings [--user N] get|put|delete|list NAMESPACE [KEY [VALUE]]", 255)
