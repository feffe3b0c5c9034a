"""The task queue at scale on PostgreSQL: claims per second, latency and database CPU per claim. Prints JSON.

    python bench/queue_scale.py [--pending 2000 20000] [--claimers 8] [--claims 1000] [--pg postgresql://...]

For each ``--pending`` size: a private schema (dropped afterwards) holding one run of ``pending`` + ``claims`` +
warm-up tasks (no requirements, one priority), ANALYZEd as autovacuum would; then ``--claimers`` threads sharing
one store, as a pool's phone workers do, loop claim -> finish with no work between, until ``--claims`` tasks are
claimed (the backlog stays at or above ``pending`` throughout). Each thread first claims and finishes 5 tasks,
not measured (connections opened, statements cached). The claim is called as the pool calls it: with the pending
requirement sets of one queue snapshot when this version of ``claim_task`` takes them.

Printed per size: claims/s over the measured wall time; claim latency (the ``claim_task`` call) and claim + finish
latency, p50 / p99 ms; database CPU per claim (claim + finish), in ms: ``backends`` = utime + stime from /proc of
the server processes serving this bench's connections (found by their application_name; the server must run on
this machine), ``all_postgres`` = every postgres process on the machine (the WAL writer, checkpointer and
autovacuum too, and any other client's load on a shared server), and, when pg_stat_statements is loaded, its
execution + planning time per claim (wall time inside the server, not CPU); ``duplicates`` = tasks claimed twice
(must be 0), and which ``mobile_agent`` was imported (run an older copy with PYTHONPATH to compare).
Goal (issue 29): at 20,000 pending and 8 claimers, >= 300 claims/s and <= 2 ms of database CPU per claim.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import secrets
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from farm_probes import process_cpu_s

import mobile_agent
from mobile_agent.store import queue as q
from mobile_agent.store import queue_status as qs
from mobile_agent.store.store import TrajectoryStore

DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/test"
WARM_UP = 5  # claims per thread before measuring
GOAL = {"claims_per_s": 300, "backend_cpu_ms_per_claim": 2.0}


def libpq(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def postgres_pids() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == "postgres":
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def cpu_of(pids: list[int]) -> dict[int, float]:
    return {pid: cpu for pid in pids if (cpu := process_cpu_s(pid)) == cpu}  # nan: gone


class ServerMeter:
    """Server CPU and pg_stat_statements time between start() and stop(), from an admin connection."""

    def __init__(self, admin: Any, app: str) -> None:
        self.admin, self.app = admin, app
        self.statements = self._statements_readable()

    def _statements_readable(self) -> bool:
        try:
            self.admin.execute("SELECT 1 FROM pg_stat_statements LIMIT 1")
            return True
        except Exception:  # noqa: BLE001 - not installed, or not in shared_preload_libraries
            return False

    def _backends(self) -> list[int]:
        rows = self.admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (self.app,)
        ).fetchall()
        return [row[0] for row in rows]

    def _statement_ms(self) -> float:
        row = self.admin.execute(
            "SELECT coalesce(sum(total_exec_time + total_plan_time), 0) FROM pg_stat_statements"
            " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
            " AND query ~ 'queue_(tasks|attempts)'"
        ).fetchone()
        return float(row[0])

    def start(self) -> None:
        self.backends0 = cpu_of(self._backends())
        self.all0 = cpu_of(postgres_pids())
        self.ms0 = self._statement_ms() if self.statements else 0.0

    def stop(self, claims: int) -> dict[str, Any]:
        backends, everything = cpu_of(self._backends()), cpu_of(postgres_pids())
        # a backend that started during the run counts from zero; one that ended in it is lost (none should)
        ours = sum(cpu - self.backends0.get(pid, 0.0) for pid, cpu in backends.items())
        whole = sum(cpu - self.all0.get(pid, 0.0) for pid, cpu in everything.items())
        out: dict[str, Any] = {
            "backends": len(backends),
            "backend_cpu_ms_per_claim": round(ours * 1000 / claims, 2) if backends else None,
            "all_postgres_cpu_ms_per_claim": round(whole * 1000 / claims, 2) if everything else None,
        }
        if not backends:
            out["why_no_backend_cpu"] = (
                "the server's processes are not visible in /proc (not on this machine?)"
            )
        if self.statements:
            out["pg_stat_statements_ms_per_claim"] = round((self._statement_ms() - self.ms0) / claims, 2)
        else:
            out["pg_stat_statements"] = "not loaded (shared_preload_libraries)"
        return out


def one_size(server: str, pending: int, claimers: int, claims: int) -> dict[str, Any]:
    import psycopg
    from sqlalchemy.engine import make_url

    schema = f"queue_scale_{secrets.token_hex(4)}"
    app = f"queue-scale-{secrets.token_hex(4)}"
    with psycopg.connect(libpq(server), autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
        try:
            url = make_url(server).update_query_dict(
                {"options": f"-csearch_path={schema}", "application_name": app}
            )
            return measure(url.render_as_string(hide_password=False), admin, app, pending, claimers, claims)
        finally:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


def measure(url: str, admin: Any, app: str, pending: int, claimers: int, claims: int) -> dict[str, Any]:
    root = Path(os.environ.get("TMPDIR", "/tmp")) / f"queue-scale-{os.getpid()}"
    passes_keys = "requires_keys" in inspect.signature(q.claim_task).parameters
    with TrajectoryStore.open(url, root=root) as store:
        run = store.create_run("queue-scale")
        total = pending + claims + claimers * WARM_UP
        started = time.perf_counter()
        q.enqueue_tasks(store, run.id, [q.NewTask(i, f"t:{i}", f"task {i}") for i in range(total)])
        enqueue_s = time.perf_counter() - started
        with store._engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE queue_tasks")
        extra: dict[str, Any] = {}
        if passes_keys:
            extra["requires_keys"] = qs.pending_snapshot(store, [run.id]).requirement_sets()
        lock = threading.Lock()
        taken: list[int] = []
        claim_ms: list[float] = []
        task_ms: list[float] = []
        warm = threading.Barrier(claimers + 1)
        go = threading.Event()
        left = [claims]

        def cycle(name: str) -> tuple[float, float] | None:
            t0 = time.perf_counter()
            claim = q.claim_task(store, worker=name, device=name, tags=(), run_ids=[run.id], **extra)
            t1 = time.perf_counter()
            if claim is None:
                return None
            assert q.finish_task(store, claim, episode_id=None, outcome="finished")
            with lock:
                taken.append(claim.task_id)
            return (t1 - t0) * 1000, (time.perf_counter() - t0) * 1000

        def claimer(name: str) -> None:
            for _ in range(WARM_UP):
                cycle(name)
            warm.wait()
            go.wait()
            while True:
                with lock:
                    if left[0] <= 0:
                        return
                    left[0] -= 1
                timing = cycle(name)
                if timing is None:
                    return
                with lock:
                    claim_ms.append(timing[0])
                    task_ms.append(timing[1])

        threads = [threading.Thread(target=claimer, args=(f"c{i}",)) for i in range(claimers)]
        for thread in threads:
            thread.start()
        warm.wait()
        with lock:
            taken.clear()
        meter = ServerMeter(admin, app)
        meter.start()
        client0 = time.process_time()
        wall0 = time.perf_counter()
        go.set()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - wall0
        client_s = time.process_time() - client0
        server = meter.stop(len(claim_ms))
        counts = qs.run_counts(store, run.id)
    return {
        "pending": pending,
        "claimers": claimers,
        "claims": len(claim_ms),
        "claims_per_s": round(len(claim_ms) / wall, 1),
        "claim_ms": {
            "p50": round(statistics.median(claim_ms), 2),
            "p99": round(percentile(claim_ms, 0.99), 2),
        },
        "claim_and_finish_ms": {
            "p50": round(statistics.median(task_ms), 2),
            "p99": round(percentile(task_ms, 0.99), 2),
        },
        "database_cpu": server,
        "client_cpu_ms_per_claim": round(client_s * 1000 / len(claim_ms), 2),
        "duplicates": len(taken) - len(set(taken)),
        "done_after": counts.done,
        "enqueue_s": round(enqueue_s, 2),
        "claim_passes_requirement_sets": passes_keys,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pending", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--claimers", type=int, default=8)
    parser.add_argument("--claims", type=int, default=1000, help="measured claims per size")
    parser.add_argument("--pg", default=os.environ.get("MOBILE_AGENT_TEST_PG") or DEFAULT_PG)
    args = parser.parse_args()
    if args.claimers < 1 or args.claims < 1 or any(n < 0 for n in args.pending):
        print("error: --claimers and --claims must be >= 1, --pending >= 0", file=sys.stderr)
        return 2
    try:
        import psycopg

        psycopg.connect(libpq(args.pg), connect_timeout=3).close()
    except Exception as exc:  # noqa: BLE001 - one line, with what to do
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        from sqlalchemy.engine import make_url

        shown = make_url(args.pg).render_as_string(hide_password=True)
        print(f"error: no PostgreSQL at {shown}: {first} (hint: pass --pg URL)", file=sys.stderr)
        return 2
    sizes = [one_size(args.pg, n, args.claimers, args.claims) for n in args.pending]
    report = {
        "mobile_agent": str(Path(mobile_agent.__file__).parent),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "goal_at_20000_pending_8_claimers": GOAL,
        "sizes": sizes,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
