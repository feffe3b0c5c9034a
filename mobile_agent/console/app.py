"""The console as an ASGI app (Starlette) and the server that runs it (uvicorn), bound to loopback by default.

app = create_app(store, token)                      # every request needs the token (a cookie after the first)
serve(store, host="127.0.0.1", port=8765, token=token)
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from pathlib import Path

from starlette.applications import Starlette
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from mobile_agent.console.events import ChangeStream
from mobile_agent.console.forms import Forms
from mobile_agent.console.live import DEFAULT_FPS
from mobile_agent.console.live_routes import LiveRoutes
from mobile_agent.console.media import Shots
from mobile_agent.console.pages import Pages
from mobile_agent.console.security import TokenGate
from mobile_agent.store.store import TrajectoryStore

STATIC = Path(__file__).parent / "static"


def create_app(
    store: TrajectoryStore,
    token: str,
    *,
    user: str = "console",
    poll_s: float = 0.3,
    adb: str | None = None,
    live_fps: float = DEFAULT_FPS,
) -> TokenGate:
    """``adb``: the adb server of phones the store knows only from their episodes (the farm's phones carry
    their own); ``live_fps``: the most frames a second the live page takes from a phone."""
    pages, forms, shots = Pages(store, token), Forms(store, token, user), Shots(store)
    live = LiveRoutes(store, token, user, pages.render, adb=adb, fps=live_fps)
    routes = [
        Route("/", pages.overview),
        Route("/phones", pages.phones),
        Route("/runs", pages.runs),
        Route("/runs/{run_id:str}", pages.run),
        Route("/episodes/{episode_id:str}", pages.episode),
        Route("/inbox", pages.inbox),
        Route("/inbox/answer", forms.answer, methods=["POST"]),
        Route("/phones/release", forms.release, methods=["POST"]),
        Route("/shots/{episode_id:str}/{index:int}.jpg", shots.step),
        Route("/questions/{episode_id:str}.jpg", shots.question),
        Route("/live", live.page),
        Route("/live/stream", live.stream),
        Route("/live/control", live.control, methods=["POST"]),
        Route("/live/input", live.input, methods=["POST"]),
        Route("/events", ChangeStream(store, poll_s=poll_s).stream),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return TokenGate(Starlette(routes=routes), token)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def console_url(host: str, port: int, token: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/?token={token}"


class BackgroundConsole:
    """The console served from a thread on a free loopback port (tests, benchmarks, embedding in a program).

    with BackgroundConsole(store) as console:
        urllib.request.urlopen(console.url)      # console.url carries the token
    """

    def __init__(
        self,
        store: TrajectoryStore,
        *,
        token: str | None = None,
        user: str = "console",
        adb: str | None = None,
        live_fps: float = DEFAULT_FPS,
    ) -> None:
        import uvicorn

        from mobile_agent.console.security import new_token

        self.token = token or new_token()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        config = uvicorn.Config(
            create_app(store, self.token, user=user, adb=adb, live_fps=live_fps),
            log_level="warning",
            access_log=False,
            lifespan="off",
        )
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return console_url("127.0.0.1", self.port, self.token)

    def __enter__(self) -> BackgroundConsole:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self._thread.join(10)
        self.sock.close()


__all__ = ["STATIC", "BackgroundConsole", "console_url", "create_app", "is_loopback"]
