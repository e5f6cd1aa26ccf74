#!/usr/bin/env python3
"""deploy/systemd's units as shipped, under a real systemd booted in a podman container.

The container: podman with runc (crun fails on this machine's hybrid cgroup layout),
--privileged, no network but its own loopback, on a Debian 12 root made by
deploy/container/debian-root.sh (debootstrap --variant=minbase bookworm; cached, by default in
/var/cache/collatz-systemd-root) mounted as an overlay, so the cache stays unchanged. The built
collatz-server, collatz-worker and collatzctl are bind-mounted to /usr/local/bin, and the
shared libraries they link (gRPC, protobuf, ...; found with ldd, glibc and libstdc++ excepted,
which the bookworm root has) are copied into /usr/local/lib/collatz and registered with
ldconfig: no package names to keep in sync, and the same files the binaries were linked with.
Before systemd starts, `mount --make-rshared /` (without it the credential directory of
LoadCredential= is unreadable and the server exits 2).

Inside: the unit files are copied to /etc/systemd/system unchanged, the token to
/etc/collatz/token (0600, root), /etc/collatz/{server,worker}.env are the shipped examples with
the values this test needs changed (the worker's server and CPU backend; `--double-check none`
where the server has it: one worker host). Checks:
- `systemctl start collatz-server` returns once READY=1 came (Type=notify), active/running;
- DynamicUser: the daemons run as their dynamic users, not root; the database is in
  /var/lib/private/collatz-server; the token reaches them only as a credential
  (/run/credentials/UNIT/token), and collatzctl is refused without the token;
- the watchdog: systemd's WatchdogTimestamp of each daemon advances (WATCHDOG=1 pings arrive);
- restart after SIGKILL: the server killed with SIGKILL comes back (Restart=on-failure,
  NRestarts 1, a new PID) and the worker carries on;
- the worker (ExecStartPre guard, READY after its self-tests and registration) finishes the
  submitted range; the final delay records equal shared/data's;
- a clean stop: `systemctl stop` of each gives Result=success and exit status 0.
The container is removed at the end whatever happened. Exit 77 (skipped) with the reason when
the machine cannot run it: not root, podman or runc missing, or no root file system and no
way to make one (debootstrap missing, or no network to the Debian mirror on the first run).
"""
import argparse
import csv
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from deploy_checks import fail, finish

RANGE = "2^31"
RANGE_N = 1 << 31
UNIT = "2^26"
TOKEN = "systemd-real-token-0123456789abcdef"


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def skip(reason):
    print("SKIP: " + reason, flush=True)
    sys.exit(77)


def libraries(binaries):
    """The shared libraries the binaries load, except the C/C++ runtime the root has."""
    keep = set()
    for b in binaries:
        out = subprocess.run(["ldd", b], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            m = re.search(r"=> (/\S+)", line)
            if not m:
                continue
            name = os.path.basename(m.group(1))
            if re.match(r"(libc|libm|libdl|librt|libpthread|ld-linux[^.]*|libstdc\+\+|libgcc_s)\.so", name):
                continue
            keep.add(m.group(1))
    return sorted(keep)


class Container:
    def __init__(self, name):
        self.name = name
        self.runtime = "runc"

    def sh(self, script, timeout=120, check=True):
        r = subprocess.run(["podman", "--runtime", self.runtime, "exec", self.name, "/bin/sh", "-c", script],
                           capture_output=True,
                           text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"in the container: {script}: exit {r.returncode}: {r.stdout}{r.stderr}")
        return r

    def show(self, unit, *props):
        out = self.sh(f"systemctl show {unit} " + " ".join(f"-p {p}" for p in props)).stdout
        return dict(l.split("=", 1) for l in out.splitlines() if "=" in l)

    def journal(self, unit, lines=40):
        return self.sh(f"journalctl -u {unit} --no-pager -n {lines} -o cat", check=False).stdout


def wait(pred, timeout, step=1.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            v = pred()
            if v:
                return v
        except Exception:
            pass
        time.sleep(step)
    return None


def env_file(shipped, changes):
    """The shipped .env example with some values changed (or added)."""
    out, seen = [], set()
    for line in open(shipped, encoding="utf-8"):
        key = line.split("=", 1)[0].strip() if "=" in line and not line.lstrip().startswith("#") else None
        if key in changes:
            out.append(f"{key}={changes[key]}\n")
            seen.add(key)
        else:
            out.append(line)
    out += [f"{k}={v}\n" for k, v in changes.items() if k not in seen]
    return "".join(out)


def pick_runtime(source, root):
    """runc, or deploy/container/runc-no-rlimits where runc cannot set the container's resource
    limits (a sandboxed machine without CAP_SYS_RESOURCE)."""
    probe = ["run", "--rm", "--network", "none", "--rootfs", f"{root}:O", "/bin/true"]
    r = subprocess.run(["podman", "--runtime", "runc", *probe], capture_output=True, text=True, timeout=120)
    if r.returncode == 0:
        return "runc"
    if "error setting rlimit" not in r.stderr:
        fail(f"podman with runc cannot run a container here: {r.stderr.strip()}")
        return None
    wrapper = os.path.join(source, "deploy/container/runc-no-rlimits")
    print(f"runc cannot set resource limits here ({r.stderr.strip().splitlines()[-1]}); using {wrapper}")
    r = subprocess.run(["podman", "--runtime", wrapper, *probe], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail(f"podman with {wrapper} cannot run a container either: {r.stderr.strip()}")
        return None
    return wrapper


def main():
    ap = argparse.ArgumentParser()
    for name in ("source", "server", "worker", "collatzctl", "data"):
        ap.add_argument("--" + name, required=True)
    ap.add_argument("--root", default=os.environ.get("COLLATZ_SYSTEMD_ROOT", "/var/cache/collatz-systemd-root"))
    a = ap.parse_args()
    for name in ("source", "server", "worker", "collatzctl", "data"):
        setattr(a, name, os.path.abspath(getattr(a, name)))

    if os.geteuid() != 0:
        skip("not root: booting systemd in a container needs a rootful, privileged podman")
    for tool, pkg in (("podman", "podman"), ("runc", "runc")):
        if not shutil.which(tool):
            skip(f"{tool} not installed (Debian package {pkg}; deploy/install-deps.sh installs it)")
    started = time.time()
    r = subprocess.run([os.path.join(a.source, "deploy/container/debian-root.sh"), a.root],
                       capture_output=True, text=True, timeout=1500)
    print((r.stdout + r.stderr).strip(), flush=True)
    if r.returncode == 3:
        skip("no Debian root for the container: " + r.stderr.strip().splitlines()[-1])
    if r.returncode != 0:
        fail(f"deploy/container/debian-root.sh: exit {r.returncode}")
        return
    log(f"root ready in {time.time() - started:.0f} s")

    # Containers of an earlier run of this test that was killed before its cleanup.
    left = subprocess.run(["podman", "ps", "-a", "--format", "{{.Names}}", "--filter", "name=^collatz-systemd-test-"],
                          capture_output=True, text=True).stdout.split()
    for old in left:
        if os.path.exists(f"/proc/{old.rsplit('-', 1)[-1]}"):
            continue  # its test is still running
        subprocess.run(["podman", "rm", "-f", "-t", "0", old], capture_output=True)
        print(f"removed container {old} left by an earlier run of this test")

    # Cleanup must run even when ctest's timeout comes: stop on our own 10 minutes from here.
    def on_signal(signum, frame):
        raise KeyboardInterrupt("signal %d" % signum if signum != signal.SIGALRM else "the test's own 600 s limit")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGALRM, on_signal)
    signal.alarm(600)

    tmp = tempfile.mkdtemp(prefix="collatz-systemd-real-")
    os.chmod(tmp, 0o755)
    name = f"collatz-systemd-test-{os.getpid()}"
    c = Container(name)
    try:
        lib = os.path.join(tmp, "lib")
        os.makedirs(lib)
        libs = libraries([a.server, a.worker, a.collatzctl])
        for p in libs:
            shutil.copy2(p, lib)  # follows the symlink: the real file under the soname
        for f in os.listdir(lib):
            os.chmod(os.path.join(lib, f), 0o644)
        print(f"{len(libs)} shared libraries copied for the container: {' '.join(os.path.basename(p) for p in libs)}")
        boot = ("mount --make-rshared / && echo /usr/local/lib/collatz > /etc/ld.so.conf.d/collatz.conf "
                "&& ldconfig && exec /sbin/init")
        runtime = pick_runtime(a.source, a.root)
        if runtime is None:
            return
        c.runtime = runtime
        cmd = ["podman", "--runtime", runtime, "run", "-d", "--name", name, "--privileged", "--network", "none",
               "--systemd", "always", "--hostname", "collatz-systemd-test",
               "-v", f"{a.server}:/usr/local/bin/collatz-server:ro",
               "-v", f"{a.worker}:/usr/local/bin/collatz-worker:ro",
               "-v", f"{a.collatzctl}:/usr/local/bin/collatzctl:ro",
               "-v", f"{lib}:/usr/local/lib/collatz:ro",
               "-v", f"{os.path.join(a.source, 'deploy/systemd')}:/srv/deploy:ro",
               "--entrypoint", "/bin/sh", "--rootfs", f"{a.root}:O", "-c", boot]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fail(f"podman run: exit {r.returncode}: {r.stdout}{r.stderr}")
            return
        state = wait(lambda: c.sh("systemctl is-system-running", check=False).stdout.strip()
                     in ("running", "degraded") and c.sh("systemctl is-system-running", check=False).stdout.strip(), 90)
        if not state:
            logs = subprocess.run(["podman", "logs", name], capture_output=True, text=True).stdout
            fail(f"systemd did not come up in the container:\n{logs[-3000:]}")
            return
        log(f"systemd booted in the container ({state}); PID 1: {c.sh('cat /proc/1/comm').stdout.strip()}")
        if state == "degraded":
            print(c.sh("systemctl --failed --no-legend", check=False).stdout)

        # One worker host: nobody to check it, so its results count as they are.
        server_changes = {"COLLATZ_DOUBLE_CHECK": "none"}
        server_env = env_file(os.path.join(a.source, "deploy/systemd/server.env"), server_changes)
        worker_env = env_file(os.path.join(a.source, "deploy/systemd/worker.env"), {
            "COLLATZ_SERVER": "127.0.0.1:50051", "COLLATZ_BACKEND": "cpu", "COLLATZ_WORKER_EXTRA_ARGS": "--threads 1"})
        setup = f"""set -e
mkdir -p /etc/collatz
umask 077
printf '%s\\n' '{TOKEN}' > /etc/collatz/token
umask 022
cat > /etc/collatz/server.env <<'X'
{server_env}X
cat > /etc/collatz/worker.env <<'X'
{worker_env}X
cp /srv/deploy/collatz-server.service /srv/deploy/collatz-worker.service /etc/systemd/system/
systemctl daemon-reload
"""
        c.sh(setup)
        for unit in ("collatz-server", "collatz-worker"):
            same = subprocess.run(["cmp", os.path.join(a.source, f"deploy/systemd/{unit}.service"), "-"],
                                  input=c.sh(f"cat /etc/systemd/system/{unit}.service").stdout, text=True,
                                  capture_output=True)
            if same.returncode != 0:
                fail(f"{unit}.service in the container differs from deploy/systemd's")

        # The server: Type=notify, so start returns after READY=1.
        t = time.time()
        r = c.sh("systemctl start collatz-server", timeout=120, check=False)
        s = c.show("collatz-server", "ActiveState", "SubState", "MainPID", "Type", "StatusText", "WatchdogUSec",
                   "NRestarts", "Result")
        log(f"systemctl start collatz-server: exit {r.returncode} after {time.time() - t:.1f} s: {s}")
        if r.returncode != 0 or s.get("ActiveState") != "active" or s.get("SubState") != "running":
            fail(f"collatz-server did not start:\n{r.stderr}\n{c.journal('collatz-server')}")
            return
        if s.get("Type") != "notify":
            fail(f"collatz-server Type={s.get('Type')}")

        def process_user(unit):
            pid = c.show(unit, "MainPID")["MainPID"]
            out = c.sh(f"ps -o user=,uid= -p {pid}").stdout.split()
            return pid, out[0], int(out[1])

        pid, user, uid = process_user("collatz-server")
        print(f"collatz-server: PID {pid}, user {user} (uid {uid})")
        if uid == 0 or not 61184 <= uid <= 65519:
            fail(f"collatz-server runs as uid {uid}, not a dynamic user (61184-65519)")
        cred = c.sh("ls -l /run/credentials/collatz-server.service/", check=False)
        print(f"credentials: {cred.stdout.strip()}")
        if "token" not in cred.stdout:
            fail("no token credential in /run/credentials/collatz-server.service")
        if c.sh("test -f /var/lib/private/collatz-server/collatz.db", check=False).returncode != 0:
            fail("no database in /var/lib/private/collatz-server (StateDirectory with DynamicUser)")
        stamp = lambda unit: int(c.show(unit, "WatchdogTimestampMonotonic")["WatchdogTimestampMonotonic"] or 0)
        w0 = stamp("collatz-server")
        time.sleep(3)
        w1 = stamp("collatz-server")
        print(f"collatz-server watchdog: WatchdogUSec={s.get('WatchdogUSec')}, last ping {w0} -> {w1}")
        if not (w1 > w0 > 0):
            fail("collatz-server: systemd saw no WATCHDOG=1 pings")

        def ctl(command, *args, token=True, check=True, timeout=120):
            t = " --token-file /etc/collatz/token" if token else ""
            return c.sh(f"collatzctl {command} --server 127.0.0.1:50051{t} {' '.join(args)}", check=check,
                        timeout=timeout)

        submit = ("--from", "1", "--to", RANGE, "--kinds", "delay", "--unit-size", UNIT)
        r = ctl("submit", *submit, token=False, check=False)
        print(f"submit without the token: exit {r.returncode}: {(r.stdout + r.stderr).strip()[-300:]}")
        if r.returncode == 0 or not re.search(r"unauth|token|permission", r.stdout + r.stderr, re.I):
            fail("the server did not refuse a submission without the token")
        ctl("submit", *submit)

        # The worker: the ExecStartPre guard, then READY after self-tests and registration.
        t = time.time()
        r = c.sh("systemctl start collatz-worker", timeout=300, check=False)
        s = c.show("collatz-worker", "ActiveState", "SubState", "WatchdogUSec")
        log(f"systemctl start collatz-worker: exit {r.returncode} after {time.time() - t:.1f} s: {s}")
        if r.returncode != 0 or s.get("ActiveState") != "active":
            fail(f"collatz-worker did not start:\n{r.stderr}\n{c.journal('collatz-worker')}")
            return
        wpid, wuser, wuid = process_user("collatz-worker")
        print(f"collatz-worker: PID {wpid}, user {wuser} (uid {wuid})")
        if wuid == 0 or wuid == uid:
            fail(f"collatz-worker runs as uid {wuid}: not its own dynamic user")
        wenv = c.sh(f"tr '\\0' '\\n' < /proc/{wpid}/environ | grep -E '^(WATCHDOG_USEC|NOTIFY_SOCKET|CREDENTIALS_DIRECTORY)='",
                    check=False).stdout.split()
        print(f"collatz-worker environment from systemd: {wenv}")
        if "WATCHDOG_USEC=120000000" not in wenv:
            fail("collatz-worker: systemd did not arm its watchdog (WATCHDOG_USEC=120000000)")
        worker_started, worker_stamp = time.time(), stamp("collatz-worker")

        # Kill the server with SIGKILL once some units are done: systemd restarts it.
        def finished():
            m = re.search(r"(\d+) finished", ctl("status", check=False).stdout)
            return int(m.group(1)) if m else 0
        if not wait(lambda: finished() >= 2, 180):
            fail(f"no unit finished within 180 s:\n{c.journal('collatz-worker')}")
        before = c.show("collatz-server", "MainPID", "NRestarts")
        count = finished()
        c.sh("systemctl kill -s SIGKILL collatz-server")
        log(f"collatz-server (PID {before['MainPID']}) killed with SIGKILL after {count} finished units")
        back = wait(lambda: (lambda s: s["ActiveState"] == "active" and s["MainPID"] not in ("0", before["MainPID"])
                             and s)(c.show("collatz-server", "ActiveState", "MainPID", "NRestarts")), 60)
        if not back:
            fail(f"collatz-server did not come back after SIGKILL:\n{c.journal('collatz-server')}")
            return
        print(f"collatz-server back: PID {back['MainPID']}, NRestarts {back['NRestarts']}")
        if int(back["NRestarts"]) != int(before["NRestarts"]) + 1:
            fail(f"NRestarts {before['NRestarts']} -> {back['NRestarts']}")

        done = ctl("status", "--wait", "600", timeout=660, check=False)
        print(done.stdout.strip())
        if done.returncode != 0:
            fail(f"the range was not finished:\n{c.journal('collatz-worker')}")
        got = ctl("server-records", "--kind", "delay", "--format", "csv").stdout
        rows = [l.split(",") for l in got.strip().splitlines() if l and not l.startswith("n,")]
        records = [(int(r[0]), int(r[1])) for r in rows]
        with open(os.path.join(a.data, "delay_records.csv"), newline="") as f:
            want = [(int(r["n"]), int(r["delay"])) for r in csv.DictReader(f) if int(r["n"]) < RANGE_N]
        print(f"{len(records)} final delay records below {RANGE}, reference {len(want)}")
        if records != want or any(len(r) > 2 for r in rows):
            fail(f"delay records differ from shared/data (or are not final): {rows[:5]} ...")
        ws = c.show("collatz-worker", "NRestarts", "ActiveState")
        print(f"collatz-worker after the server's restart: {ws}")
        # The worker pings at half its WatchdogSec (120 s): a ping has come after 60 s.
        wait(lambda: time.time() - worker_started > 65, 70)
        if not stamp("collatz-worker") > worker_stamp:
            fail("collatz-worker: no WATCHDOG=1 ping reached systemd within 65 s (WatchdogSec=120s)")
        else:
            print("collatz-worker: systemd saw its WATCHDOG=1 pings")

        # The watchdog enforced: with a drop-in of WatchdogSec=3s the server pings every 1.5 s;
        # stopped with SIGSTOP it pings no more, and systemd aborts it and starts it again.
        c.sh("mkdir -p /etc/systemd/system/collatz-server.service.d && printf '[Service]\\nWatchdogSec=3s\\n"
             "TimeoutAbortSec=3s\\n' > /etc/systemd/system/collatz-server.service.d/watchdog-test.conf "
             "&& systemctl daemon-reload && systemctl restart collatz-server")
        before = c.show("collatz-server", "MainPID", "NRestarts", "WatchdogUSec")
        c.sh(f"kill -STOP {before['MainPID']}")
        t = time.time()
        back = wait(lambda: (lambda s: s["ActiveState"] == "active" and s["MainPID"] not in ("0", before["MainPID"])
                             and s)(c.show("collatz-server", "ActiveState", "MainPID", "NRestarts")), 60)
        journal = c.journal("collatz-server", 30)
        log(f"collatz-server stopped (SIGSTOP) with WatchdogUSec={before['WatchdogUSec']}: "
            f"{'back as PID ' + back['MainPID'] if back else 'not back'} after {time.time() - t:.0f} s")
        if not back or "Watchdog timeout" not in journal:
            fail(f"the watchdog did not restart a server that stopped pinging:\n{journal}")
        c.sh("rm -r /etc/systemd/system/collatz-server.service.d && systemctl daemon-reload")

        # A clean stop of each.
        for unit in ("collatz-worker", "collatz-server"):
            t = time.time()
            r = c.sh(f"systemctl stop {unit}", timeout=200, check=False)
            s = c.show(unit, "ActiveState", "Result", "ExecMainCode", "ExecMainStatus")
            log(f"systemctl stop {unit}: exit {r.returncode} after {time.time() - t:.1f} s: {s}")
            if r.returncode != 0 or s.get("Result") != "success" or s.get("ExecMainStatus") != "0":
                fail(f"{unit} did not stop cleanly: {s}\n{c.journal(unit)}")
        print("--- journal (tail)\n" + c.sh("journalctl --no-pager -n 25 -o short-precise -u collatz-server "
                                            "-u collatz-worker", check=False).stdout)
        log(f"done in {time.time() - started:.0f} s")
    except KeyboardInterrupt as e:
        fail(f"interrupted ({e})")
    finally:
        signal.alarm(0)
        subprocess.run(["podman", "--runtime", "runc", "rm", "-f", "-t", "10", name], capture_output=True, text=True,
                       timeout=120)
        if subprocess.run(["podman", "container", "exists", name]).returncode == 0:
            fail(f"container {name} is still there after podman rm -f")
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
    finish("deploy_systemd_real_test")
