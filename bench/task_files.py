"""How long a big task file takes to check and to submit (the goal: 10,000 tasks in ≤ 5 s each; issue 23).

    python bench/task_files.py [--tasks 10000] [--format yaml|jsonl] [--pg postgresql://postgres@127.0.0.1:5432/test]

Writes a task file of ``--tasks`` tasks (mixed: bare strings, tasks with an app, requirements, repeats, a check and
safety words, under shared defaults), then times, each as a new process the way an operator runs it:
``mobile-agent tasks check FILE``, ``mobile-agent submit FILE`` into a fresh SQLite store and, when PostgreSQL
answers (``--pg`` or ``MOBILE_AGENT_TEST_PG``), into a fresh PostgreSQL database. Prints one JSON object with the
wall seconds and the CPU seconds of each process (the wall time grows with a shared machine's load; the server's
own CPU is not counted), the exit codes and the load average when the bench started.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/test"


def task_entry(index: int) -> dict[str, object] | str:
    kind = index % 4
    if kind == 0:
        return f"打开设置 {index}"
    if kind == 1:
        return {"task": f"给张三发微信说晚上好 {index}", "app": "微信", "priority": index % 7}
    if kind == 2:
        return {
            "task": f"search item {index}",
            "app": "com.example.shop",
            "requires": {"vendor": "xiaomi", "apps": ["com.example.shop"]},
            "repeats": 1 + (index // 4) % 2,
        }
    return {
        "task": f"给李四发微信 {index}",
        "app": "微信",
        "check": {"app": "com.tencent.mm", "state": ["messages_sent contains {contact: 李四}"]},
        "safety": {"allow": ["send@com.tencent.mm"]},
    }


def write_tasks(path: Path, count: int) -> None:
    entries = [task_entry(i) for i in range(count)]
    if path.suffix == ".jsonl":
        path.write_text(
            "\n".join(json.dumps(e, ensure_ascii=False) for e in entries) + "\n", encoding="utf-8"
        )
        return
    lines = ["defaults: {max_steps: 20, timeout: 300}", "tasks:"]
    lines += [f"  - {json.dumps(e, ensure_ascii=False)}" for e in entries]  # JSON is YAML flow style
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def timed(args: list[str], env: dict[str, str]) -> dict[str, object]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", "from mobile_agent.cli.app import main; main()", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out: dict[str, object] = {
        "seconds": round(wall, 3),
        "cpu_seconds": round(cpu, 3),
        "exit": done.returncode,
    }
    if done.returncode:
        out["stderr"] = done.stderr.strip().splitlines()[-1:] or [""]
    return out


def pg_database(base: str) -> tuple[str, object] | None:
    """A fresh database on the server of ``base`` (dropped by the returned engine's cleanup), or None."""
    try:
        import sqlalchemy as sa

        admin = sa.create_engine(base, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 3})
        name = f"bench_tasks_{uuid.uuid4().hex[:10]}"
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    except Exception:  # noqa: BLE001 - no server: the row is left out and said so
        return None
    url = sa.engine.make_url(base).set(database=name).render_as_string(hide_password=False)
    return url, (admin, name)


def drop_pg(handle: object) -> None:
    import sqlalchemy as sa

    admin, name = handle  # type: ignore[misc]
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--format", choices=("yaml", "jsonl"), default="yaml")
    parser.add_argument("--pg", default=os.environ.get("MOBILE_AGENT_TEST_PG", DEFAULT_PG))
    args = parser.parse_args()
    result: dict[str, object] = {"load_average": os.getloadavg(), "tasks": args.tasks, "format": args.format}
    env = {**os.environ, "MOBILE_AGENT_CACHE": "", "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"tasks.{args.format}"
        write_tasks(path, args.tasks)
        result["file_bytes"] = path.stat().st_size
        result["check"] = timed(["tasks", "check", str(path)], env)
        sqlite = f"sqlite:///{Path(tmp) / 'bench.db'}"
        result["submit_sqlite"] = timed(["submit", str(path), "--db", sqlite], env)
        made = pg_database(args.pg)
        if made is None:
            result["submit_postgresql"] = {"skipped": f"no PostgreSQL at {args.pg}"}
        else:
            url, handle = made
            try:
                result["submit_postgresql"] = timed(["submit", str(path), "--db", url], env)
            finally:
                drop_pg(handle)
    print(json.dumps(result, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
