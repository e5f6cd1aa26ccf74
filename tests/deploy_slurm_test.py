#!/usr/bin/env python3
"""Checks deploy/slurm/collatz-worker.sbatch.

1. The #SBATCH directives: a GPU per task, an array, a signal of its own (USR1, not TERM) to
   the batch shell early enough for the worker's grace period, requeue, CPUs a 2-CPU node has.
2. The worker command line the script builds is checked by the worker's own argument parser
   (COLLATZ_VALIDATE_ONLY=1 runs `collatz-worker ... --validate-only`); a bad extra flag and a
   missing COLLATZ_SERVER must fail, so the check can fail.
3. The drain path: USR1 (the time-limit warning) to the script reaches the worker as TERM, the
   script waits for the worker's exit and requeues its own array task with scontrol (fakes of
   both record it); TERM (scancel) drains the worker the same way but must not requeue.
4. COLLATZ_BACKEND=cpu gives `--backend cpu` (no --gpus) and --threads from
   SLURM_CPUS_PER_TASK, accepted by the worker's parser.
deploy_slurm_real (deploy_slurm_real_test.py) runs the script under a real Slurm.
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from deploy_checks import fail, finish, parse_args


def main():
    a = parse_args("worker")
    script = os.path.join(a.source, "deploy/slurm/collatz-worker.sbatch")
    text = open(script, encoding="utf-8").read()
    directives = re.findall(r"^#SBATCH\s+(\S+)", text, re.M)
    print("directives:", " ".join(directives))
    if not any(re.fullmatch(r"--gres=gpu(:[A-Za-z0-9_]+)?:1", d) for d in directives):
        fail("no --gres=gpu:1")
    if not any(d.startswith("--array=") for d in directives):
        fail("no --array=")
    if "--requeue" not in directives:
        fail("no --requeue")
    sig = [re.fullmatch(r"--signal=B:USR1@(\d+)", d) for d in directives]
    sig = [m for m in sig if m]
    if not sig:
        fail("no --signal=B:USR1@SECONDS (the batch shell must get a signal of its own before the "
             "time limit; TERM means scancel)")
    cpus = [int(m.group(1)) for m in (re.fullmatch(r"--cpus-per-task=(\d+)", d) for d in directives) if m]
    if cpus and cpus[0] > 2:
        fail(f"--cpus-per-task={cpus[0]}: a node with 2 CPUs can never run a task")
    grace = re.search(r"COLLATZ_GRACE_SECONDS:-(\d+)", text)
    if sig and grace and int(grace.group(1)) + 20 > int(sig[0].group(1)):
        fail(f"grace {grace.group(1)} s leaves under 20 s to send results before the time limit "
             f"(signal {sig[0].group(1)} s ahead)")

    tmp = tempfile.mkdtemp(prefix="collatz-deploy-slurm-")
    try:
        base = dict(os.environ, HOME=tmp, COLLATZ_WORKER_BIN=a.worker, SLURM_ARRAY_TASK_ID="3")
        base.pop("COLLATZ_SERVER", None)
        token = os.path.join(tmp, "token")
        with open(token, "w") as f:
            f.write("slurm-test-token\n")

        def run(extra, **kw):
            env = dict(base, **extra)
            return subprocess.run(["bash", script], env=env, capture_output=True, text=True, timeout=60, **kw)

        ok = run({"COLLATZ_SERVER": "coord.example.org:50051", "COLLATZ_TOKEN_FILE": token, "COLLATZ_VALIDATE_ONLY": "1"})
        print(f"validate-only: exit {ok.returncode}: {(ok.stdout + ok.stderr).strip()}")
        if ok.returncode != 0:
            fail("the worker's parser refuses the script's command line")
        bad = run({"COLLATZ_SERVER": "coord.example.org:50051", "COLLATZ_VALIDATE_ONLY": "1",
                   "COLLATZ_WORKER_EXTRA_ARGS": "--no-such-flag 1"})
        print(f"with a bad extra flag: exit {bad.returncode}")
        if bad.returncode == 0:
            fail("a bad extra flag passed --validate-only: the parser is not being consulted")
        missing = run({"COLLATZ_VALIDATE_ONLY": "1"})
        print(f"without COLLATZ_SERVER: exit {missing.returncode}")
        if missing.returncode == 0:
            fail("the script runs without COLLATZ_SERVER")

        cpu = run({"COLLATZ_SERVER": "coord.example.org:50051", "COLLATZ_TOKEN_FILE": token,
                   "COLLATZ_VALIDATE_ONLY": "1", "COLLATZ_BACKEND": "cpu", "SLURM_CPUS_PER_TASK": "2"})
        print(f"validate-only, COLLATZ_BACKEND=cpu: exit {cpu.returncode}: {(cpu.stdout + cpu.stderr).strip()}")
        if cpu.returncode != 0:
            fail("the worker's parser refuses the script's command line with COLLATZ_BACKEND=cpu")

        # Drain and requeue, with a fake worker and a fake scontrol.
        bin_dir = os.path.join(tmp, "bin")
        os.makedirs(bin_dir)
        record = os.path.join(tmp, "record")
        fake_worker = os.path.join(bin_dir, "fake-worker")
        with open(fake_worker, "w") as f:
            f.write(f"""#!/usr/bin/env bash
echo "args $*" >> {record}
trap 'echo TERM >> {record}; sleep 1; echo drained >> {record}; exit 0' TERM
echo started >> {record}
while :; do sleep 0.1; done
""")
        with open(os.path.join(bin_dir, "scontrol"), "w") as f:
            f.write(f"#!/usr/bin/env bash\necho \"scontrol $*\" >> {record}\n")
        for p in (fake_worker, os.path.join(bin_dir, "scontrol")):
            os.chmod(p, 0o755)

        def signalled(sig, extra):
            if os.path.exists(record):
                os.unlink(record)
            env = dict(base, COLLATZ_SERVER="coord.example.org:50051", COLLATZ_WORKER_BIN=fake_worker,
                       PATH=bin_dir + ":" + os.environ["PATH"], SLURM_JOB_ID="1042", SLURM_ARRAY_JOB_ID="1039",
                       **extra)
            p = subprocess.Popen(["bash", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            deadline = time.time() + 20
            while time.time() < deadline and not (os.path.exists(record) and "started" in open(record).read()):
                time.sleep(0.1)
            p.send_signal(sig)
            out, _ = p.communicate(timeout=30)
            lines = open(record).read().split("\n") if os.path.exists(record) else []
            print(f"{sig.name} run: exit {p.returncode}; script said:\n{out.strip()}\nrecorded: {lines}")
            if p.returncode != 0:
                fail(f"{sig.name}: drained worker exited 0 but the script exited {p.returncode}")
            if "TERM" not in lines or "drained" not in lines:
                fail(f"{sig.name} did not reach the worker as TERM, or the script did not wait for it to drain")
            return lines, next((l for l in lines if l.startswith("args ")), "")

        lines, args = signalled(signal.SIGUSR1, {})
        if "scontrol requeue 1039_3" not in lines:
            fail("after USR1 (time limit) the task did not requeue itself as 1039_3")
        elif lines.index("scontrol requeue 1039_3") < lines.index("drained"):
            fail("requeued before the worker had drained")
        for flag in ("--server coord.example.org:50051", "--backend gpu", "--gpus all",
                     f"--spool {tmp}/collatz-spool/task-3", "--grace-seconds"):
            if flag not in args:
                fail(f"worker command line lacks {flag!r}: {args}")
        lines, args = signalled(signal.SIGTERM, {"COLLATZ_BACKEND": "cpu", "SLURM_CPUS_PER_TASK": "2"})
        if any(l.startswith("scontrol requeue") for l in lines):
            fail("after TERM (scancel) the task requeued itself: a cancelled task must stop for good")
        for flag in ("--backend cpu", "--threads 2"):
            if flag not in args:
                fail(f"COLLATZ_BACKEND=cpu: worker command line lacks {flag!r}: {args}")
        if "--gpus" in args or "--backend gpu" in args:
            fail(f"COLLATZ_BACKEND=cpu: worker command line still asks for GPUs: {args}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
    finish("deploy_slurm_test")
