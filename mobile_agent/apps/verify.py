"""Check manifests against a real (or simulated) phone, and record what was seen in the manifest files.

Reading uses plain shell commands over adb (``pm list packages``, ``cmd package resolve-activity --brief``,
``dumpsys package``); writing edits only the ``source:`` block of a manifest so comments and key order survive.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from mobile_agent.apps.registry import AppRegistry
from mobile_agent.apps.schema import AppManifest, Verification
from mobile_agent.apps.yamlsrc import parse_yaml, validate
from mobile_agent.errors import ConfigError, DeviceError

log = logging.getLogger(__name__)

Shell = Callable[
    [list[str]], str
]  # runs one command (argv, never a shell string) on the phone, returns stdout

PARALLEL_SHELLS = 6
_VERSION_RE = re.compile(r"^\s*versionName=(\S+)", re.MULTILINE)


@dataclass(frozen=True)
class PhoneFacts:
    serial: str
    model: str
    android: str


@dataclass(frozen=True)
class AppCheck:
    """What the phone said about one manifest."""

    app_id: str
    name: str
    package: str | None  # the installed package (primary preferred); None when none of them is installed
    launch_activity: str | None = (
        None  # "pkg/activity" as resolve-activity answered; None if nothing resolved
    )
    app_version: str | None = None

    @property
    def installed(self) -> bool:
        return self.package is not None

    @property
    def launchable(self) -> bool:
        return self.launch_activity is not None


@dataclass(frozen=True)
class VerifyReport:
    phone: PhoneFacts
    checks: list[AppCheck]

    @property
    def installed(self) -> list[AppCheck]:
        return [c for c in self.checks if c.installed]

    @property
    def missing(self) -> list[AppCheck]:
        return [c for c in self.checks if not c.installed]


def adb_shell(device) -> Shell:  # device: adbutils.AdbDevice
    """A Shell over an adbutils device; adb errors become DeviceError."""
    import adbutils

    def run(argv: list[str]) -> str:
        try:
            return str(device.shell(argv, timeout=30))
        except (adbutils.AdbError, OSError) as exc:
            raise DeviceError(f"adb shell {' '.join(argv)!r} failed on {device.serial}: {exc}") from exc

    return run


def verify_phone(
    registry: AppRegistry, shell: Shell, serial: str, app_ids: list[str] | None = None
) -> VerifyReport:
    """Which manifests' packages are installed, whether they have a launcher activity, and their versions.

    ``app_ids`` limits the check to those apps (default: every manifest).
    """
    facts = PhoneFacts(
        serial=serial,
        model=shell(["getprop", "ro.product.model"]).strip() or "unknown",
        android=shell(["getprop", "ro.build.version.release"]).strip() or "unknown",
    )
    installed = parse_package_list(shell(["pm", "list", "packages"]))

    def check(manifest: AppManifest) -> AppCheck:
        package = next((p for p in manifest.packages if p in installed), None)
        if package is None:
            return AppCheck(manifest.id, manifest.name, None)
        resolved = parse_resolved_activity(shell(["cmd", "package", "resolve-activity", "--brief", package]))
        version = parse_version_name(shell(["dumpsys", "package", package]))
        return AppCheck(manifest.id, manifest.name, package, resolved, version)

    manifests = [m for m in registry if app_ids is None or m.id in app_ids]
    # Two shell round trips per installed app add up over ~90 apps; adb serves parallel shell streams fine.
    with ThreadPoolExecutor(max_workers=PARALLEL_SHELLS) as pool:
        checks = list(pool.map(check, manifests))
    return VerifyReport(facts, checks)


def parse_package_list(output: str) -> set[str]:
    return {
        line.strip()[len("package:") :] for line in output.splitlines() if line.strip().startswith("package:")
    }


def parse_resolved_activity(output: str) -> str | None:
    """The last line of ``resolve-activity --brief`` is ``pkg/activity`` when something resolved."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    return lines[-1] if lines and "/" in lines[-1] and " " not in lines[-1] else None


def parse_version_name(output: str) -> str | None:
    found = _VERSION_RE.search(output)
    return found.group(1) if found else None


# ---- writing verifications back ---------------------------------------------------------------------------------
def record_verifications(
    registry: AppRegistry, report: VerifyReport, today: dt.date | None = None
) -> list[Path]:
    """Add a ``source.verified`` entry for every installed app to the file it came from; returns changed files.

    An earlier entry for the same package on the same phone model and Android version is replaced.
    """
    today = today or dt.date.today()
    changed = []
    for check in report.installed:
        manifest = registry.get(check.app_id)
        if manifest is None or check.package is None:
            continue
        entry = Verification(
            package=check.package,
            device=report.phone.model,
            android=report.phone.android,
            app_version=check.app_version,
            launch_activity=check.launch_activity,
            date=today,
        )
        path = registry.path_of(check.app_id)
        if write_verification(path, manifest, entry):
            changed.append(path)
    return changed


def write_verification(path: Path, manifest: AppManifest, entry: Verification) -> bool:
    """Rewrite only the ``verified:`` list inside ``source:``. False when the entry was already there."""
    same = (entry.package, entry.device, entry.android)
    kept = [v for v in manifest.source.verified if (v.package, v.device, v.android) != same]
    if entry in manifest.source.verified:
        return False
    entries = [*kept, entry]
    text = path.read_text(encoding="utf-8")
    new_text = _replace_verified_block(text, manifest, entries, path)
    validate(AppManifest, parse_yaml(new_text, str(path)))  # never write a file that would not load
    if not os.access(path, os.W_OK):
        raise ConfigError(
            "manifest file is not writable",
            "copy it into your --apps-dir folder and run verify --write again",
            path=str(path),
        )
    _atomic_write(path, new_text)
    log.info("recorded %s on %s in %s", entry.package, entry.device, path)
    return True


def _replace_verified_block(text: str, manifest: AppManifest, entries: list[Verification], path: Path) -> str:
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if re.match(r"^source:\s*(#.*)?$", line)), None)
    if start is None:  # `source: {kind: ...}` on one line: rewrite that line as a block
        flow = next((i for i, line in enumerate(lines) if line.startswith("source:")), None)
        if flow is None:
            raise ConfigError("manifest has no `source:` key", "add one", path=str(path))
        block = _source_block(manifest, entries)
        return "".join(lines[:flow] + block + lines[flow + 1 :])
    end = start + 1  # the source block: indented, blank or comment lines after `source:`
    while end < len(lines) and (lines[end].startswith((" ", "\t")) or not lines[end].strip()):
        end += 1
    while end > start + 1 and not lines[end - 1].strip():  # trailing blank lines belong to what follows
        end -= 1
    body = lines[start + 1 : end]
    v_start = next((i for i, line in enumerate(body) if re.match(r"^\s{2}verified:", line)), None)
    if v_start is not None:
        v_end = v_start + 1
        while v_end < len(body) and (re.match(r"^\s{3,}", body[v_end]) or not body[v_end].strip()):
            v_end += 1
        body = body[:v_start] + body[v_end:]
    if body and not body[-1].endswith("\n"):
        body[-1] += "\n"
    return "".join(lines[: start + 1] + body + _verified_lines(entries) + lines[end:])


def _source_block(manifest: AppManifest, entries: list[Verification]) -> list[str]:
    src = manifest.source
    out = ["source:\n", f"  kind: {src.kind}\n"]
    if src.lists:
        out.append(f"  lists: [{', '.join(json.dumps(x, ensure_ascii=False) for x in src.lists)}]\n")
    if src.refs:
        out.append(f"  refs: [{', '.join(json.dumps(x, ensure_ascii=False) for x in src.refs)}]\n")
    if src.note:
        out.append(f"  note: {json.dumps(src.note, ensure_ascii=False)}\n")
    return out + _verified_lines(entries)


def _verified_lines(entries: list[Verification]) -> list[str]:
    out = ["  verified:\n"]
    for v in entries:
        fields = {k: val for k, val in v.model_dump().items() if val is not None and k != "date"}
        parts = [f"{k}: {json.dumps(val, ensure_ascii=False)}" for k, val in fields.items()]
        parts.append(f"date: {v.date.isoformat()}")
        out.append(f"    - {{{', '.join(parts)}}}\n")
    return out


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
