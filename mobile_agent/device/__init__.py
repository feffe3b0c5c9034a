"""The phone: adbutils and the uiautomator2 server's JSON-RPC (see android.py).

adbutils imports ``requests`` at start-up (adbutils/install.py, to install an APK from a URL), which costs ~70 ms
of every `mobile-agent run`'s start with bytecode and more without; nothing here installs from a URL. So before
any module of this package imports adbutils, ``requests`` is registered as a stand-in module that imports the real
one the first time an attribute of it is used. (importlib.util.LazyLoader cannot serve: on Python 3.11 an
``import`` statement reads the lazy module's ``__spec__``, which loads it.)
"""

from __future__ import annotations

import importlib
import sys
import types


class _ImportedWhenUsed(types.ModuleType):
    def __getattr__(self, attribute: str) -> object:
        real = sys.modules.get(self.__name__)
        if real is self or real is None:
            sys.modules.pop(self.__name__, None)
            real = importlib.import_module(self.__name__)
        return getattr(real, attribute)


if "requests" not in sys.modules:
    sys.modules["requests"] = _ImportedWhenUsed("requests")
