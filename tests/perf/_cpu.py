"""CPU seconds of the processes a benchmark drives: a process tree (gunicorn and its workers),
every PostgreSQL process on the machine, and the PostgreSQL backends serving one database.

On a shared database server other clients' work runs on the same PostgreSQL server, so "every
postgres process" counts their work too; the backends of the benchmark's own scratch database
(``pg_stat_activity.datname``) count only what the benchmark's server asked of PostgreSQL
(the shared background writers, WAL writer and checkpointer left out)."""

from __future__ import annotations


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of a process and all its children."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:  # ended already
        return 0.0
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def postgres_cpu() -> float:
    """User + system CPU seconds of every PostgreSQL process on the machine."""
    import psutil

    total = 0.0
    for p in psutil.process_iter(["name"]):
        if (p.info.get("name") or "").startswith("postgres"):
            try:
                t = p.cpu_times()
                total += t.user + t.system
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass
    return total


def backend_cpu(pg_url: str, db_name: str) -> dict[int, float]:
    """CPU seconds so far of each PostgreSQL backend connected to ``db_name`` (by pid); the
    connection that asks is left out."""
    import psutil
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        pids = [
            pid
            for (pid,) in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                [db_name],
            )
        ]
    out = {}
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        out[pid] = t.user + t.system
    return out


def backend_cpu_spent(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds the backends spent between two :func:`backend_cpu` samples (a backend that
    connected in between counts from its start; one that left in between is not counted)."""
    return sum(cpu - before.get(pid, 0.0) for pid, cpu in after.items())
