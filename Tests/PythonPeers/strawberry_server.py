#!/usr/bin/env python3
"""A strawberry-graphql server speaking graphql-transport-ws, the third-party peer of GraphQLTransport's
conformance tests (Tests/GraphQLTransportTests/StrawberryConformanceTests.swift).

Served by uvicorn on 127.0.0.1, path /graphql, subprotocol graphql-transport-ws only.

    python strawberry_server.py --port 0 --token T [--init-timeout-ms N] [--parent-pid PID]
    python strawberry_server.py --check     # prints the peer's versions as JSON, exit 0 when importable

With --port 0 a free port is chosen. Either way the first stdout line is `{"port": N}` (flushed) once the
socket is bound; connections are accepted once uvicorn listens. Exits on SIGTERM/SIGINT (uvicorn's graceful
shutdown, at most 1 s) and on its own when its parent process (--parent-pid, by default the parent at start)
goes away, so a crashed test run leaves nothing behind.

Schema (snake_case arguments are camelCased by strawberry):

    type Query {
      hello: String!
      stats: String!   # JSON {"open": [conn...], "tickers": n, "log": [entry...]}, leaving out every connection
                       # that ever asked for stats (the tests' observers)
    }
    type Subscription {
      count(to: Int!, delayMs: Int! = 10): Int!      # 1...to, then complete
      ticker(ms: Int! = 50): Int!                    # 1, 2, 3, ... for ever
      failing(after: Int! = 0): Int!                 # 1...after, then raises inside the resolver
      greet(name: String!): String!                  # one "hello, <name>", then complete
    }

`connection_init` must carry `{"Authorization": <token>}`; anything else is rejected with
ConnectionRejectionError, which strawberry turns into close 4403.

The `log` is written by an ASGI middleware that sees every WebSocket frame: for each connection (numbered from 1)
the client's frames (`type`, `id`, and `authorization` for connection_init; `<malformed>` when not JSON), the
server's frames (`direction: "out"`), the server's close (`<close>` with `code`) and the client's disconnect
(`<disconnect>` with `code`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import sys
import time
from datetime import timedelta
from typing import Any, AsyncGenerator

try:
    import strawberry
    import uvicorn
    from strawberry.asgi import GraphQL  # needs starlette
    from strawberry.exceptions import ConnectionRejectionError
    from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL
    from strawberry.types import Info
except ImportError as missing:
    print(f"missing Python package: {missing}", file=sys.stderr, flush=True)
    sys.exit(2)

def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("strawberry-graphql", "uvicorn", "websockets", "starlette", "graphql-core")}


# ---------------------------------------------------------------------------------------------------------------------
# What the tests observe


class Recorder:
    """ASGI middleware logging every WebSocket frame, per connection."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.next_connection = 0
        self.open: set[int] = set()
        self.log: list[dict[str, Any]] = []
        # Connections that asked for `stats`: the tests' observers, left out of what `stats` reports.
        self.observers: set[int] = set()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        self.next_connection += 1
        connection = self.next_connection
        scope["vortex.connection"] = connection
        self.open.add(connection)

        async def logged_receive() -> dict[str, Any]:
            message = await receive()
            if message["type"] == "websocket.receive":
                self.log.append({"conn": connection, "direction": "in", **describe(message)})
            elif message["type"] == "websocket.disconnect":
                self.log.append({"conn": connection, "direction": "in", "type": "<disconnect>", "code": message.get("code")})
            return message

        async def logged_send(message: dict[str, Any]) -> None:
            if message["type"] == "websocket.send":
                self.log.append({"conn": connection, "direction": "out", **describe(message)})
            elif message["type"] == "websocket.close":
                self.log.append({"conn": connection, "direction": "out", "type": "<close>", "code": message.get("code", 1000)})
            await send(message)

        try:
            await self.app(scope, logged_receive, logged_send)
        finally:
            self.open.discard(connection)


def describe(message: dict[str, Any]) -> dict[str, Any]:
    text = message.get("text")
    if text is None:
        return {"type": "<binary>"}
    try:
        frame = json.loads(text)
    except ValueError:
        return {"type": "<malformed>"}
    if not isinstance(frame, dict):
        return {"type": "<malformed>"}
    entry: dict[str, Any] = {"type": frame.get("type"), "id": frame.get("id")}
    if frame.get("type") == "connection_init" and isinstance(frame.get("payload"), dict):
        entry["authorization"] = frame["payload"].get("Authorization")
    return entry


ACTIVE_TICKERS = 0


# ---------------------------------------------------------------------------------------------------------------------
# The app


def make_app(token: str, init_timeout: timedelta) -> Recorder:
    recorder: Recorder

    @strawberry.type
    class Query:
        @strawberry.field
        def hello(self) -> str:
            return "world"

        @strawberry.field
        def stats(self, info: Info) -> str:
            request = info.context.get("request")
            if request is not None:
                recorder.observers.add(request.scope.get("vortex.connection"))
            return json.dumps(
                {
                    "open": sorted(c for c in recorder.open if c not in recorder.observers),
                    "tickers": ACTIVE_TICKERS,
                    "log": [entry for entry in recorder.log if entry["conn"] not in recorder.observers],
                }
            )

    @strawberry.type
    class Subscription:
        @strawberry.subscription
        async def count(self, to: int, delay_ms: int = 10) -> AsyncGenerator[int, None]:
            for value in range(1, to + 1):
                yield value
                await asyncio.sleep(delay_ms / 1000)

        @strawberry.subscription
        async def ticker(self, ms: int = 50) -> AsyncGenerator[int, None]:
            global ACTIVE_TICKERS
            ACTIVE_TICKERS += 1
            try:
                value = 0
                while True:
                    value += 1
                    yield value
                    await asyncio.sleep(ms / 1000)
            finally:
                ACTIVE_TICKERS -= 1

        @strawberry.subscription
        async def failing(self, after: int = 0) -> AsyncGenerator[int, None]:
            for value in range(1, after + 1):
                yield value
            raise ValueError(f"boom after {after}")

        @strawberry.subscription
        async def greet(self, name: str) -> AsyncGenerator[str, None]:
            yield f"hello, {name}"

    class App(GraphQL):
        async def on_ws_connect(self, context: dict[str, Any]) -> Any:
            params = context.get("connection_params") or {}
            if params.get("Authorization") != token:
                raise ConnectionRejectionError({"reason": "bad token"})
            return await super().on_ws_connect(context)

    schema = strawberry.Schema(query=Query, subscription=Subscription)
    graphql = App(
        schema,
        graphql_ide=None,
        subscription_protocols=[GRAPHQL_TRANSPORT_WS_PROTOCOL],
        connection_init_wait_timeout=init_timeout,
        # strawberry refuses cross-origin handshakes with HTTP 403. WSClient (the package's NIO connector) sends
        # `Origin: ws://127.0.0.1` without the port, which strawberry does not count as the same origin as
        # `Host: 127.0.0.1:PORT`; allow exactly that origin.
        allowed_origins=["ws://127.0.0.1"],
    )

    async def routed(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket") and scope.get("path") != "/graphql":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await send({"type": "http.response.start", "status": 404, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"not found"})
            return
        await graphql(scope, receive, send)

    recorder = Recorder(routed)
    return recorder


# ---------------------------------------------------------------------------------------------------------------------
# Serving


def parent_alive(parent: int, initial_ppid: int) -> bool:
    """Whether the process that started us still runs: we were not re-parented and `parent` still exists.

    `parent` may differ from our parent when the interpreter was started through a wrapper that does not exec."""
    if os.getppid() != initial_ppid:
        return False
    try:
        os.kill(parent, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


async def watch_parent(server: Any, parent: int, initial_ppid: int) -> None:
    """Stops the server when the process that started it is gone."""
    while not server.should_exit:
        if not parent_alive(parent, initial_ppid):
            print(f"parent process {parent} is gone; stopping", file=sys.stderr, flush=True)
            server.should_exit = True
            return
        await asyncio.sleep(0.5)


async def serve(sock: socket.socket, app: Any, parent: int, initial_ppid: int) -> None:
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=sock.getsockname()[1],
        log_level="warning",
        access_log=False,
        lifespan="off",
        ws="websockets-sansio",
        ws_ping_interval=None,
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    watcher = asyncio.create_task(watch_parent(server, parent, initial_ppid))
    try:
        await server.serve(sockets=[sock])
    finally:
        watcher.cancel()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="print the versions as JSON and exit")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1; 0 picks a free one")
    parser.add_argument("--token", default="", help="the Authorization value connection_init must carry")
    parser.add_argument("--init-timeout-ms", type=int, default=60_000, help="strawberry's connection_init_wait_timeout")
    parser.add_argument(
        "--parent-pid", type=int, default=None, help="exit once this process is gone (default: the parent at start)"
    )
    arguments = parser.parse_args()
    initial_ppid = os.getppid()
    parent = arguments.parent_pid if arguments.parent_pid is not None else initial_ppid
    if not parent_alive(parent, initial_ppid):
        print(f"parent process {parent} is already gone", file=sys.stderr, flush=True)
        return 4

    if arguments.check:
        print(json.dumps(versions()), flush=True)
        return 0

    # A child of swift-corelibs-foundation's Process inherits the test runner's signal mask, in which SIGTERM and
    # most other signals are blocked: unblock them, or SIGTERM would stay pending for ever.
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    app = make_app(arguments.token, timedelta(milliseconds=arguments.init_timeout_ms))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # A fixed port may still be held for a moment by a server that was just killed: retry briefly.
    deadline = time.monotonic() + 5
    while True:
        try:
            sock.bind(("127.0.0.1", arguments.port))
            break
        except OSError as error:
            if arguments.port == 0 or time.monotonic() > deadline:
                print(f"cannot bind 127.0.0.1:{arguments.port}: {error}", file=sys.stderr, flush=True)
                return 3
            time.sleep(0.05)
    # Not listening yet: uvicorn listens once it serves, so a TCP connect succeeding means it is ready.
    print(json.dumps({"port": sock.getsockname()[1]}), flush=True)
    # uvicorn installs its own SIGTERM/SIGINT handlers while serving; before that, the default action ends us.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    asyncio.run(serve(sock, app, parent, initial_ppid))
    return 0


if __name__ == "__main__":
    sys.exit(main())
