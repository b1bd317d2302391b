"""DescribeGroups v0 of one classic group, raw: each member's id, client id,
metadata and assignment bytes (hex), as the group's coordinator returns them.
Python's standard library only, so nothing between the broker's bytes and
the file decodes or re-encodes them.

    python3 describe.py BOOTSTRAP GROUP   ->  state, then one line per member:
    member MEMBER_ID CLIENT_ID METADATA_HEX ASSIGNMENT_HEX
"""
import socket
import struct
import sys


def string(s):
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def call(host, port, api_key, body):
    header = struct.pack(">hhi", api_key, 0, 1) + string("partwise-capture")
    msg = header + body
    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(struct.pack(">i", len(msg)) + msg)
        size = b""
        while len(size) < 4:
            size += s.recv(4 - len(size))
        (n,) = struct.unpack(">i", size)
        data = b""
        while len(data) < n:
            chunk = s.recv(n - len(data))
            if not chunk:
                raise SystemExit("connection closed")
            data += chunk
    return Reader(data[4:])  # past the correlation id


class Reader:
    def __init__(self, b):
        self.b, self.i = b, 0

    def take(self, n):
        v = self.b[self.i : self.i + n]
        if len(v) != n:
            raise SystemExit("truncated response")
        self.i += n
        return v

    def i16(self):
        return struct.unpack(">h", self.take(2))[0]

    def i32(self):
        return struct.unpack(">i", self.take(4))[0]

    def str(self):
        n = self.i16()
        return "" if n < 0 else self.take(n).decode()

    def bytes(self):
        n = self.i32()
        return b"" if n < 0 else self.take(n)


def main():
    bootstrap, group = sys.argv[1], sys.argv[2]
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    r = call(host, int(port), 10, string(group))  # FindCoordinator v0
    err, _node, chost, cport = r.i16(), r.i32(), r.str(), r.i32()
    if err:
        raise SystemExit(f"FindCoordinator error {err}")
    r = call(chost, cport, 15, struct.pack(">i", 1) + string(group))  # DescribeGroups v0
    for _ in range(r.i32()):
        err, gid, state, ptype, proto = r.i16(), r.str(), r.str(), r.str(), r.str()
        if err:
            raise SystemExit(f"DescribeGroups error {err}")
        print(f"state {state} {ptype} {proto}")
        for _ in range(r.i32()):
            mid, cid, _chost = r.str(), r.str(), r.str()
            meta, asg = r.bytes(), r.bytes()
            print(f"member {mid} {cid} {meta.hex()} {asg.hex()}")


main()
