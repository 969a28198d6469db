#!/usr/bin/env python3
"""stelvio's AppSync Events client driven against the local backend (LocalBackendTests' StelvioPeerTests).

stelvio (https://pypi.org/project/stelvio/) ships an AppSync Events client in ``stelvio.bridge.local.listener``:
the "bridge" of its local development mode connects to an Event API, subscribes to ``/stelvio/<app>/<env>/in``
and answers each invocation on ``/stelvio/<app>/<env>/out`` (splitting answers over 200 KB into chunks). This
script runs exactly those functions — ``connect_to_appsync``, ``subscribe_to_channel`` and ``publish`` — the way
``listener.main`` does, without the AWS discovery step (the endpoint and API key come from the command line).

One change, and only one: stelvio always dials ``wss://``; the local backend is plain ``ws://`` on loopback, so
``websockets.connect`` is wrapped to swap the scheme. Every frame stelvio builds goes out unchanged: the
``header-`` subprotocol (``{"host": …, "x-api-key": …}``), ``connection_init``, and ``subscribe``/``publish``
whose ``authorization`` carries no ``host``, on channels with a leading ``/`` and the namespace ``stelvio``.

Protocol with the test, one JSON object per stdout line:
  {"step": "subscribed"}                         once the subscription is live
  {"step": "answered", "invoke_id": …}           after publishing the answer to an invocation
  {"step": "publish_success"|"publish_error"|"subscribe_error"|"error", "message": {…}}
  {"step": "done"}                               after answering the invocation whose invoke_id is "quit"
An invocation ``{"invoke_id": …, "size": N}`` is answered with a result holding an N-character string (chunked by
stelvio when large). The script exits 0 after "done", 1 on any error message or failure.

``--check`` only imports stelvio and prints its versions as JSON (exit 0 when importable).
"""

import argparse
import asyncio
import json
import os
import sys


def emit(obj):
    print(json.dumps(obj), flush=True)


def check():
    from importlib.metadata import version

    import stelvio.bridge.local.listener  # noqa: F401  (the import is the check)

    emit({"stelvio": version("stelvio"), "websockets": version("websockets")})


async def run(host, api_key, app, env):
    import websockets
    from stelvio.bridge._chunking import channel_segment
    from stelvio.bridge.local import listener
    from stelvio.bridge.local.dtos import BridgeInvocationResult

    real_connect = websockets.connect

    # websockets' opening-handshake deadline (10 s) stretched like the tests' own deadlines: under the thread
    # sanitizer (VORTEX_TEST_TIME_SCALE=10) the local backend answered the upgrade too late once (2026-11-28).
    open_timeout = 10.0 * float(os.environ.get("VORTEX_TEST_TIME_SCALE", "1"))

    def plain_connect(uri, *args, **kwargs):
        # The only deviation from stelvio: the local backend has no TLS.
        kwargs.setdefault("open_timeout", open_timeout)
        return real_connect(uri.replace("wss://", "ws://", 1), *args, **kwargs)

    listener.websockets.connect = plain_connect

    # Counts stelvio's publishes (one per chunk), so the script knows how many publish_success to wait for.
    published = 0
    real_publish_to_channel = listener.publish_to_channel

    async def counting_publish_to_channel(*args, **kwargs):
        nonlocal published
        published += 1
        await real_publish_to_channel(*args, **kwargs)

    listener.publish_to_channel = counting_publish_to_channel

    config = {"http_endpoint": host, "realtime_endpoint": host, "api_key": api_key}
    ws = await listener.connect_to_appsync(config)
    request_channel = f"/stelvio/{channel_segment(app)}/{channel_segment(env)}/in"
    await listener.subscribe_to_channel(ws, request_channel, api_key)
    emit({"step": "subscribed", "channel": request_channel})

    quitting = False
    succeeded = 0
    async for raw in ws:
        message = json.loads(raw)
        kind = message.get("type")
        if kind == "ka":
            continue
        if kind == "data":
            event = json.loads(message["event"])
            size = int(event.get("size", 0))
            result = BridgeInvocationResult(
                success_result={"echo": event, "blob": "x" * size},
                error_result=None,
                request_path="/",
                request_method="POST",
                process_time_local=0.0,
                status_code=200,
            )
            # stelvio's own answer path: builds {"requestId", "success", "result"} and chunks it when large.
            await listener.publish(result, ws, api_key, message, app, env)
            emit({"step": "answered", "invoke_id": event.get("invoke_id")})
            quitting = quitting or event.get("invoke_id") == "quit"
        elif kind == "publish_success":
            emit({"step": "publish_success", "message": message})
            succeeded += 1
            if quitting and succeeded >= published:
                break
        else:
            emit({"step": kind or "unknown", "message": message})
            if kind in ("publish_error", "subscribe_error", "error", "connection_error"):
                await ws.close()
                return 1
    await ws.close()
    emit({"step": "done"})
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--host", help="HOST:PORT of the local backend (its HTTP host)")
    parser.add_argument("--api-key")
    parser.add_argument("--app", default="app")
    parser.add_argument("--env", default="dev")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds, times VORTEX_TEST_TIME_SCALE")
    args = parser.parse_args()
    args.timeout *= float(os.environ.get("VORTEX_TEST_TIME_SCALE", "1"))
    if args.check:
        check()
        return 0
    try:
        return asyncio.run(asyncio.wait_for(run(args.host, args.api_key, args.app, args.env), args.timeout))
    except Exception as error:  # reported to the test, which prints it
        emit({"step": "failure", "error": f"{type(error).__name__}: {error}"})
        return 1


if __name__ == "__main__":
    sys.exit(main())
