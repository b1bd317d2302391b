#!/usr/bin/env python3
"""Writes api_versions.json: for each Kafka release, the highest stable version
of every API, read from the message schemas (common/message/*Request.json:
validVersions, minus one when latestVersionUnstable) inside that release's
kafka-clients jar, which `run` resolved into .cache/m2. Usage:
python3 tests/vectors/kip848/api_versions.py"""
import json, os, re, sys, zipfile

VERSIONS = ["4.0.0", "4.0.2", "4.1.1", "4.2.0", "4.3.0", "4.4.0"]
here = os.path.dirname(os.path.abspath(__file__))
m2 = os.path.join(here, "..", "..", "..", ".cache", "m2", "org", "apache", "kafka", "kafka-clients")
out = {}
for v in VERSIONS:
    jar = os.path.join(m2, v, f"kafka-clients-{v}.jar")
    if not os.path.exists(jar):
        sys.exit(f"{jar} missing: run tests/vectors/kip848/run {v} first")
    apis = {}
    with zipfile.ZipFile(jar) as z:
        for n in z.namelist():
            if not re.fullmatch(r"common/message/\w+Request\.json", n):
                continue
            d = json.loads(re.sub(r"//.*", "", z.read(n).decode()))
            if "apiKey" not in d or d["validVersions"] == "none":
                continue
            hi = int(d["validVersions"].split("-")[-1]) - (1 if d.get("latestVersionUnstable") else 0)
            if hi >= 0:
                apis[str(d["apiKey"])] = hi
    out[v] = dict(sorted(apis.items(), key=lambda kv: int(kv[0])))
with open(os.path.join(here, "api_versions.json"), "w") as f:
    json.dump({"source": "kafka-clients <version> jar, common/message/*Request.json", "max_stable": out}, f, indent=1)
    f.write("\n")
