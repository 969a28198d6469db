#!/usr/bin/env python3
"""Python peer: `gql` (graphql-transport-ws over `websockets`) subscribed to `subscribeDeviceState`, counting the
results it yields (gql parses each frame into a dict). Prints one JSON result line."""
import argparse
import asyncio

from gql import Client, gql
from gql.transport.websockets import WebsocketsTransport

from window import Window

QUERY = gql(
    "subscription DeviceState($orgId: String!) { subscribeDeviceState(orgId: $orgId) { mac derivant online "
    "recording fwUpdateState thingName deviceGroupID orgId siteId eventType timestamp } }")


async def run(url, count):
    window = Window("python-gql")
    transport = WebsocketsTransport(
        url=url, subprotocols=[WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL], init_payload={"Authorization": "bench"},
        connect_args={"compression": None, "max_size": 1 << 20})
    received = 0
    async with Client(transport=transport, fetch_schema_from_transport=False) as session:
        async for result in session.subscribe(QUERY, variable_values={"orgId": "o-1"}):
            if result["subscribeDeviceState"]:
                received += 1
                if received == count:
                    break
    window.report(received)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True, help="ws://HOST:PORT/graphql")
    parser.add_argument("--count", type=int, required=True)
    options = parser.parse_args()
    asyncio.run(run(options.url, options.count))


if __name__ == "__main__":
    main()
