#!/usr/bin/env python3
"""Firehose: a WebSocket server that is faster than any client it serves.

It speaks just enough of both protocols for a subscription to go live, then writes pre-built frames in large
batches (one `sendall` per batch of ~1,000 frames), so the client, not the server, is the bottleneck:

- AppSync Events (subprotocol `aws-appsync-event-ws`): `connection_init` -> `connection_ack` with
  `connectionTimeoutMs`; `subscribe` -> `subscribe_success`, then `count` frames
  `{"type":"data","id":...,"event":"<JSON string>"}`; `unsubscribe` -> `unsubscribe_success`.
- graphql-transport-ws: `connection_init` -> `connection_ack`; `subscribe` -> `count` frames
  `{"id":...,"type":"next","payload":{"data":{"subscribeDeviceState":{...}}}}`, then `complete`; `ping` -> `pong`.

Each event is a ~188-byte device presence event. Events differ only in `thingName` (`dev0000` ... cycling
through a block), which lets a client check order. `--rate` paces the stream (events/s) for the RSS-growth run.
Standard library only. Prints `{"port": P}` on its first stdout line, serves until killed.
"""
import argparse
import base64
import hashlib
import json
import socket
import struct
import sys
import threading
import time

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
BLOCK = 1000  # frames per pre-built block (one sendall)


def device_event(index):
    # Fixed width, so every frame of a stream has the same size (~188 bytes of event JSON).
    return json.dumps({
        "eventType": "device/presenceChanged",
        "timestamp": "2026-11-22T05:00:00.000Z",
        "orgId": "o-1",
        "siteId": "g-1",
        "thingName": "dev%04d" % index,
        "derivant": "VX-100",
        "mac": "00:1A:2B:3C:4D:5E",
        "online": True,
    }, separators=(",", ":"))


def legacy_device_state(index):
    # What `subscribeDeviceState` returns for the notifier's selection (every field selected, nulls included).
    return {
        "mac": "00:1A:2B:3C:4D:5E", "derivant": "VX-100", "online": True, "recording": None,
        "fwUpdateState": None, "thingName": "dev%04d" % index, "deviceGroupID": "g-1", "orgId": "o-1",
        "siteId": "g-1", "eventType": "device/presenceChanged", "timestamp": "2026-11-22T05:00:00.000Z",
    }


def frame(payload, opcode=0x1):
    """An unmasked server frame."""
    length = len(payload)
    if length < 126:
        header = struct.pack("!BB", 0x80 | opcode, length)
    elif length < 65536:
        header = struct.pack("!BBH", 0x80 | opcode, 126, length)
    else:
        header = struct.pack("!BBQ", 0x80 | opcode, 127, length)
    return header + payload


def text_frame(obj):
    return frame(json.dumps(obj, separators=(",", ":")).encode())


def build_block(protocol, subscription_id, start, size):
    frames = []
    for i in range(start, start + size):
        index = i % BLOCK  # the n-th event of a stream carries thing-(n mod BLOCK)
        if protocol == "appsync":
            message = {"type": "data", "id": subscription_id, "event": device_event(index)}
        else:
            message = {"id": subscription_id, "type": "next", "payload": {"data": {"subscribeDeviceState": legacy_device_state(index)}}}
        frames.append(text_frame(message))
    return b"".join(frames)


class Connection:
    def __init__(self, sock, options):
        self.sock = sock
        self.options = options
        self.write_lock = threading.Lock()
        self.protocol = None
        self.closed = False

    def send(self, data):
        with self.write_lock:
            self.sock.sendall(data)

    def handshake(self):
        request = b""
        while b"\r\n\r\n" not in request:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("closed during handshake")
            request += chunk
        head, _, rest = request.partition(b"\r\n\r\n")
        headers = {}
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower().decode()] = value.strip().decode()
        offered = [p.strip() for p in headers.get("sec-websocket-protocol", "").split(",") if p.strip()]
        if "aws-appsync-event-ws" in offered:
            self.protocol, chosen = "appsync", "aws-appsync-event-ws"
        elif "graphql-transport-ws" in offered:
            self.protocol, chosen = "graphql", "graphql-transport-ws"
        else:
            self.sock.sendall(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
            raise ConnectionError("no known subprotocol offered: %r" % offered)
        accept = base64.b64encode(hashlib.sha1(headers["sec-websocket-key"].encode() + GUID).digest()).decode()
        self.sock.sendall((
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Accept: %s\r\nSec-WebSocket-Protocol: %s\r\n\r\n" % (accept, chosen)).encode())
        return rest

    def frames(self, buffered):
        """Yields (opcode, payload) of the client's (masked) frames; fragments are not expected from clients here."""
        buffer = bytearray(buffered)
        while True:
            while True:
                if len(buffer) >= 2:
                    length = buffer[1] & 0x7F
                    offset = 2
                    if length == 126 and len(buffer) >= 4:
                        length = struct.unpack_from("!H", buffer, 2)[0]
                        offset = 4
                    elif length == 127 and len(buffer) >= 10:
                        length = struct.unpack_from("!Q", buffer, 2)[0]
                        offset = 10
                    elif length >= 126:
                        length = None
                    masked = buffer[1] & 0x80
                    if length is not None and len(buffer) >= offset + (4 if masked else 0) + length:
                        break
                chunk = self.sock.recv(65536)
                if not chunk:
                    return
                buffer += chunk
            opcode = buffer[0] & 0x0F
            if masked:
                mask = buffer[offset:offset + 4]
                offset += 4
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(buffer[offset:offset + length]))
            else:
                payload = bytes(buffer[offset:offset + length])
            del buffer[:offset + length]
            yield opcode, payload

    def stream(self, subscription_id):
        count, rate = self.options.count, self.options.rate
        blocks = {}
        sent = 0
        started = time.monotonic()
        # Paced mode sends a slice every 10 ms, scheduled on absolute time so the rate does not drift.
        slice_size = max(1, rate // 100) if rate else BLOCK
        try:
            while sent < count and not self.closed:
                size = min(slice_size, count - sent)
                start = sent % BLOCK if size <= BLOCK else 0
                key = (start, size)
                if key not in blocks:
                    if len(blocks) > 64:
                        blocks.clear()
                    blocks[key] = build_block(self.protocol, subscription_id, start, size)
                self.send(blocks[key])
                sent += size
                if rate:
                    due = started + sent / rate
                    delay = due - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
            if self.protocol == "graphql" and not self.closed:
                self.send(text_frame({"id": subscription_id, "type": "complete"}))
        except OSError:
            pass

    def serve(self):
        try:
            rest = self.handshake()
            for opcode, payload in self.frames(rest):
                if opcode == 0x8:  # close: echo it and stop
                    self.closed = True
                    self.send(frame(payload[:2], opcode=0x8))
                    break
                if opcode == 0x9:
                    self.send(frame(payload, opcode=0xA))
                    continue
                if opcode != 0x1:
                    continue
                self.handle(json.loads(payload))
        except (OSError, ConnectionError, ValueError) as error:
            print("firehose: connection ended: %s" % error, file=sys.stderr)
        finally:
            self.closed = True
            try:
                self.sock.close()
            except OSError:
                pass

    @staticmethod
    def carries_devices(message):
        """Whether a subscription gets the stream: every one but the notifier's other upstreams (a store observes all of
        them), which are acknowledged and left quiet, so a store and a device-stream consumer receive the same events."""
        channel = message.get("channel") or ""
        if "/user/" in channel and "/device/" not in channel:
            return False
        query = (message.get("payload") or {}).get("query") or ""
        quiet = ("subscribeOrganizationState", "subscribeArchiveState", "subscribeRoleChange", "subscribeUserTokenRevoke")
        return not any(name in query for name in quiet)

    def handle(self, message):
        kind = message.get("type")
        if kind == "connection_init":
            ack = {"type": "connection_ack"}
            if self.protocol == "appsync":
                ack["connectionTimeoutMs"] = 300000
            self.send(text_frame(ack))
        elif kind == "subscribe":
            if self.protocol == "appsync":
                self.send(text_frame({"type": "subscribe_success", "id": message["id"]}))
            if self.carries_devices(message):
                threading.Thread(target=self.stream, args=(message["id"],), daemon=True).start()
        elif kind == "unsubscribe":
            self.send(text_frame({"type": "unsubscribe_success", "id": message.get("id")}))
        elif kind == "ping":
            self.send(text_frame({"type": "pong"}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--count", type=int, required=True, help="events per subscription")
    parser.add_argument("--rate", type=int, default=0, help="events/s; 0 = as fast as the client reads")
    options = parser.parse_args()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((options.host, options.port))
    listener.listen(16)
    print(json.dumps({"port": listener.getsockname()[1]}), flush=True)
    while True:
        sock, _ = listener.accept()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=Connection(sock, options).serve, daemon=True).start()


if __name__ == "__main__":
    main()
