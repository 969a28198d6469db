#!/usr/bin/env python3
"""The realtime benchmark suite (issue 11): throughput and CPU per event, RSS growth, and publish -> consumer latency.

Every client runs in its own process against a firehose (Benchmarks/Suite/firehose.py) that writes pre-built frames
in large batches, so the client is the bottleneck. CPU µs/event is the client process's user+sys time from just
before it connects to its last event (start-up and imports excluded); the process's whole CPU (wait4) is shown too.

Run through scripts/bench.sh, which builds the binaries and prepares the Python peers. Standard library only.
Exit status: 0 when every client received every event, 1 otherwise. Targets are reported, never enforced.
"""
import argparse
import gc
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

SUITE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(SUITE))
SECRET = "benchmark-jwt-secret-0123456789abcdef"

# (ratio name, numerator client, denominator client, target); the notifier's targets are issue 29's (item 10), which
# tightened issue 11's 4.0x.
RATIOS = [
    ("AppSyncEventsTransport / bare (AppSync stream)", "appsync", "bare-appsync", 2.0),
    ("GraphQLTransport / bare (GraphQL stream)", "graphql", "bare-graphql", 2.0),
    ("notifier on AppSync / bare (AppSync stream)", "notifier-appsync", "bare-appsync", 3.0),
    ("notifier on GraphQL / bare (GraphQL stream)", "notifier-graphql", "bare-graphql", 3.0),
    ("GraphQLTransport / Python gql", "graphql", "python-gql", 0.2),
]


def log(message):
    print(message, file=sys.stderr, flush=True)


class Firehose:
    """One firehose process per client run, so every run starts from a fresh server."""

    def __init__(self, python, count, rate=0):
        self.process = subprocess.Popen(
            [python, os.path.join(SUITE, "firehose.py"), "--count", str(count), "--rate", str(rate)],
            stdout=subprocess.PIPE, text=True)
        self.port = json.loads(self.process.stdout.readline())["port"]

    def urls(self):
        base = "127.0.0.1:%d" % self.port
        return {"http": "http://%s/event" % base, "realtime": "ws://%s/event/realtime" % base, "graphql": "ws://%s/graphql" % base}

    def stop(self):
        self.process.terminate()
        self.process.wait()


LOGS = os.path.join(ROOT, ".build", "bench-logs")


def run_client(command, timeout, publisher=None, name="client"):
    """Runs one client; returns (result dict or None, process CPU seconds, process max RSS KB, exit code).
    `publisher(ready)` runs beside it; `ready` is set when the client prints {"ready":true}.
    Its stderr (the library's info-level logs) goes to .build/bench-logs/NAME.log."""
    os.makedirs(LOGS, exist_ok=True)
    with open(os.path.join(LOGS, name + ".log"), "w") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=ROOT)
    timer = threading.Timer(timeout, lambda: process.send_signal(signal.SIGKILL))
    timer.start()
    result = None
    ready = threading.Event()
    thread = threading.Thread(target=publisher, args=(ready,), daemon=True) if publisher else None
    if thread:
        thread.start()
    try:
        for line in process.stdout:
            line = line.strip()
            if not line.startswith("{"):
                continue
            message = json.loads(line)
            if message.get("ready"):
                ready.set()
            elif "client" in message:
                result = message
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    finally:
        timer.cancel()
        ready.set()
    if thread:
        thread.join()
    return result, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, process.returncode


class Suite:
    def __init__(self, options):
        self.options = options
        self.python = options.python
        self.bench = os.path.join(ROOT, ".build", options.configuration, "RealtimeBench")
        self.cli = os.path.join(ROOT, ".build", options.configuration, "vortex-realtime")
        self.failures = []

    # MARK: throughput

    def throughput_clients(self, urls, count):
        bench = [self.bench, "--count", str(count)]
        clients = {
            "bare-appsync": bench + ["--client", "bare", "--protocol", "appsync", "--endpoint", urls["http"]],
            "appsync": bench + ["--client", "appsync", "--endpoint", urls["http"]],
            "notifier-appsync": bench + ["--client", "notifier", "--protocol", "appsync", "--endpoint", urls["http"]],
            "bare-graphql": bench + ["--client", "bare", "--protocol", "graphql", "--endpoint", urls["graphql"]],
            "graphql": bench + ["--client", "graphql", "--endpoint", urls["graphql"]],
            "notifier-graphql": bench + ["--client", "notifier", "--protocol", "graphql", "--endpoint", urls["graphql"]],
        }
        if not self.options.skip_python:
            clients["python-websockets"] = [self.python, os.path.join(SUITE, "websockets_client.py"), "--url", urls["realtime"], "--count", str(count)]
            clients["python-gql"] = [self.python, os.path.join(SUITE, "gql_client.py"), "--url", urls["graphql"], "--count", str(count)]
        return clients

    def throughput(self):
        count, rounds = self.options.count, self.options.rounds
        names = list(self.throughput_clients({"http": "", "realtime": "", "graphql": ""}, count))
        if self.options.only:
            names = [name for name in names if name in self.options.only]
        samples = {name: [] for name in names}
        for round_index in range(rounds):
            for name in names:
                firehose = Firehose(self.python, count)
                try:
                    command = self.throughput_clients(firehose.urls(), count)[name]
                    result, process_cpu, process_rss, code = run_client(command, timeout=self.options.client_timeout, name=name)
                finally:
                    firehose.stop()
                if not result or result["received"] != count or code != 0:
                    self.failures.append("%s: received %s of %d events (exit %s)" % (name, result and result["received"], count, code))
                if result:
                    result.update(process_cpu=process_cpu, process_rss_kb=process_rss)
                    samples[name].append(result)
                    log("round %d %-18s %8.0f events/s %6.2f µs/event %s" % (
                        round_index + 1, name, result["received"] / result["seconds"],
                        result["cpu_seconds"] * 1e6 / max(1, result["received"]),
                        "" if result.get("in_order", True) else "OUT OF ORDER"))
        return samples

    def report_throughput(self, samples):
        count = self.options.count
        print("\n## Throughput: %d events of ~188 bytes per client, %d round(s), medians (min-max)\n" % (count, self.options.rounds))
        print("| client | events/s | CPU µs/event | CPU µs/event, whole process | max RSS MB | lost | in order |")
        print("|---|---|---|---|---|---|---|")
        medians = {}
        for name, results in samples.items():
            if not results:
                continue
            rates = [r["received"] / r["seconds"] for r in results]
            cpus = [r["cpu_seconds"] * 1e6 / max(1, r["received"]) for r in results]
            process = [r["process_cpu"] * 1e6 / max(1, r["received"]) for r in results]
            rss = max(max(r["max_rss_kb"], r["process_rss_kb"]) for r in results) / 1024
            medians[name] = statistics.median(cpus)
            order = {True: "yes", False: "NO"}.get(results[-1].get("in_order"), "-")
            print("| %s | %s | %s | %.2f | %.1f | %d | %s |" % (
                name, spread(rates, "%.0f"), spread(cpus, "%.2f"), statistics.median(process), rss,
                sum(r.get("lost", 0) for r in results), order))
        print("\n## Ratios of CPU µs/event (targets of issues 11 and 29)\n")
        print("The ratio of the medians, and the median of the per-round ratios (each client against the one it is")
        print("measured against in the same round, minutes apart at most: steadier when the machine changes speed).\n")
        print("| ratio | measured | per-round median (min-max) | target | |")
        print("|---|---|---|---|---|")
        def cpu(result):
            return result["cpu_seconds"] * 1e6 / max(1, result["received"])
        for title, numerator, denominator, target in RATIOS:
            if numerator in medians and denominator in medians and medians[denominator] > 0:
                ratio = medians[numerator] / medians[denominator]
                paired = [cpu(n) / cpu(d) for n, d in zip(samples[numerator], samples[denominator]) if cpu(d) > 0]
                print("| %s | %.2f× | %s | ≤ %.1f× | %s |" % (
                    title, ratio, spread(paired, "%.2f×") if paired else "-", target,
                    "meets" if ratio <= target else "misses"))

    # MARK: RSS growth

    def rss_growth(self):
        count, rate = self.options.rss_count, self.options.rss_rate
        every = max(1, count // 10)
        print("\n## RSS growth: %d events at %d events/s, library default buffers\n" % (count, rate))
        print("RSS is sampled every %d events; growth is the last sample minus the first (taken after %d events, "
              "so start-up allocation is excluded). Target: at most 1 MB.\n" % (every, every))
        print("| client | RSS after %d events MB | RSS at the end MB | growth KB | received | lost | |" % every)
        print("|---|---|---|---|---|---|---|")
        for name, client in [("appsync", ["--client", "appsync"]), ("notifier-appsync", ["--client", "notifier", "--protocol", "appsync"])]:
            firehose = Firehose(self.python, count, rate)
            try:
                command = [self.bench, "--count", str(count), "--default-buffers", "--rss-every", str(every),
                           "--endpoint", firehose.urls()["http"]] + client
                result, _, _, code = run_client(command, timeout=count / rate + self.options.client_timeout, name="rss-" + name)
            finally:
                firehose.stop()
            # Drops the stream reported are a finding of this run (default buffers), not a failure of the suite.
            if not result or result["received"] + result["lost"] < count or code != 0:
                self.failures.append("rss %s: received %s of %d events (exit %s)" % (name, result and result["received"], count, code))
            if result and len(result["rss_samples_kb"]) >= 2:
                first, last = result["rss_samples_kb"][0], result["rss_samples_kb"][-1]
                growth = last - first
                print("| %s | %.1f | %.1f | %d | %d | %d | %s |" % (
                    name, first / 1024, last / 1024, growth, result["received"], result["lost"], "meets" if growth <= 1024 else "misses"))
                log("rss %s samples (KB): %s" % (name, result["rss_samples_kb"]))

    # MARK: the store on the main actor

    def store(self):
        """Issue 28: at 1,000 events/s, a consumer reading the RealtimeStore on the main actor against an off-main
        consumer of the same notifier stream: CPU per event (the whole process's, in the client's measurement window)
        and the store's hops to the main actor per second."""
        seconds, rate = self.options.store_seconds, 1000
        count = seconds * rate
        print("\n## The store on the main actor: %d events/s for %d s, %d round(s), medians (min-max)\n" % (rate, seconds, self.options.rounds))
        print("| consumer | CPU µs/event | main-actor hops/s | events/s | lost |")
        print("|---|---|---|---|---|")
        clients = [("notifier-appsync", ["--client", "notifier"]), ("store-appsync", ["--client", "store"])]
        samples = {name: [] for name, _ in clients}
        for _ in range(self.options.rounds):
            for name, client in clients:
                firehose = Firehose(self.python, count, rate)
                try:
                    command = [self.bench, "--count", str(count), "--protocol", "appsync", "--endpoint", firehose.urls()["http"]] + client
                    result, _, _, code = run_client(command, timeout=seconds + self.options.client_timeout, name="store-" + name)
                finally:
                    firehose.stop()
                if not result or result["received"] != count or code != 0:
                    self.failures.append("store %s: received %s of %d events (exit %s)" % (name, result and result["received"], count, code))
                if result:
                    samples[name].append(result)
        cpu = {}
        for name, results in samples.items():
            if not results:
                continue
            cpus = [r["cpu_seconds"] * 1e6 / max(1, r["received"]) for r in results]
            hops = [r["main_actor_hops"] / r["seconds"] for r in results if r.get("main_actor_hops") is not None]
            rates = [r["received"] / r["seconds"] for r in results]
            cpu[name] = statistics.median(cpus)
            print("| %s | %s | %s | %s | %d |" % (
                name, spread(cpus, "%.2f"), spread(hops, "%.0f") if hops else "-", spread(rates, "%.0f"), sum(r.get("lost", 0) for r in results)))
        if cpu.get("notifier-appsync"):
            ratio = cpu.get("store-appsync", 0) / cpu["notifier-appsync"]
            print("\nStore on the main actor / off-main consumer: %.2f× (target ≤ 1.5×: %s)" % (ratio, "meets" if ratio <= 1.5 else "misses"))

    # MARK: latency through `serve`

    def latency(self):
        seconds, rate = self.options.latency_seconds, self.options.latency_rate
        count = seconds * rate
        warmup = min(rate // 5, count // 10)
        server = subprocess.Popen(
            [self.cli, "serve", "--port", "0", "--api-key", "bench-key", "--jwt-secret", SECRET, "--admin"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
        try:
            endpoints = json.loads(server.stdout.readline())
            token = subprocess.run([self.cli, "token", "--secret", SECRET, "--user", "u-1", "--ttl", "3600"],
                                   check=True, capture_output=True, text=True, cwd=ROOT).stdout.strip()
            admin = urllib.parse.urlsplit(endpoints["admin"])
            print("\n## Latency: publish (POST /vortex/events) -> consumer, %d events/s for %d s through `vortex-realtime serve` (%s build)\n"
                  % (rate, seconds, self.options.configuration))
            print("The first %d events are warm-up and not counted. Microseconds.\n" % warmup)
            print("| consumer | samples | p50 | p90 | p99 | p99.9 | max | p99 < 1 ms |")
            print("|---|---|---|---|---|---|---|---|")
            consumers = [
                ("appsync", ["--client", "appsync", "--channel", "vortex-app/user/u-1/device/*", "--endpoint", endpoints["http"]]),
                ("graphql", ["--client", "graphql", "--token", token, "--endpoint", endpoints["graphql"]]),
                ("notifier-appsync", ["--client", "notifier", "--protocol", "appsync", "--endpoint", endpoints["http"]]),
                ("notifier-graphql", ["--client", "notifier", "--protocol", "graphql", "--token", token, "--endpoint", endpoints["graphql"]]),
            ]
            for name, client in consumers:
                command = [self.bench, "--count", str(count), "--latency", "--warmup", str(warmup), "--default-buffers",
                           "--user", "u-1", "--org", "o-1"] + client
                result, _, _, code = run_client(
                    command, timeout=seconds + self.options.client_timeout,
                    publisher=lambda ready: publish(admin.hostname, admin.port, count, rate, ready), name="latency-" + name)
                if not result or result["received"] != count or code != 0:
                    self.failures.append("latency %s: received %s of %d events (exit %s)" % (name, result and result["received"], count, code))
                summary = result and result.get("latency")
                if summary:
                    print("| %s | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %s |" % (
                        name, summary["samples"], summary["p50"], summary["p90"], summary["p99"], summary["p999"], summary["max"],
                        "yes" if summary["p99"] < 1000 else "no"))
        finally:
            server.terminate()
            server.wait()


def publish(host, port, count, rate, ready):
    """POSTs device-presence domain events on one keep-alive connection: priming events every 50 ms until the
    client has received one (`ready`: its subscription is live on the server, which graphql-transport-ws does not
    acknowledge), then `count` events at `rate`/s, each stamped with its send time in thingName, on an absolute
    schedule (a late request does not shift the ones after it).

    The request is written to the socket by hand, stamped just before it is sent, and the garbage collector is off
    while it runs: `http.client` took 180 µs (p50) between building the body and the send on this machine, and a
    collection pauses the thread, both of which would count as publish -> consumer latency without being either."""
    connection = socket.create_connection((host, port))
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    reader = connection.makefile("rb")
    head = ("POST /vortex/events HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\nContent-Length: %%d\r\n\r\n"
            % (host, port)).encode()
    body = (b'{"kind":"devicePresence","orgId":"o-1","deviceGroupId":"g-1","payload":{"derivant":"VX-100",'
            b'"mac":"00:1A:2B:3C:4D:5E","online":true,"thingName":"%s"}}')

    def post(thing_name):
        content = body % thing_name.encode()
        connection.sendall(head % len(content) + content)
        status = reader.readline()
        length = 0
        while True:
            line = reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        reader.read(length)
        if not status.split(b" ")[1:2] or not status.split(b" ")[1].startswith(b"2"):
            log("publish failed: %s" % status.decode(errors="replace").strip())

    deadline = time.monotonic() + 30
    while not ready.is_set() and time.monotonic() < deadline:
        post("prime")
        ready.wait(0.05)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        started = time.monotonic()
        for index in range(count):
            due = started + index / rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            post("lat-%d" % time.time_ns())
    finally:
        if gc_was_enabled:
            gc.enable()
        reader.close()
        connection.close()


def spread(values, fmt):
    if len(values) == 1:
        return fmt % values[0]
    return (fmt + " (" + fmt + "–" + fmt + ")") % (statistics.median(values), min(values), max(values))


def main():
    parser = argparse.ArgumentParser(description="The realtime benchmark suite (see docs/performance.md).")
    parser.add_argument("--smoke", action="store_true", help="a short run for CI: few events, one round, short RSS and latency runs")
    parser.add_argument("--configuration", default="release", choices=["release", "debug"], help="which .build/ binaries to run")
    parser.add_argument("--python", default=os.environ.get("VORTEX_PYTHON", os.path.join(ROOT, ".venv", "bin", "python")))
    parser.add_argument("--count", type=int, help="events per throughput client (default 200000; smoke 5000)")
    parser.add_argument("--rounds", type=int, help="rounds of every throughput client (default 3; smoke 1)")
    parser.add_argument("--only", nargs="*", help="throughput clients to run (default: all)")
    parser.add_argument("--skip-python", action="store_true", help="leave out the Python peers")
    parser.add_argument("--rss-count", type=int, help="events of the RSS-growth run (default 1000000; smoke 20000)")
    parser.add_argument("--rss-rate", type=int, help="events/s of the RSS-growth run (default 10000)")
    parser.add_argument("--latency-seconds", type=int, help="seconds per latency consumer (default 10; smoke 2)")
    parser.add_argument("--latency-rate", type=int, default=1000, help="events/s of the latency run (default 1000)")
    parser.add_argument("--store-seconds", type=int, help="seconds per consumer of the store run, at 1,000 events/s (default 20; smoke 2)")
    parser.add_argument("--skip", nargs="*", default=[], choices=["throughput", "rss", "latency", "store"], help="parts to leave out")
    parser.add_argument("--client-timeout", type=float, default=120, help="seconds a client may run beyond the expected")
    options = parser.parse_args()
    defaults = dict(count=(5000, 200000), rounds=(1, 3), rss_count=(20000, 1000000), rss_rate=(10000, 10000), latency_seconds=(2, 10), store_seconds=(2, 20))
    for key, (smoke, full) in defaults.items():
        if getattr(options, key) is None:
            setattr(options, key, smoke if options.smoke else full)

    suite = Suite(options)
    for binary in (suite.bench, suite.cli):
        if not os.access(binary, os.X_OK):
            sys.exit("missing %s: build it first (scripts/bench.sh does)" % binary)
    print("# Realtime benchmark (%s build, %s, %d cores)" % (options.configuration, time.strftime("%Y-%m-%d %H:%M %Z"), os.cpu_count()))
    if options.configuration == "debug":
        print("\nDebug build: this run shows that the suite works end to end; its numbers say nothing about performance.")
    if "throughput" not in options.skip:
        suite.report_throughput(suite.throughput())
    if "rss" not in options.skip:
        suite.rss_growth()
    if "latency" not in options.skip:
        suite.latency()
    if "store" not in options.skip:
        suite.store()
    sys.stdout.flush()
    if suite.failures:
        log("\nincomplete runs (client logs in %s):\n  " % LOGS + "\n  ".join(suite.failures))
        sys.exit(1)
    log("\nevery client received every event")


if __name__ == "__main__":
    main()
