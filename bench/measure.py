"""What the benchmarks share: the binary they time, and one command's time and peak memory."""

import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def mctl_binary():
    """$MCTL, else the release build of mctl, built here."""
    if os.environ.get("MCTL"):
        return os.environ["MCTL"]
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "mctl"], cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "release", "mctl")


def measured(cmd, env, keep_output=True):
    """(seconds, peak RSS in MiB, stdout or None) of one command; exits when it fails. GNU time
    takes the peak: a child forked from a large Python process would count Python's pages."""
    with tempfile.NamedTemporaryFile("r") as rss, open(os.devnull, "wb") as null:
        start = time.perf_counter()
        out = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name, *cmd], env=env,
                             stdout=subprocess.PIPE if keep_output else null, stderr=subprocess.PIPE)
        took = time.perf_counter() - start
        if out.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed: {out.stderr.decode(errors='replace')[:400]}")
        return took, int(rss.read().split()[-1]) / 1024, out.stdout
