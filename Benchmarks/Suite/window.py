"""The measurement window every Python client reports, in the same JSON shape as the Swift client."""
import json
import resource
import time


class Window:
    """CPU (user+sys of this process) and wall time from before connecting to the last counted event."""

    def __init__(self, client):
        self.client = client
        self.started = time.monotonic()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        self.cpu_started = usage.ru_utime + usage.ru_stime

    def report(self, received, **extra):
        seconds = time.monotonic() - self.started
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu = usage.ru_utime + usage.ru_stime - self.cpu_started
        result = {"client": self.client, "received": received, "seconds": seconds, "cpu_seconds": cpu,
                  "max_rss_kb": usage.ru_maxrss, "rss_kb": rss_kb()}
        result.update(extra)
        print(json.dumps(result), flush=True)


def rss_kb():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() // 1024
