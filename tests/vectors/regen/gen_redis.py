#!/usr/bin/env python3
"""Redis Cluster key->slot from a real redis-server (Debian package redis-server).

Starts `redis-server --cluster-enabled yes --port <free port>` bound to 127.0.0.1
in a temporary directory (no persistence), asks `CLUSTER KEYSLOT <raw key bytes>`
through redis-py (PyPI redis==8.1.0) for every key of generated/keys.jsonl, writes
generated/redis_server_cluster_keyslot.jsonl and stops the server.
"""
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import redis

from corpus import key_text, load_keys, write_lines


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    server_bin = shutil.which("redis-server") or "/usr/bin/redis-server"
    version = subprocess.run([server_bin, "--version"], capture_output=True, text=True).stdout.strip()
    print(version)
    tmp = tempfile.mkdtemp(prefix="partwise-redis-")
    port = free_port()
    proc = subprocess.Popen(
        [server_bin, "--port", str(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
         "--cluster-config-file", f"{tmp}/nodes.conf", "--dir", tmp, "--save", "", "--appendonly", "no",
         "--daemonize", "no", "--logfile", f"{tmp}/redis.log"],
        cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        r = redis.Redis(host="127.0.0.1", port=port)
        for _ in range(100):
            try:
                r.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.1)
        else:
            raise SystemExit("redis-server did not come up")
        info = r.info("server")
        print(f"redis-server {info['redis_version']} on 127.0.0.1:{port}, cluster_enabled={r.info('cluster')['cluster_enabled']}")
        lines = []
        for key in load_keys():
            slot = r.execute_command("CLUSTER", "KEYSLOT", key)
            assert isinstance(slot, int) and 0 <= slot < 16384, slot
            lines.append(json.dumps({"key_hex": key.hex(), "key": key_text(key), "slot": slot},
                                    ensure_ascii=False, separators=(",", ":")))
        write_lines("redis_server_cluster_keyslot.jsonl", lines)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
