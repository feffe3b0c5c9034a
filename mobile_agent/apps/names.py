"""How people name apps: exact, alias, normalised, and close matches to suggest."""

from __future__ import annotations

import difflib
import unicodedata


def normalise(name: str) -> str:
    """Fold width (ＷｅＣｈａｔ -> wechat), case, spaces and punctuation away: " We-Chat！" -> "wechat"."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return "".join(ch for ch in folded if unicodedata.category(ch)[0] in "LN")


class NameIndex:
    """Maps every name and alias of every app to the app's id, at three levels of strictness."""

    def __init__(self) -> None:
        self.exact: dict[str, str] = {}  # name as written -> id
        self.folded: dict[str, str] = {}  # casefolded + stripped -> id (aliases are matched loosely on case)
        self.normalised: dict[str, str] = {}  # normalise(name) -> id

    def add(self, name: str, app_id: str) -> None:
        self.exact.setdefault(name, app_id)
        self.folded.setdefault(name.strip().casefold(), app_id)
        key = normalise(name)
        if key:
            self.normalised.setdefault(key, app_id)

    def lookup(self, name: str) -> str | None:
        """exact -> alias (case-insensitive) -> normalised; None when nothing matches."""
        return (
            self.exact.get(name)
            or self.folded.get(name.strip().casefold())
            or self.normalised.get(normalise(name))
        )

    def similar_ids(self, name: str, limit: int = 5) -> list[str]:
        """Apps whose names look like ``name``: shared substrings first (美团外 -> 美团外卖), then difflib's."""
        key = normalise(name)
        if not key:
            return []
        found: list[str] = []
        if len(key) >= 2:
            found += [
                k for k in self.normalised if key in k or (2 * len(k) >= len(key) >= len(k) >= 2 and k in key)
            ]
            found.sort(key=lambda k: (abs(len(k) - len(key)), k))
        found += difflib.get_close_matches(key, list(self.normalised), n=limit, cutoff=0.6)
        out: list[str] = []
        for k in found:
            app_id = self.normalised[k]
            if app_id not in out:
                out.append(app_id)
        return out[:limit]
