"""Reads the package name out of an APK's binary AndroidManifest.xml (AXML), for `pm install`."""

from __future__ import annotations

import io
import struct
import zipfile


def apk_package_name(apk: bytes) -> str | None:
    """The `package` attribute of an APK's binary AndroidManifest.xml (AXML), or None if unreadable."""
    try:
        with zipfile.ZipFile(io.BytesIO(apk)) as archive:
            manifest = archive.read("AndroidManifest.xml")
    except (zipfile.BadZipFile, KeyError, OSError):
        return None
    strings: list[str] = []
    offset = 8  # skip the XML file header chunk
    while offset + 8 <= len(manifest):
        chunk_type, header_size, chunk_size = struct.unpack_from("<HHI", manifest, offset)
        if chunk_size < 8:
            return None
        if chunk_type == 0x0001:  # string pool
            count, _, flags, strings_start = struct.unpack_from("<IIII", manifest, offset + 8)
            utf8 = bool(flags & 0x100)
            for index in range(count):
                (rel,) = struct.unpack_from("<I", manifest, offset + header_size + 4 * index)
                strings.append(_pool_string(manifest, offset + strings_start + rel, utf8))
        elif chunk_type == 0x0102:  # start element
            name_index, attr_start, attr_size, attr_count = struct.unpack_from("<IHHH", manifest, offset + 20)
            if strings[name_index] == "manifest":
                base = offset + 16 + attr_start
                for k in range(attr_count):
                    _, attr_name, raw_value = struct.unpack_from("<III", manifest, base + k * attr_size)
                    if strings[attr_name] == "package" and raw_value != 0xFFFFFFFF:
                        return strings[raw_value]
                return None
        offset += chunk_size
    return None


def _pool_string(data: bytes, pos: int, utf8: bool) -> str:
    if utf8:
        pos += 2 if data[pos] & 0x80 else 1  # length in characters
        length = data[pos]
        if length & 0x80:
            length = ((length & 0x7F) << 8) | data[pos + 1]
            pos += 1
        return data[pos + 1 : pos + 1 + length].decode("utf-8", "replace")
    length = int.from_bytes(data[pos : pos + 2], "little")
    if length & 0x8000:
        length = ((length & 0x7FFF) << 16) | int.from_bytes(data[pos + 2 : pos + 4], "little")
        pos += 2
    return data[pos + 2 : pos + 2 + 2 * length].decode("utf-16-le", "replace")
