"""Completion of values as a shell asks for it: `mobile-agent` run with bash's completion variables, in a separate
process. Family names, episode and run ids from the store (newest first), serials from the real adb server; and
nothing at all, quickly and without a word on stderr, when the store or the adb server is absent or hangs."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mobile_agent.model.families import FAMILIES
from mobile_agent.sim.farm import free_port
from mobile_agent.store.store import TrajectoryStore

# typer names the completion variable after the program: run the CLI under the installed script's name
CLI = [
    sys.executable,
    "-c",
    "import sys; sys.argv[0] = 'mobile-agent'; from mobile_agent.cli.app import main; main()",
]


def complete(line: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    """What bash's completion gets for the last word of ``line`` (a trailing space: a new, empty word)."""
    words = line.split(" ")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MOBILE_AGENT_")}
    environ.update(
        _MOBILE_AGENT_COMPLETE="complete_bash",
        COMP_WORDS=line,
        COMP_CWORD=str(len(words) - 1),
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / ".config"),
        **env,
    )
    return subprocess.run(CLI, capture_output=True, text=True, timeout=60, env=environ, cwd=tmp_path)


def offered(result: subprocess.CompletedProcess) -> list[str]:
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", result.stderr
    return [line for line in result.stdout.splitlines() if line]


def test_family_names_complete(tmp_path) -> None:
    assert offered(complete("mobile-agent run --family ", tmp_path)) == list(FAMILIES)
    assert (
        set(offered(complete("mobile-agent export --family ui-t", tmp_path)))
        == {name for name in FAMILIES if name.startswith("ui-t")}
        != set()
    )


def test_episode_and_run_ids_complete_newest_first(tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 'store' / 'mobile_agent.db'}"
    with TrajectoryStore.open(db) as store:
        run = store.create_run("nightly")
        ids = []
        for n in range(3):
            ids.append(
                store.start_episode(f"task {n}", device="s", family="ui-venus-2", model="m", run_id=run.id).id
            )
            time.sleep(0.01)
    newest_first = list(reversed(ids))
    for command in ("show", "replay", "report", "verify", "resume"):
        assert offered(complete(f"mobile-agent {command} --db {db} ", tmp_path)) == newest_first, command
    assert offered(complete(f"mobile-agent show {ids[1][:12]}", tmp_path, MOBILE_AGENT_DB=db)) == [ids[1]]
    assert offered(complete("mobile-agent runs show ", tmp_path, MOBILE_AGENT_DB=db)) == [run.id]
    assert offered(complete(f"mobile-agent episodes --db {db} --run ", tmp_path)) == [run.id]


def test_no_store_offers_nothing_and_creates_nothing(tmp_path) -> None:
    missing = tmp_path / "nowhere" / "mobile_agent.db"
    assert offered(complete(f"mobile-agent show --db sqlite:///{missing} ", tmp_path)) == []
    assert offered(complete("mobile-agent replay ", tmp_path)) == []  # the default ./replays store is absent
    assert not missing.parent.exists() and not (tmp_path / "replays").exists()
    assert offered(complete("mobile-agent show --db notaurl:/// ", tmp_path)) == []


@pytest.fixture
def silent_server():
    """A port that accepts connections and never answers (a hung database or adb server)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    listener.close()


def test_a_hung_store_or_adb_server_offers_nothing_within_the_bound(tmp_path, silent_server) -> None:
    started = time.monotonic()
    db = f"postgresql://nobody@127.0.0.1:{silent_server}/x"
    assert offered(complete(f"mobile-agent show --db {db} ", tmp_path)) == []
    assert offered(complete(f"mobile-agent run --adb 127.0.0.1:{silent_server} --device ", tmp_path)) == []
    assert time.monotonic() - started < 30  # two bounded TABs (2 s each) and two process starts


def test_serials_complete_from_the_adb_server(sim_farm, adb_server, tmp_path) -> None:
    farm = sim_farm(n=2)
    adb = f"127.0.0.1:{adb_server.port}"
    serials = offered(complete(f"mobile-agent run --adb {adb} --device ", tmp_path))
    assert sorted(serials) == sorted(farm.serials)
    one = farm.serials[1]
    assert offered(complete(f"mobile-agent replay --adb {adb} -d {one}", tmp_path)) == [one]
    # the configured server (adb's own variable), as `run` would use it
    assert sorted(
        offered(
            complete("mobile-agent doctor --device ", tmp_path, ANDROID_ADB_SERVER_PORT=str(adb_server.port))
        )
    ) == sorted(farm.serials)
    # no server there: nothing, and none is started
    port = free_port()
    assert offered(complete(f"mobile-agent run --adb 127.0.0.1:{port} --device ", tmp_path)) == []
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
