"""A/B of two dlc checkouts on `benchmarks/ops.py` rows, against ONNX Runtime, taking turns.

Run: `python3 benchmarks/ops_ab.py --base /work/main --branch . --threads 1 --rounds 7
"softmax 128x1000" "transpose NCHW->NHWC 64 56"`.

Each checkout is imported in its own worker process (`PYTHONPATH` set to it), which compiles
the named cases once (and, in the branch's worker, builds ONNX Runtime sessions); the driver then
asks the workers in turn for one timed batch each (`common.time_calls`, 3 samples) per case and
round, alternating which goes first, so that base, branch and ORT see the same machine load.
Each row prints the median over rounds of ORT's time over each checkout's (above 1: dlc is
faster; CPU-time ratio in parentheses) and each checkout's largest error relative to ORT's
largest output.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys


def worker(root: str, threads: int, names: list[str], with_ort: bool) -> None:
    """Compile the cases with the dlc of `root`, then time the one named on each stdin line."""
    sys.path[:0] = [root, os.path.join(root, "benchmarks")]
    import common
    import numpy as np
    import onnxruntime as ort
    import ops

    import dlc

    assert os.path.realpath(dlc.__file__).startswith(os.path.realpath(root)), dlc.__file__
    calls = {}
    for make in ops.CASES:
        name = make.args[0] if isinstance(make, functools.partial) else ""
        if name not in names:
            continue
        case = make()
        executable = dlc.compile(case.model, threads=threads, cache=False)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(case.model.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
        expected = session.run(None, case.inputs)[0]
        args = list(case.inputs.values())
        out = np.empty_like(expected)
        executable(*args, out=(out,))
        error = float(np.abs(out - expected).max()) / max(float(np.abs(expected).max()), 1e-30)
        calls[name] = functools.partial(executable, *args, out=(out,))
        if with_ort:
            calls[name + "#ort"] = functools.partial(session.run, None, case.inputs)
        print(json.dumps({"compiled": name, "error": error}), flush=True)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        key = line.strip()
        timing = common.time_calls({key: calls[key]}, repeats=3, warmup=1,
                                   settle_seconds=0.05)[key]
        print(json.dumps({"median": timing.median, "cpu": timing.cpu}), flush=True)


class Worker:
    def __init__(self, root: str, threads: int, names: list[str], with_ort: bool) -> None:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(root))
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker", os.path.abspath(root), "--threads",
             str(threads), *(["--ort"] if with_ort else []), *names],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=root)
        self.errors: dict[str, float] = {}
        while True:
            message = json.loads(self._read())
            if message.get("ready"):
                break
            self.errors[message["compiled"]] = message["error"]

    def _read(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("a worker ended early (see its error above)")
        return line

    def time(self, key: str) -> dict[str, float]:
        assert self.process.stdin is not None
        self.process.stdin.write(key + "\n")
        self.process.stdin.flush()
        return json.loads(self._read())

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="+", help="case names of benchmarks/ops.py (--list)")
    parser.add_argument("--base", default="/work/main")
    parser.add_argument("--branch", default=".")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--ort", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.threads, args.names, args.ort)
        return
    base = Worker(args.base, args.threads, args.names, with_ort=False)
    branch = Worker(args.branch, args.threads, args.names, with_ort=True)
    samples = {name: {"base": [], "branch": [], "ort": []} for name in args.names}
    for round_ in range(args.rounds):
        for name in args.names:
            turns = [("branch", branch, name), ("ort", branch, name + "#ort"),
                     ("base", base, name)]
            for who, process, key in (turns if round_ % 2 == 0 else turns[::-1]):
                samples[name][who].append(process.time(key))
    print(f"{args.threads} thread(s), {args.rounds} rounds; ratio = ORT time / dlc time "
          "(median; CPU time in parentheses)")
    for name in args.names:
        wall = {w: statistics.median(s["median"] for s in v) for w, v in samples[name].items()}
        cpu = {w: statistics.median(s["cpu"] for s in v) for w, v in samples[name].items()}
        print(f"{name:<28} base {wall['ort'] / wall['base']:5.2f} "
              f"({cpu['ort'] / cpu['base']:5.2f})  branch {wall['ort'] / wall['branch']:5.2f} "
              f"({cpu['ort'] / cpu['branch']:5.2f})  ort {wall['ort'] * 1e3:7.3f} ms  "
              f"err base {base.errors[name]:.1e} branch {branch.errors[name]:.1e}", flush=True)
    base.close()
    branch.close()


if __name__ == "__main__":
    main()
