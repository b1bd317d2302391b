#!/usr/bin/env python3
"""Writes the binary fuzz seeds: a consumer-protocol subscription and
assignment (v3, as Java's ConsumerProtocol writes them) and a record batch
(magic 2, CRC-32C), from the Kafka protocol's field layout. Run from fuzz/."""
import struct

def s16(s): b = s.encode(); return struct.pack(">h", len(b)) + b

def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF

def varint(n):
    z = (n << 1) ^ (n >> 63)
    out = b""
    while True:
        b = z & 0x7F; z >>= 7
        if z: out += bytes([b | 0x80])
        else: return out + bytes([b])

topics = ["market-updates", "notifications"]
sub = struct.pack(">h", 3) + struct.pack(">i", 2) + b"".join(s16(t) for t in topics)
sub += struct.pack(">i", -1)                      # user data: null
sub += struct.pack(">i", 1) + s16(topics[0]) + struct.pack(">ii", 1, 0)  # owned partitions
sub += struct.pack(">i", 4) + struct.pack(">h", -1)  # generation, rack: null
open("corpus/member_metadata/seed-subscription", "wb").write(sub)
asg = struct.pack(">h", 3) + struct.pack(">i", 2)
asg += s16(topics[0]) + struct.pack(">iii", 2, 0, 3) + s16(topics[1]) + struct.pack(">iii", 2, 0, 3)
asg += struct.pack(">i", -1)
open("corpus/member_metadata/seed-assignment", "wb").write(asg)

records = b""
for i, (k, v) in enumerate([(b"BBCA", b"9000"), (b"ANTM", b"1450"), (None, b"x")]):
    body = b"\x00" + varint(i) + varint(i)      # attributes, timestamp delta, offset delta
    body += varint(-1) if k is None else varint(len(k)) + k
    body += varint(len(v)) + v + varint(0)      # value, no headers
    records += varint(len(body)) + body
after_crc = struct.pack(">hiqqqhii", 0, 2, 1700000000000, 1700000000002, -1, -1, -1, 3) + records
crc = crc32c(after_crc)
inner = struct.pack(">ibI", 0, 2, crc) + after_crc  # partition leader epoch, magic, crc
batch = struct.pack(">qi", 0, len(inner)) + inner
open("corpus/record_batches/seed-batch", "wb").write(batch)

# Broker responses (fuzz_targets/responses.rs: byte 0 picks the API, byte 1
# the version): per API a near-empty body, and bodies whose first array
# announces 2^31 - 1 elements (i32 count) or 2^32 - 2 (compact, flexible
# versions) with bytes for none; the allocator guard must make them errors.
import os
os.makedirs("corpus/responses", exist_ok=True)
cid = struct.pack(">i", 9)
for api in range(15):
    seeds = {
        "empty": bytes([api, 0]) + cid + b"\0" * 12,
        "absurd": bytes([api, 0]) + cid + b"\0\0" + struct.pack(">i", 2**31 - 1) + b"\0" * 16,
        "absurd-flex": bytes([api, 255]) + cid + b"\0" * 5 + b"\xfe\xff\xff\xff\x0f" + b"\0" * 16,
    }
    for name, data in seeds.items():
        open(f"corpus/responses/seed-{name}-{api}", "wb").write(data)
