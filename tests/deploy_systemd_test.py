#!/usr/bin/env python3
"""Checks deploy/systemd/*.service with systemd's own verifier and by running them.

1. `systemd-analyze verify` on copies of the units whose binaries point at the built ones
   (any warning fails the test, not just errors).
2. The hardening and lifecycle keys the units promise are there.
3. Each ExecStart= line is expanded the way systemd does it (Environment= defaults, then the
   shipped .env example, then the test's overrides, %S/%d specifiers, ${VAR} and $VAR words)
   and run with NOTIFY_SOCKET/WATCHDOG_USEC pointing at a datagram socket of this test:
   READY=1, WATCHDOG=1, then STOPPING=1 and exit 0 after SIGTERM must arrive, i.e. the flags
   are the binaries' real ones and the sd_notify wiring works.
Exit 77 (skipped) only when systemd-analyze is not installed.
"""
import fnmatch
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from deploy_checks import fail, finish, parse_args


def parse_unit(path):
    """[(section, key, value)] with continuation lines joined."""
    entries, section, pending = [], None, ""
    for raw in open(path, encoding="utf-8"):
        line = raw.rstrip("\n")
        if pending:
            line = pending + " " + line.strip()
            pending = ""
        if line.endswith("\\"):
            pending = line[:-1].rstrip()
            continue
        s = line.strip()
        if not s or s.startswith("#") or s.startswith(";"):
            continue
        if s.startswith("["):
            section = s.strip("[]")
            continue
        key, _, value = s.partition("=")
        entries.append((section, key.strip(), value.strip()))
    return entries


def values(entries, key, section="Service"):
    return [v for (sec, k, v) in entries if sec == section and k == key]


def parse_env_file(path):
    env = {}
    for line in open(path, encoding="utf-8"):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        k, _, v = s.partition("=")
        env[k.strip()] = v.strip()
    return env


def unit_environment(entries, env_file, overrides):
    env = {}
    for v in values(entries, "Environment"):
        k, _, val = v.partition("=")
        env[k] = val
    env.update(parse_env_file(env_file))
    env.update(overrides)
    return env


def expand_command(line, env, specifiers):
    """systemd's ExecStart= expansion: specifiers, "$VAR" words split, ${VAR} one word, $$ -> $."""
    for spec, val in specifiers.items():
        line = line.replace(spec, val)
    args = []
    for word in shlex.split(line):
        m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if m:
            args.extend(env.get(m.group(1), "").split())
            continue
        word = word.replace("$$", "\0")
        word = re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: env.get(m.group(1), ""), word)
        args.append(word.replace("\0", "$"))
    return args


class NotifySocket:
    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)

    def wait_for(self, wanted, timeout, alive=lambda: True):
        """The first datagram holding the line `wanted` within `timeout` seconds, else None
        (sooner when `alive()` turns false: the daemon exited)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.sock.settimeout(min(0.5, max(0.05, deadline - time.time())))
            try:
                msg = self.sock.recv(4096).decode()
            except socket.timeout:
                if not alive():
                    return None
                continue
            if wanted in msg.split("\n"):
                return msg
        return None


class Daemon:
    def __init__(self, args, env, notify_path, watchdog_usec):
        full_env = dict(os.environ)
        full_env.update(env)
        full_env["NOTIFY_SOCKET"] = notify_path
        full_env["WATCHDOG_USEC"] = str(watchdog_usec)
        full_env.pop("WATCHDOG_PID", None)
        self.lines = []
        self.proc = subprocess.Popen(args, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def log(self):
        return "\n".join(self.lines[-40:])

    def stop(self, timeout):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None


def verify_units(source, binaries, tmp):
    analyze = shutil.which("systemd-analyze")
    if not analyze:
        print("SKIP: systemd-analyze not installed (Debian package systemd; deploy/install-deps.sh installs it)")
        sys.exit(77)
    vdir = os.path.join(tmp, "verify")
    os.makedirs(vdir)
    for name, binary in binaries.items():
        text = open(os.path.join(source, "deploy/systemd", name + ".service"), encoding="utf-8").read()
        installed = "/usr/local/bin/" + name
        if installed not in text:
            fail(f"{name}.service: ExecStart does not run {installed}")
        with open(os.path.join(vdir, name + ".service"), "w", encoding="utf-8") as out:
            out.write(text.replace(installed, binary))
    units = [os.path.join(vdir, n + ".service") for n in binaries]
    r = subprocess.run([analyze, "verify", "--man=no"] + units, capture_output=True, text=True)
    output = (r.stdout + r.stderr).strip()
    print(f"systemd-analyze verify: exit {r.returncode}" + (f"\n{output}" if output else ", no warnings"))
    if r.returncode != 0 or output:
        fail("systemd-analyze verify reported problems (see above)")


def check_keys(name, entries, extra):
    want = {
        "Type": "notify", "Restart": "on-failure", "DynamicUser": "yes", "NoNewPrivileges": "yes",
        "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes", "StateDirectory": name,
    }
    want.update(extra)
    for key, val in want.items():
        if val not in values(entries, key):
            fail(f"{name}.service: wants {key}={val}, has {values(entries, key)}")
    if not values(entries, "WatchdogSec"):
        fail(f"{name}.service: no WatchdogSec=")
    env_file = "-/etc/collatz/" + name.split("-")[1] + ".env"
    if env_file not in values(entries, "EnvironmentFile"):
        fail(f"{name}.service: wants EnvironmentFile={env_file}")


def run_daemon(name, args, env, tmp, watchdog_usec, ready_timeout, on_ready=None):
    """Runs it like systemd would; returns (daemon, READY message) with the daemon still running."""
    notify_path = os.path.join(tmp, name + ".notify")
    sock = NotifySocket(notify_path)
    print(f"{name}: {shlex.join(args)}", flush=True)
    d = Daemon(args, env, notify_path, watchdog_usec)
    ready = sock.wait_for("READY=1", ready_timeout, lambda: d.proc.poll() is None)
    if ready is None:
        fail(f"{name}: no READY=1 within {ready_timeout} s; log:\n{d.log()}")
        d.stop(10)
        return None, None
    print(f"{name}: {ready!r}")
    if sock.wait_for("WATCHDOG=1", 3 * watchdog_usec / 1e6) is None:
        fail(f"{name}: no WATCHDOG=1 within {3 * watchdog_usec / 1e6} s of READY; log:\n{d.log()}")
    else:
        print(f"{name}: WATCHDOG=1")
    d.sock = sock
    return d, ready


def stop_daemon(name, d, timeout):
    d.proc.send_signal(signal.SIGTERM)
    if d.sock.wait_for("STOPPING=1", timeout) is None:
        fail(f"{name}: no STOPPING=1 after SIGTERM; log:\n{d.log()}")
    else:
        print(f"{name}: STOPPING=1")
    code = d.stop(timeout)
    print(f"{name}: exit {code}")
    if code != 0:
        fail(f"{name}: exit {code} after SIGTERM (want 0); log:\n{d.log()}")


def main():
    a = parse_args("server", "worker")
    sysd = os.path.join(a.source, "deploy/systemd")
    tmp = tempfile.mkdtemp(prefix="collatz-deploy-systemd-")
    try:
        verify_units(a.source, {"collatz-server": a.server, "collatz-worker": a.worker}, tmp)

        server_unit = parse_unit(os.path.join(sysd, "collatz-server.service"))
        worker_unit = parse_unit(os.path.join(sysd, "collatz-worker.service"))
        check_keys("collatz-server", server_unit, {"PrivateDevices": "yes"})
        check_keys("collatz-worker", worker_unit, {"DevicePolicy": "closed"})
        if "yes" in values(worker_unit, "PrivateDevices"):
            fail("collatz-worker.service: PrivateDevices=yes would hide /dev/nvidia*")
        allowed = " ".join(values(worker_unit, "DeviceAllow"))
        # The /proc/devices groups of the NVIDIA driver 580 (H200 machine) and of older drivers.
        groups = ("nvidia", "nvidiactl", "nvidia-uvm", "nvidia-caps", "nvidia-frontend")
        patterns = [v.split()[0][len("char-"):] for v in values(worker_unit, "DeviceAllow")
                    if v.startswith("char-") and v.split()[1:] == ["rw"]]
        for g in groups:
            if not any(fnmatch.fnmatchcase(g, p) for p in patterns):
                fail(f"collatz-worker.service: DeviceAllow= does not let through device group {g} (rw)")

        state = os.path.join(tmp, "state")
        creds = os.path.join(tmp, "credentials")
        for d in (state + "/collatz-server", state + "/collatz-worker", creds):
            os.makedirs(d)
        with open(os.path.join(creds, "token"), "w") as f:
            f.write("deploy-test-token-0123456789abcdef\n")
        specifiers = {"%S": state, "%d": creds}

        # The server, as an operator's server.env on top of the shipped example would run it.
        env = unit_environment(server_unit, os.path.join(sysd, "server.env"), {"COLLATZ_LISTEN": "127.0.0.1:0"})
        args = expand_command(values(server_unit, "ExecStart")[0].replace("/usr/local/bin/collatz-server", a.server),
                              env, specifiers)
        server, ready = run_daemon("collatz-server", args, env, tmp, 2_000_000, 60)
        if server is None:
            return
        m = re.search(r"\(port (\d+)\)", ready)
        if not m:
            fail(f"collatz-server: READY status names no port: {ready!r}")
            server.stop(30)
            return
        port = m.group(1)
        if not os.path.exists(os.path.join(state, "collatz-server", "collatz.db")):
            fail("collatz-server: no database in its StateDirectory")

        # The worker: the ExecStartPre guard, then the daemon on the CPU (no GPU in CI).
        wenv = unit_environment(worker_unit, os.path.join(sysd, "worker.env"), {
            "COLLATZ_SERVER": "127.0.0.1:" + port, "COLLATZ_BACKEND": "cpu",
            "COLLATZ_METRICS_LISTEN": "127.0.0.1:0", "COLLATZ_WORKER_EXTRA_ARGS": "--threads 1"})
        pre = expand_command(values(worker_unit, "ExecStartPre")[0], wenv, specifiers)
        for server_value, want in (("", 2), ("127.0.0.1:" + port, 0)):
            e = dict(os.environ, **wenv)
            e["COLLATZ_SERVER"] = server_value
            r = subprocess.run(pre, env=e, capture_output=True, text=True)
            if r.returncode != want:
                fail(f"collatz-worker ExecStartPre with COLLATZ_SERVER={server_value!r}: exit {r.returncode}, want {want}")
        wargs = expand_command(values(worker_unit, "ExecStart")[0].replace("/usr/local/bin/collatz-worker", a.worker),
                               wenv, specifiers)
        worker, _ = run_daemon("collatz-worker", wargs, wenv, tmp, 1_000_000, 240)
        if worker is not None:
            if not os.path.isdir(os.path.join(state, "collatz-worker", "spool")):
                fail("collatz-worker: no spool in its StateDirectory")
            stop_daemon("collatz-worker", worker, 120)
        stop_daemon("collatz-server", server, 60)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
    finish("deploy_systemd_test")
