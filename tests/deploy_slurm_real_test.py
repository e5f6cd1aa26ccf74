#!/usr/bin/env python3
"""deploy/slurm/collatz-worker.sbatch under a real Slurm (Debian's slurmctld and slurmd).

A one-node cluster is written to a temporary directory (auth/none and cred/none: no munge;
proctrack/linuxproc and task/none: no cgroups; select/cons_tres with two fake GPUs, character
devices made with mknod that stand in for /dev/nvidia*; AuthInfo=cred_expire=10 so that a
requeued task runs again after about 11 s instead of 2 minutes). The node is declared with this
machine's CPUs, so the script's own requests must fit a 2-CPU node. A real collatz-server gets
delay units from 1 on, fed in blocks of 2^32 while the test still needs a task to be busy (so
the test does not depend on this machine's speed); the script is submitted as an array of two tasks with
COLLATZ_BACKEND=cpu and the rest of its defaults (GPU request included), with a time limit of
2 minutes and the time-limit warning 60 s before it (--time=2 --signal=B:USR1@60 on the
command line, the way an operator shortens a test job), so Slurm itself sends the warning in
the middle of the work. Checks:

- the warning drains task 0: its log says USR1, the worker exits 0, the task requeues itself,
  runs again (restart count 1, the same spool directory and instance id) and finishes;
- `scancel` of task 1 while it runs stops it for good: state CANCELLED, never started again,
  no requeue;
- the server ends with every unit finished, nothing pending or leased; the finished units tile
  the range exactly, each with one result, and the accepted numbers add up to the range size
  once (nothing lost, nothing counted twice); the final delay records equal shared/data's;
- both tasks end, and no task runs after the test.

Every daemon and job process started here is stopped at the end, whatever happened (processes
are found by the SLURM_CONF path of this test in their environment). Exit 77 (skipped) with the
reason when the machine cannot run it: not root, or the Slurm packages are missing (Debian
packages slurmctld, slurmd, slurm-client: deploy/install-deps.sh installs them).
"""
import argparse
import csv
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

from deploy_checks import fail, finish

BLOCK = 1 << 32      # submitted in blocks of 2^32 numbers while the test needs work running
UNIT_BITS = 28       # about 1 s per unit with 2 threads here
MAX_END = 1 << 37    # bound on the work fed
SKIP = 77


def skip(reason):
    print("SKIP: " + reason, flush=True)
    sys.exit(SKIP)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Cluster:
    """slurmctld + slurmd for one node, configured in tmp."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.conf = os.path.join(tmp, "etc", "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        for k in list(self.env):
            if k.startswith("SLURM_") and k != "SLURM_CONF":
                del self.env[k]  # a test run from inside a Slurm job must not inherit its job
        self.node = socket.gethostname().split(".")[0]
        self.procs = []

    def write_config(self):
        etc = os.path.join(self.tmp, "etc")
        dev = os.path.join(self.tmp, "dev")
        for d in (etc, dev, os.path.join(self.tmp, "state"), os.path.join(self.tmp, "slurmd")):
            os.makedirs(d, exist_ok=True)
        gpus = []
        for i in range(2):
            path = os.path.join(dev, f"nvidia{i}")
            # c 1 3 is /dev/null: a character device Slurm can stat and hand out as a GPU.
            subprocess.run(["mknod", path, "c", "1", "3"], check=True)
            gpus.append(path)
        cpus = max(os.cpu_count() or 1, 1)
        mem_mb = 0
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_mb = int(line.split()[1]) // 1024
        # The script asks for --mem=8G: declare at least that (config_overrides lets the node
        # claim it) so a smaller test machine still runs the script as shipped.
        mem_mb = max(mem_mb - 512, 8192)
        self.cpus = cpus
        t = self.tmp
        conf = f"""ClusterName=collatztest
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
AuthInfo=cred_expire=10
StateSaveLocation={t}/state
SlurmdSpoolDir={t}/slurmd
SlurmctldPidFile={t}/slurmctld.pid
SlurmdPidFile={t}/slurmd.pid
SlurmctldLogFile={t}/slurmctld.log
SlurmdLogFile={t}/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmdParameters=config_overrides
GresTypes=gpu
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
ReturnToService=2
MinJobAge=3600
KillWait=30
InactiveLimit=0
NodeName={self.node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={mem_mb} Gres=gpu:{len(gpus)} State=UNKNOWN
PartitionName=test Nodes={self.node} Default=YES MaxTime=INFINITE State=UP
"""
        with open(self.conf, "w") as f:
            f.write(conf)
        with open(os.path.join(etc, "gres.conf"), "w") as f:
            f.write(f"NodeName={self.node} Name=gpu File={dev}/nvidia[0-{len(gpus) - 1}]\n")
        print(conf + "gres.conf: " + open(os.path.join(etc, "gres.conf")).read(), flush=True)

    def start(self):
        for name, args in (("slurmctld", ["slurmctld", "-D", "-i", "-f", self.conf]),
                           ("slurmd", ["slurmd", "-D", "-f", self.conf, "-N", self.node])):
            out = open(os.path.join(self.tmp, name + ".out"), "w")
            self.procs.append((name, subprocess.Popen(args, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                                      start_new_session=True)))
            if name == "slurmctld":
                if not self.wait(lambda: self.run(["scontrol", "ping"], check=False).stdout.find("UP") >= 0, 30):
                    return self.died("slurmctld does not answer scontrol ping")
        def up():
            dead = [n for n, p in self.procs if p.poll() is not None]
            if dead:
                raise StopIteration(dead)
            return self.node_state() in ("idle", "mixed", "allocated")
        try:
            ok = self.wait(up, 60)
        except StopIteration as e:
            return self.died(f"{e.args[0]} exited during startup")
        if not ok:
            return self.died(f"node {self.node} not idle (state {self.node_state()!r})")
        log(f"slurm up: node {self.node} {self.node_state()}, {self.cpus} CPUs")
        return True

    def died(self, why):
        fail(why)
        for name in ("slurmctld", "slurmd"):
            for suffix in (".out", ".log"):
                p = os.path.join(self.tmp, name + suffix)
                if os.path.exists(p):
                    print(f"--- {name}{suffix} (tail)\n" + "".join(open(p, errors="replace").readlines()[-30:]))
        return False

    def run(self, args, check=True):
        r = subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=60)
        if check and r.returncode != 0:
            raise RuntimeError(f"{' '.join(args)}: exit {r.returncode}: {r.stdout}{r.stderr}")
        return r

    @staticmethod
    def wait(pred, timeout, step=0.5):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                if pred():
                    return True
            except StopIteration:
                raise
            except Exception:
                pass
            time.sleep(step)
        return False

    def node_state(self):
        r = self.run(["sinfo", "-h", "-n", self.node, "-o", "%T"], check=False)
        return r.stdout.strip().rstrip("*~#!%$@^-")

    def job(self, jobid):
        """scontrol show job as a dict (one array task: JOB_TASK), {} when unknown."""
        r = self.run(["scontrol", "-o", "show", "job", jobid], check=False)
        if r.returncode != 0 or not r.stdout.strip():
            return {}
        line = r.stdout.strip().splitlines()[0]
        return dict(m.groups() for m in re.finditer(r"(\w+(?:/\w+)?)=(\S*)", line))

    def stop(self):
        """Cancels the jobs, stops the daemons, then kills whatever still carries this
        cluster's SLURM_CONF (job scripts, workers, slurmstepd) by pid."""
        if any(p.poll() is None for _, p in self.procs):
            r = self.run(["squeue", "-h", "-o", "%i"], check=False)
            for jobid in r.stdout.split():
                self.run(["scancel", jobid], check=False)
        for _, p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for _, p in reversed(self.procs):
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for pid in ours(f"SLURM_CONF={self.conf}", self.tmp):
            try:
                os.kill(pid, signal.SIGKILL)
                log(f"killed leftover process {pid}")
            except ProcessLookupError:
                pass


def ours(env_entry, path):
    """PIDs of processes with an environment entry starting with env_entry, or path in their
    command line."""
    me = os.getpid()
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == me:
            continue
        try:
            env = open(f"/proc/{d}/environ", "rb").read().split(b"\0")
            cmd = open(f"/proc/{d}/cmdline", "rb").read()
        except OSError:
            continue
        if any(e.startswith(env_entry.encode()) for e in env) or path.encode() in cmd:
            found.append(int(d))
    return found


def reference_delay(data, bound):
    with open(os.path.join(data, "delay_records.csv"), newline="") as f:
        return [(int(r["n"]), int(r["delay"])) for r in csv.DictReader(f) if int(r["n"]) < bound]


def main():
    ap = argparse.ArgumentParser()
    for name in ("source", "server", "worker", "collatzctl", "data"):
        ap.add_argument("--" + name, required=True)
    a = ap.parse_args()
    for name in ("server", "worker", "collatzctl", "data", "source"):
        setattr(a, name, os.path.abspath(getattr(a, name)))

    if os.geteuid() != 0:
        skip("not root: slurmd must run as root to start job steps (and mknod the fake GPU devices)")
    missing = [p for p in ("slurmctld", "slurmd", "sbatch", "scontrol", "scancel", "sinfo", "squeue")
               if not shutil.which(p)]
    if missing:
        skip(f"{', '.join(missing)} not installed (Debian packages slurmctld, slurmd, slurm-client; "
             "deploy/install-deps.sh installs them)")
    for plugin in ("auth_none", "cred_none", "proctrack_linuxproc", "select_cons_tres", "gres_gpu"):
        if not any(os.path.exists(f"{d}/{plugin}.so") for d in
                   ("/usr/lib/x86_64-linux-gnu/slurm-wlm", "/usr/lib/aarch64-linux-gnu/slurm-wlm", "/usr/lib/slurm")):
            skip(f"the Slurm plugin {plugin}.so is not installed (Debian package slurm-wlm-basic-plugins)")

    script = os.path.join(a.source, "deploy/slurm/collatz-worker.sbatch")
    tmp = tempfile.mkdtemp(prefix="collatz-slurm-real-")
    os.chmod(tmp, 0o755)
    with open(os.path.join(tmp, "owner.pid"), "w") as f:
        f.write(str(os.getpid()))
    cluster = Cluster(tmp)
    server = None
    started = time.time()

    # Leftovers of an earlier run of this test that was killed before its cleanup (its
    # owner.pid no longer runs; a run still going on is left alone).
    base = tempfile.gettempdir()
    for d in os.listdir(base):
        owner = os.path.join(base, d, "owner.pid")
        if not d.startswith("collatz-slurm-real-") or not os.path.exists(owner):
            continue
        if os.path.exists(f"/proc/{open(owner).read().strip()}"):
            continue
        for pid in ours(f"SLURM_CONF={os.path.join(base, d)}/", os.path.join(base, d)):
            try:
                os.kill(pid, signal.SIGKILL)
                print(f"killed process {pid} left by an earlier run of this test in {d}")
            except ProcessLookupError:
                pass
        shutil.rmtree(os.path.join(base, d), ignore_errors=True)

    # Cleanup must run even when ctest's timeout (900 s) comes: stop on our own before it.
    def on_term(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}" if signum != signal.SIGALRM else "the test's own 780 s limit")
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGALRM, on_term)
    signal.alarm(780)
    try:
        cluster.write_config()
        if not cluster.start():
            return

        # The coordinator, with a token.
        token = os.path.join(tmp, "token")
        with open(token, "w") as f:
            f.write("slurm-real-token-0123456789abcdef\n")
        os.chmod(token, 0o600)
        db = os.path.join(tmp, "server.db")
        help_text = subprocess.run([a.server, "--help"], capture_output=True, text=True).stdout
        sargs = [a.server, "--db", db, "--listen", "127.0.0.1:0", "--token-file", token, "--lease-seconds", "60"]
        if "--double-check" in help_text:
            sargs += ["--double-check", "none"]  # one worker host: results final without a second
        slog = open(os.path.join(tmp, "server.log"), "w")
        server = subprocess.Popen(sargs, stdout=slog, stderr=subprocess.STDOUT, start_new_session=True)
        port = None
        deadline = time.time() + 60
        while time.time() < deadline and port is None and server.poll() is None:
            m = re.search(r"\(port (\d+)\)", open(os.path.join(tmp, "server.log")).read())
            port = m.group(1) if m else None
            time.sleep(0.2)
        if port is None:
            fail("collatz-server did not start:\n" + open(os.path.join(tmp, "server.log")).read()[-3000:])
            return
        address = "127.0.0.1:" + port
        log(f"collatz-server on {address}: {' '.join(sargs[1:])}")

        def ctl(*args, check=True):
            r = subprocess.run([a.collatzctl, *args, "--server", address, "--token-file", token],
                               capture_output=True, text=True, timeout=120)
            if check and r.returncode != 0:
                raise RuntimeError(f"collatzctl {' '.join(args)}: exit {r.returncode}: {r.stdout}{r.stderr}")
            return r

        end = [1]

        def feed():
            """Keeps at least 8 units pending (while the test needs a running task)."""
            m = re.search(r"(\d+) pending", ctl("status").stdout)
            if (m is None or int(m.group(1)) < 8) and end[0] < MAX_END:
                ctl("submit", "--from", str(end[0]), "--to", str((end[0] // BLOCK + 1) * BLOCK),
                    "--kinds", "delay", "--unit-size", f"2^{UNIT_BITS}")
                end[0] = (end[0] // BLOCK + 1) * BLOCK
            return False

        feed()

        # The array, as an operator submits it, with the CPU backend and a short time limit.
        spool_root = os.path.join(tmp, "spool")
        env = dict(cluster.env, COLLATZ_SERVER=address, COLLATZ_TOKEN_FILE=token, COLLATZ_BACKEND="cpu",
                   COLLATZ_WORKER_BIN=a.worker, COLLATZ_SPOOL_ROOT=spool_root, COLLATZ_GRACE_SECONDS="20",
                   COLLATZ_MAX_IDLE_SECONDS="5", COLLATZ_LOG_FORMAT="text")
        r = subprocess.run(["sbatch", "--parsable", "--export=ALL", "--array=0-1", "--time=2", "--signal=B:USR1@60",
                            f"--chdir={tmp}", f"--output={tmp}/job-%A_%a.log", script],
                           env=env, capture_output=True, text=True, timeout=60)
        print(f"sbatch: exit {r.returncode}: {r.stdout.strip()} {r.stderr.strip()}", flush=True)
        if r.returncode != 0:
            fail("sbatch refused the script (its requests do not fit the node?)")
            return
        job = r.stdout.strip().split(";")[0]
        t0, t1 = f"{job}_0", f"{job}_1"
        logs = {t: os.path.join(tmp, f"job-{job}_{i}.log") for i, t in enumerate((t0, t1))}

        def text(t):
            return open(logs[t], errors="replace").read() if os.path.exists(logs[t]) else ""

        def state(t):
            return cluster.job(t).get("JobState", "?")

        # Task 0 runs first (one task fits the node at a time); Slurm's warning drains it.
        if not cluster.wait(lambda: state(t0) == "RUNNING", 60):
            fail(f"task 0 never ran: {cluster.job(t0)}")
            return
        log(f"task 0 running: {cluster.job(t0).get('NodeList')}, TRES {cluster.job(t0).get('TRES')}")
        if not cluster.wait(lambda: feed() or "requeueing" in text(t0), 150, 1):
            fail(f"task 0 was not drained and requeued by the time-limit warning; state {state(t0)}; log:\n{text(t0)[-3000:]}")
            return
        log("task 0 drained and requeued itself after the time-limit warning")
        spool0 = os.path.join(spool_root, "task-0")
        instance = open(os.path.join(spool0, "instance-id")).read() if os.path.exists(os.path.join(spool0, "instance-id")) else None

        # While task 0 waits to come back, task 1 runs: cancel it after it has done some work.
        if not cluster.wait(lambda: feed() or state(t1) == "RUNNING", 90):
            fail(f"task 1 never ran: {cluster.job(t1)}")
        else:
            cluster.wait(lambda: feed() or len(re.findall(r"result sent: accepted", text(t1))) >= 2, 60, 1)
            feed()
            log("scancel task 1")
            cluster.run(["scancel", t1])
            if not cluster.wait(lambda: state(t1) == "CANCELLED", 60):
                fail(f"task 1 not CANCELLED after scancel: {cluster.job(t1)}")

        # Task 0 comes back and finishes the range (no more work is fed).
        log(f"work fed: [1, {end[0]}) ({end[0] // BLOCK} blocks of 2^32)")
        done = ctl("status", "--wait", "420", check=False)
        print(done.stdout.strip(), flush=True)
        if done.returncode != 0:
            fail(f"the range was not finished: collatzctl status --wait: exit {done.returncode}")
        if not cluster.wait(lambda: state(t0) in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"), 120, 1):
            fail(f"task 0 did not end after the work was done: {cluster.job(t0)}")
        time.sleep(2)
        j0, j1 = cluster.job(t0), cluster.job(t1)
        print(f"task 0: {j0.get('JobState')} exit {j0.get('ExitCode')} restarts {j0.get('Restarts')}\n"
              f"task 1: {j1.get('JobState')} exit {j1.get('ExitCode')} restarts {j1.get('Restarts')}", flush=True)
        print(f"--- task 0 log\n{text(t0)[-4000:]}\n--- task 1 log\n{text(t1)[-2500:]}", flush=True)

        l0, l1 = text(t0), text(t1)
        if j0.get("JobState") != "COMPLETED" or j0.get("ExitCode") != "0:0":
            fail(f"task 0 ended {j0.get('JobState')} {j0.get('ExitCode')}, want COMPLETED 0:0")
        if "USR1 (time limit near): draining" not in l0:
            fail("task 0's script never got the time-limit warning (USR1)")
        if "(restart 1)" not in l0 or int(j0.get("Restarts", "0")) < 1:
            fail("task 0 did not run again after requeueing")
        if l0.count("collatz-worker.sbatch: job") < 2:
            fail("task 0's log shows fewer than two runs")
        if instance is None:
            fail(f"no instance-id in task 0's spool {spool0}")
        elif open(os.path.join(spool0, "instance-id")).read() != instance:
            fail("task 0 came back with another instance id: its spool was not reused")
        if "TERM: stopping (no requeue)" not in l1:
            fail("task 1's script did not take scancel's TERM as stop")
        if "requeueing" in l1 or "(restart 1)" in l1 or int(j1.get("Restarts", "0")) != 0:
            fail("task 1 was requeued after scancel")
        if j1.get("JobState") != "CANCELLED":
            fail(f"task 1 ended {j1.get('JobState')}, want CANCELLED")
        for t, l in ((t0, l0), (t1, l1)):
            if re.search(r"\b(error|fatal)\b", l, re.I) and "--log-format" not in l:
                print(f"note: {t}'s log mentions errors", flush=True)

        # Nothing lost, nothing counted twice: the units tile the range, one result each, and
        # the accepted numbers add up to the range once.
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        units = [(int(b), int(e), s) for b, e, s in
                 con.execute("SELECT begin_n, end_n, state FROM units ORDER BY CAST(begin_n AS INTEGER)")]
        results = con.execute("SELECT count(*), count(DISTINCT unit_id) FROM unit_results").fetchone()
        accepted = sum(int(n) for (n,) in con.execute("SELECT numbers FROM throughput"))
        con.close()
        size = end[0] - 1
        print(f"{len(units)} units, {results[0]} results, accepted numbers {accepted} (range {size})", flush=True)
        if any(s != "finished" for _, _, s in units):
            fail(f"units not finished: {[u for u in units if u[2] != 'finished']}")
        cursor = 1
        for b, e, _ in units:
            if b != cursor:
                fail(f"units do not tile [1, {end[0]}): a unit starts at {b}, expected {cursor}")
                break
            cursor = e
        if cursor != end[0]:
            fail(f"units end at {cursor}, want {end[0]}")
        if results[0] != len(units) or results[1] != len(units):
            fail(f"{results[0]} results for {len(units)} units")
        if accepted != size:
            fail(f"accepted numbers add up to {accepted}, the range has {size}: lost or counted twice")

        got = ctl("server-records", "--kind", "delay", "--format", "csv")
        rows = [l.split(",") for l in got.stdout.strip().splitlines() if l and not l.startswith("n,")]
        records = [(int(n), int(d)) for n, d, *_ in rows]
        want = reference_delay(a.data, end[0])
        print(f"{len(records)} final delay records below {end[0]}, reference {len(want)}", flush=True)
        if records != want:
            fail(f"delay records differ from shared/data: first difference "
                 f"{next(((x, y) for x, y in zip(records, want) if x != y), (len(records), len(want)))}")
        if any(len(r) > 2 for r in rows):
            fail(f"records not final: {[r for r in rows if len(r) > 2][:3]}")
        log(f"done in {time.time() - started:.0f} s")
    except KeyboardInterrupt as e:
        fail(f"interrupted ({e})")
    finally:
        signal.alarm(0)
        if server is not None and server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
        cluster.stop()
        left = ours(f"SLURM_CONF={cluster.conf}", tmp)
        if left:
            fail(f"processes left after cleanup: {left}")
        if os.environ.get("KEEP_TMP"):
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
    finish("deploy_slurm_real_test")
