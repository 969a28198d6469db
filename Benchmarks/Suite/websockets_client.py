#!/usr/bin/env python3
"""Python peer: the `websockets` library on the AppSync Events stream, `json.loads` twice per event (the frame,
then the `event` string), as a hand-written Python client would. Prints one JSON result line."""
import argparse
import asyncio
import json

from websockets.asyncio.client import connect

from window import Window


async def run(url, count):
    window = Window("python-websockets")
    received = 0
    async with connect(url, subprotocols=["aws-appsync-event-ws"], compression=None, max_size=1 << 20) as socket:
        await socket.send('{"type":"connection_init"}')
        json.loads(await socket.recv())  # connection_ack
        await socket.send('{"type":"subscribe","id":"bench","channel":"default/bench","authorization":{}}')
        json.loads(await socket.recv())  # subscribe_success
        async for text in socket:
            message = json.loads(text)
            if message["type"] == "data":
                event = json.loads(message["event"])
                if event["eventType"]:
                    received += 1
                    if received == count:
                        break
    window.report(received)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True, help="ws://HOST:PORT/event/realtime")
    parser.add_argument("--count", type=int, required=True)
    options = parser.parse_args()
    asyncio.run(run(options.url, options.count))


if __name__ == "__main__":
    main()
