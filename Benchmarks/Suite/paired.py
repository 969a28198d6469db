#!/usr/bin/env python3
"""Two builds of one client compared in pairs: is a change to the hot path faster, and by how much?

Single rounds of Benchmarks/Suite/bench.py vary up to 2x on a shared 2-core machine, and bare WSClient, run seconds
before, does not cancel that out: 7-9 rounds cannot resolve a 10 % change. Here every round runs the client of both
builds (in alternating order, so a drift favours neither), each against a fresh firehose, and the figure is the median
of the per-round ratios after / before, with its quartiles and the rounds the second build won.

    swift build -c release --product RealtimeBench && cp .build/release/RealtimeBench /tmp/before
    # ...change the code...
    swift build -c release --product RealtimeBench
    Benchmarks/Suite/paired.py /tmp/before .build/release/RealtimeBench --protocol appsync --rounds 40

CPU µs/event is what RealtimeBench reports (the process's user+sys time from just before it connects to its last
event, divided by the events). Standard library only. Exit status 1 when a run lost events.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

SUITE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(SUITE))


def run(binary, client, protocol, count):
    """One client run against a fresh firehose: its CPU µs per event."""
    firehose = subprocess.Popen(
        [sys.executable, os.path.join(SUITE, "firehose.py"), "--count", str(count)], stdout=subprocess.PIPE, text=True)
    try:
        port = json.loads(firehose.stdout.readline())["port"]
        endpoint = f"ws://127.0.0.1:{port}/graphql" if protocol == "graphql" else f"http://127.0.0.1:{port}/event"
        done = subprocess.run(
            [binary, "--client", client, "--protocol", protocol, "--endpoint", endpoint, "--count", str(count)],
            capture_output=True, text=True, cwd=ROOT)
    finally:
        firehose.kill()
        firehose.wait()
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["received"] != count:
        sys.exit(f"{binary}: received {result['received']} of {count} events")
    return result["cpu_seconds"] / count * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", help="RealtimeBench of the build before")
    parser.add_argument("after", help="RealtimeBench of the build after")
    parser.add_argument("--protocol", choices=["appsync", "graphql"], default="appsync")
    parser.add_argument("--client", choices=["notifier", "bare"], default="notifier")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--count", type=int, default=100_000, help="events per run (default 100,000)")
    args = parser.parse_args()
    ratios = []
    for index in range(args.rounds):
        if index % 2 == 0:
            before = run(args.before, args.client, args.protocol, args.count)
            after = run(args.after, args.client, args.protocol, args.count)
        else:
            after = run(args.after, args.client, args.protocol, args.count)
            before = run(args.before, args.client, args.protocol, args.count)
        ratios.append(after / before)
        print(f"round {index + 1}: before {before:.2f} µs/event, after {after:.2f}, after/before {after / before:.3f}",
              flush=True)
    ordered = sorted(ratios)
    quartiles = ordered[len(ordered) // 4], ordered[(3 * len(ordered)) // 4]
    wins = sum(ratio < 1 for ratio in ratios)
    print(f"{args.client} on {args.protocol}, {args.rounds} rounds of {args.count} events: after/before median "
          f"{statistics.median(ratios):.3f} (quartiles {quartiles[0]:.3f}-{quartiles[1]:.3f}), after faster in "
          f"{wins} of {args.rounds}")


if __name__ == "__main__":
    main()
