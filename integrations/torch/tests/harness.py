"""Runs a test script as N ranks (processes) under one deadline, for weft_torch's tests.

A test script calls ``main(worker, ...)``: without ``--rank`` it is the launcher, which starts
itself once per rank (``--rank r``), waits for every rank until the deadline (then kills them
all and fails), prints each rank's output and exits 0 only if every rank did. With ``--rank`` it
is rank r: it calls ``worker(args)``, whose failure (an exception) is its exit status.
"""

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time


def parse_args(extra=None):
    p = argparse.ArgumentParser()
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--rank", type=int, default=None)
    p.add_argument("--deadline", type=float, default=240.0, help="seconds for the whole job")
    p.add_argument("--init-method", default=None, help="set by the launcher for the ranks")
    p.add_argument("--launcher", choices=["spawn", "mpirun"], default="spawn")
    if extra:
        extra(p)
    return p.parse_args()


def _rank_command(args, rank):
    cmd = [sys.executable, os.path.abspath(sys.argv[0])] + _passthrough(args)
    cmd += ["--init-method", args.init_method]
    if rank is not None:
        cmd += ["--rank", str(rank)]
    return cmd


def _passthrough(args):
    out = []
    for key, value in vars(args).items():
        if key in ("rank", "init_method", "deadline") or value is None:
            continue
        flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            if value:
                out.append(flag)
        else:
            out += [flag, str(value)]
    return out


def launch(args, expect_exit=None, env=None):
    """Starts the ranks, waits for them (deadline), returns [(rank, returncode, output)]."""
    tmp = tempfile.mkdtemp(prefix="weft-torch-test.")
    if args.init_method is None:
        args.init_method = "file://" + os.path.join(tmp, "store")
    run_env = dict(os.environ)
    run_env.setdefault("MASTER_ADDR", "127.0.0.1")
    run_env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    run_env.update(env or {})
    procs = []
    if args.launcher == "mpirun":
        # Open MPI starts the ranks; each reads its rank from OMPI_COMM_WORLD_RANK.
        run_env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self,tcp")
        cmd = ["mpirun", "--oversubscribe", "-np", str(args.world_size)] + _rank_command(args, None)
        procs.append((None, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=run_env,
                                             start_new_session=True)))
    else:
        for r in range(args.world_size):
            procs.append((r, subprocess.Popen(_rank_command(args, r), stdout=subprocess.PIPE,
                                              stderr=subprocess.STDOUT, env=run_env, start_new_session=True)))
    end = time.monotonic() + args.deadline
    results = []
    for rank, p in procs:
        try:
            out, _ = p.communicate(timeout=max(0.1, end - time.monotonic()))
            results.append((rank, p.returncode, out.decode(errors="replace")))
        except subprocess.TimeoutExpired:
            for _, q in procs:
                if q.poll() is None:
                    os.killpg(q.pid, signal.SIGKILL)
            out, _ = p.communicate()
            results.append((rank, "killed at the deadline (%.0f s)" % args.deadline, out.decode(errors="replace")))
    return results


def rank_from_environment(args):
    if args.rank is not None:
        return args.rank
    for var in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "RANK"):
        if var in os.environ:
            return int(os.environ[var])
    raise SystemExit("no rank: pass --rank or launch with mpirun")


def main(worker, extra_args=None, expect=None):
    """The test script's entry point (see the module's docstring). `expect(results, args)` may
    check the ranks' exit codes itself (a test where a rank is meant to die); by default all
    must be 0."""
    args = parse_args(extra_args)
    if args.rank is None and args.init_method is None:
        start = time.monotonic()
        results = launch(args)
        ok = expect(results, args) if expect else all(rc == 0 for _, rc, _ in results)
        for rank, rc, out in results:
            who = "all ranks (mpirun)" if rank is None else "rank %d" % rank
            print("---- %s: exit %s ----" % (who, rc))
            print(out.rstrip())
        print("==== %s in %.1f s" % ("PASS" if ok else "FAIL", time.monotonic() - start))
        sys.exit(0 if ok else 1)
    args.rank = rank_from_environment(args)
    worker(args)
    sys.stdout.flush()
