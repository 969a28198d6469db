#!/usr/bin/env python3
"""A fleet's reconnect attempts after losing the same backend (issue 19 item 3), for docs/architecture.md.

N clients lose the backend at t = 0; it is down until `--down` seconds; an attempt before that fails at once, the
first one at or after it succeeds. Each client waits the policy's delay before every attempt: the documents' fixed
10 s, or the default full jitter (random in 0..min(cap, base * 2^(n-1)), base 1 s, cap 10 s). Prints, per policy, the
busiest 100 ms (attempts hitting the backend at once), and when the first client, half the fleet and all of it are
back after the backend returned. Seeded: the same figures every run. Standard library only.
"""
import argparse
import random


def fixed(delay):
    return lambda attempt, rng: delay


def full_jitter(base, cap):
    return lambda attempt, rng: rng.random() * min(cap, base * 2 ** (attempt - 1))


def simulate(policy, clients, down, seed):
    rng = random.Random(seed)
    bins = {}
    back = []
    for _ in range(clients):
        t, attempt = 0.0, 0
        while True:
            attempt += 1
            t += policy(attempt, rng)
            bins[int(t * 10)] = bins.get(int(t * 10), 0) + 1
            if t >= down:
                back.append(t - down)
                break
    back.sort()
    return max(bins.values()), back[0], back[len(back) // 2], back[-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=10_000)
    parser.add_argument("--down", type=float, default=31.0, help="seconds the backend is down")
    parser.add_argument("--seed", type=int, default=19)
    options = parser.parse_args()
    print("| policy | busiest 100 ms (attempts) | first back | half back | all back |")
    print("|---|---|---|---|---|")
    for name, policy in [("fixed 10 s", fixed(10.0)), ("default: full jitter 1 s → 10 s", full_jitter(1.0, 10.0))]:
        peak, first, half, last = simulate(policy, options.clients, options.down, options.seed)
        print("| %s | %d | %.2f s | %.2f s | %.2f s |" % (name, peak, first, half, last))
    print("\n(%d clients, backend down %.0f s; times after the backend is back)" % (options.clients, options.down))


if __name__ == "__main__":
    main()
