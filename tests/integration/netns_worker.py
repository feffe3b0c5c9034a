"""`mobile-agent worker` as one host of the multi-host tests runs it (tests/integration/netns_hosts.py):

    python netns_worker.py --hostname HOST --lease SECONDS -- worker --db URL --devices FILE ...

Two things differ from a plain `mobile-agent worker`, both about time and identity, none about behaviour:
- the process gets a hostname of its own (a new UTS namespace), as a worker on another machine has, so the other
  hosts cannot see its pid and must rely on its lease;
- the farm's lease (claims, phone leases; 60 s in the product) and the episodes' heartbeat lease
  (MOBILE_AGENT_LEASE_S) are shortened to SECONDS, renewed every SECONDS/6, so a test waits seconds, not minutes.
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import os
import socket
import sys

CLONE_NEWUTS = 0x04000000


def own_hostname(name: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWUTS) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare(CLONE_NEWUTS): {os.strerror(err)}")
    socket.sethostname(name)


def shorten_lease(lease_s: float) -> None:
    from mobile_agent.farm.scheduler import jobs

    base = jobs.SchedulerConfig
    defaults = {"lease_s": lease_s, "heartbeat_s": lease_s / 6}
    short = dataclasses.make_dataclass(
        "SchedulerConfig",
        [(name, float, dataclasses.field(default=value)) for name, value in defaults.items()],
        bases=(base,),
        frozen=True,
    )
    short.__module__ = base.__module__
    jobs.SchedulerConfig = short  # type: ignore[misc] - read at call time by the worker command
    os.environ["MOBILE_AGENT_LEASE_S"] = str(lease_s)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hostname", required=True)
    parser.add_argument("--lease", type=float, required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    own_hostname(args.hostname)
    shorten_lease(args.lease)
    from mobile_agent.cli.farm import main as farm_main

    sys.argv = ["mobile-agent", *command]
    farm_main(command)


if __name__ == "__main__":
    main()
