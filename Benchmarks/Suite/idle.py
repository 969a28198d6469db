#!/usr/bin/env python3
"""Idle wake-ups (issue 19 item 5): how often an idle client wakes the CPU, above a bare Swift-concurrency process.

`vortex-realtime serve --ka-interval 60 --connection-timeout-ms 300000` plays the service at its real cadence. One
`vortex-realtime watch` per transport (the notifier with all nine streams live, default settings) and a bare process
(`LifecycleBench idle`: the Swift concurrency runtime started, nothing else) run side by side. Once every stream is
live and a settling time has passed (65 s by default: a connect leaves two cancelled timers that fire once, 15 s and
60 s later; the windows measure the steady state after them), each process's voluntary context switches, summed over
all its threads (/proc/PID/task/*/status, sampled every 50 ms because worker threads come and go), are counted over
each window: a voluntary switch is a thread that blocked, i.e. one wake-up cycle. Reported per minute, and above the bare process of
the same run; also as the issue first counted, reading the threads only at each window's two ends (which misses the
pool threads that started and retired inside the window).

Standard library only; Linux only (it reads /proc). Run it through `scripts/bench.sh --idle`.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SECRET = "idle-benchmark-jwt-secret-0123456789abcdef"
LOGS = os.path.join(ROOT, ".build", "bench-logs")


def log(message):
    print(message, file=sys.stderr, flush=True)


def thread_switches(pid):
    """{thread id: voluntary context switches} for every thread of `pid` now."""
    counts = {}
    task_dir = "/proc/%d/task" % pid
    for tid in os.listdir(task_dir):
        try:
            with open(os.path.join(task_dir, tid, "status")) as status:
                for line in status:
                    if line.startswith("voluntary_ctxt_switches:"):
                        counts[tid] = int(line.split()[1])
        except FileNotFoundError:
            pass  # a thread that ended between the listing and the read
    return counts


class Window:
    """Voluntary switches of one process over a window, summed over all its threads. Swift's thread pool starts and
    ends worker threads as work comes and goes, so the threads are sampled every 50 ms: a thread seen at the start
    counts from its count then, one born during the window from zero, each up to its last sample (a thread that ends
    loses at most the switch of its exit)."""

    def __init__(self, pid):
        self.pid = pid
        self.first = thread_switches(pid)
        self.last = dict(self.first)
        self.threads = set(self.first)

    def sample(self):
        now = thread_switches(self.pid)
        self.last.update(now)
        self.threads.update(now)

    def total(self):
        return sum(self.last[tid] - self.first.get(tid, 0) for tid in self.last)

    def snapshot_total(self, now):
        """The count read only at the window's two ends, as the issue measured: the switches of threads that ended
        in between are lost (every pool thread that woke, worked and retired)."""
        return sum(now.values()) - sum(self.first.values())


class Process:
    def __init__(self, name, command):
        os.makedirs(LOGS, exist_ok=True)
        self.name = name
        self.log_path = os.path.join(LOGS, "idle-%s.log" % name)
        self.stderr = open(self.log_path, "w")
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=self.stderr, cwd=ROOT)

    def live_streams(self):
        with open(self.log_path) as text:
            return sum(1 for line in text if line.startswith("event: live("))

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.stderr.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", required=True, help="the vortex-realtime binary of the clients (and the server, unless --server-cli)")
    parser.add_argument("--server-cli", help="the vortex-realtime binary that serves (default: --cli)")
    parser.add_argument("--compare", action="append", default=[], metavar="LABEL=PATH",
                        help="also run `watch` from another vortex-realtime binary in the same run (for example main's build)")
    parser.add_argument("--bare", required=True, help="the LifecycleBench binary (its `idle` mode is the baseline)")
    parser.add_argument("--seconds", type=float, default=60, help="length of one window")
    parser.add_argument("--windows", type=int, default=3, help="consecutive windows")
    parser.add_argument("--settle", type=float, default=65,
                        help="seconds after every stream is live before measuring (default 65: past the one-time timers of a "
                             "connect, the 15 s ack timeout and the failover's 60 s, which fire once, cancelled)")
    parser.add_argument("--transports", nargs="+", default=["appsync", "graphql"])
    parser.add_argument("--label", default="", help="a label for the report (for example the commit)")
    options = parser.parse_args()

    server = subprocess.Popen(
        [options.server_cli or options.cli, "serve", "--port", "0", "--jwt-secret", SECRET, "--ka-interval", "60",
         "--connection-timeout-ms", "300000"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    processes = []
    try:
        endpoints = json.loads(server.stdout.readline())
        token = subprocess.run([options.cli, "token", "--secret", SECRET, "--user", "u-1"], capture_output=True, text=True,
                               check=True, cwd=ROOT).stdout.strip()
        processes.append(Process("bare", [options.bare, "idle"]))
        clients = [("", options.cli)] + [tuple(item.split("=", 1)) for item in options.compare]
        for label, cli in clients:
            for transport in options.transports:
                endpoint = endpoints["http"] if transport == "appsync" else endpoints["graphql"]
                name = transport if not label else "%s-%s" % (label, transport)
                processes.append(Process(name, [cli, "watch", "--transport", transport, "--endpoint", endpoint,
                                                "--token", token, "--user", "u-1", "--org", "o-1"]))
        deadline = time.time() + 60
        while any(p.name != "bare" and p.live_streams() < 5 for p in processes):
            if time.time() > deadline:
                raise SystemExit("not every stream went live within 60 s; see %s" % LOGS)
            time.sleep(0.2)
        log("every stream live; settling %.0f s" % options.settle)
        time.sleep(options.settle)
        per_minute = {p.name: [] for p in processes}
        snapshot_per_minute = {p.name: [] for p in processes}
        threads_seen = {p.name: 0 for p in processes}
        for window in range(options.windows):
            windows = {p.name: Window(p.process.pid) for p in processes}
            started = time.monotonic()
            while time.monotonic() - started < options.seconds:
                time.sleep(0.05)
                for p in processes:
                    windows[p.name].sample()
            elapsed = time.monotonic() - started
            for p in processes:
                ends = thread_switches(p.process.pid)
                per_minute[p.name].append(windows[p.name].total() * 60 / elapsed)
                snapshot_per_minute[p.name].append(windows[p.name].snapshot_total(ends) * 60 / elapsed)
                threads_seen[p.name] = max(threads_seen[p.name], len(windows[p.name].threads))
            log("window %d: %s" % (window + 1, ", ".join("%s %.1f (ends only %.1f)" % (name, values[-1], snapshot_per_minute[name][-1])
                                                         for name, values in per_minute.items())))
        bare = per_minute["bare"]
        print("\n## Idle wake-ups a minute %s(%d windows of %.0f s, after %.0f s settling)\n"
              % ("— %s " % options.label if options.label else "", options.windows, options.seconds, options.settle))
        print("| process | voluntary switches / min, median (min–max) | above bare, median (min–max) | threads seen in a window "
              "| read at the window's ends only: / min, above bare (medians) |")
        print("|---|---|---|---|---|")
        for p in processes:
            values = per_minute[p.name]
            above = [value - base for value, base in zip(values, bare)]
            if p.name == "bare":
                name = "bare Swift process"
            elif "-" in p.name:
                label, transport = p.name.split("-", 1)
                name = "`watch` on %s (%s)" % (transport, label)
            else:
                name = "`watch` on %s" % p.name
            snapshots = snapshot_per_minute[p.name]
            snapshot_above = [value - base for value, base in zip(snapshots, snapshot_per_minute["bare"])]
            print("| %s | %.1f (%.1f–%.1f) | %s | %d | %.1f, %s |" % (
                name, statistics.median(values), min(values), max(values),
                "—" if p.name == "bare" else "%.1f (%.1f–%.1f)" % (statistics.median(above), min(above), max(above)),
                threads_seen[p.name], statistics.median(snapshots),
                "—" if p.name == "bare" else "%.1f" % statistics.median(snapshot_above)))
    finally:
        for p in processes:
            p.stop()
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
