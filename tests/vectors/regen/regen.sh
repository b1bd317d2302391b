#!/usr/bin/env bash
# Regenerate tests/vectors/generated/ with the REAL clients installed from package
# registries (PyPI, npm, the Go module proxy, Debian apt), producing to a real Apache
# Kafka, then cross-check against tests/vectors/reference/.
# Re-runnable on a fresh Debian 12 machine (root, or a user with sudo) with Go >= 1.26,
# Java 17 and Maven (scripts/kafka-up fetches Apache Kafka from Maven Central).
#
#   bash tests/vectors/regen/regen.sh                  # install + generate + crosscheck
#   SKIP_INSTALL=1 bash tests/vectors/regen/regen.sh   # reuse installed packages/venv/node_modules
#   LIBRDKAFKA_BROKER=mock bash ...                    # librdkafka on its mock cluster instead
#   REGEN_KAFKA_DIR=/tmp/x bash ...                    # scripts/kafka-up --dir (default: a new temp dir)
#
# The broker: scripts/kafka-up --dir DIR --port 0 (one KRaft node on loopback, free
# ports), stopped again when this script exits. Exit status is non-zero if any
# generator fails or the crosscheck finds a disagreement.
set -euo pipefail

REGEN="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$REGEN/../../.." && pwd)"
GENERATED="$(cd "$REGEN/.." && pwd)/generated"
cd "$REGEN"

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

APT_PACKAGES=(redis-server)
command -v node >/dev/null 2>&1 || APT_PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || APT_PACKAGES+=(npm)
command -v mvn >/dev/null 2>&1 || APT_PACKAGES+=(maven)
command -v java >/dev/null 2>&1 || APT_PACKAGES+=(openjdk-17-jre-headless)
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
command -v go >/dev/null 2>&1 || { echo "regen.sh: Go >= 1.26 is needed (go/go.mod)" >&2; exit 2; }

PY="$REGEN/.venv/bin/python"
mkdir -p "$GENERATED"

echo "== Go clients (go/go.mod, go.sum: modules from the Go module proxy)"
# -mod=readonly: the build uses exactly the versions go.mod/go.sum pin and fails
# rather than change them.
(cd go && go build -mod=readonly -o bin/vectors-regen .)

echo "== Apache Kafka (scripts/kafka-up)"
KAFKA_DIR="${REGEN_KAFKA_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/partwise-regen-kafka.XXXXXX")}"
stop_kafka() { bash "$ROOT/scripts/kafka-up" --dir "$KAFKA_DIR" --stop || true; }
trap stop_kafka EXIT
bash "$ROOT/scripts/kafka-up" --dir "$KAFKA_DIR" --port 0 >/dev/null
# shellcheck disable=SC1091
source "$KAFKA_DIR/env"
PARTWISE_KAFKA_VERSION="$(grep -m1 -o 'Kafka version: [^ ]*' "$KAFKA_DIR"/node-1/server.log | awk '{print $3}')"
[ -n "$PARTWISE_KAFKA_VERSION" ] || { echo "regen.sh: no 'Kafka version' in $KAFKA_DIR/node-1/server.log" >&2; exit 1; }
export PARTWISE_KAFKA_BOOTSTRAP PARTWISE_KAFKA_VERSION
echo "Apache Kafka $PARTWISE_KAFKA_VERSION at $PARTWISE_KAFKA_BOOTSTRAP ($KAFKA_DIR)"

echo "== versions"
dpkg-query -W -f='${Package} ${Version}\n' redis-server
"$PY" -m pip list --disable-pip-version-check 2>/dev/null | grep -iE '^(kafka-python|confluent-kafka|redis) '
echo "kafkajs $(node -p "require('kafkajs/package.json').version")  (node $(node --version))"
go version
(cd go && go list -mod=readonly -m github.com/IBM/sarama github.com/twmb/franz-go github.com/segmentio/kafka-go)

echo "== corpus"
"$PY" corpus.py

echo "== kafka-python"
"$PY" gen_kafka_python.py

echo "== aiokafka (its own venv, aiokafka==0.14.0)"
"$PY" gen_aiokafka.py

echo "== kafkajs end to end"
node gen_kafkajs.js

echo "== Sarama, franz-go, kafka-go end to end"
"$REGEN/go/bin/vectors-regen" -out "$GENERATED"

echo "== redis-server CLUSTER KEYSLOT"
"$PY" gen_redis.py

echo "== librdkafka (confluent-kafka) end to end"
if [ "${LIBRDKAFKA_BROKER:-kafka}" = mock ]; then
  "$PY" gen_librdkafka.py --mock
else
  "$PY" gen_librdkafka.py
fi

echo "== librdkafka consumer groups (range, roundrobin, cooperative-sticky) on the broker"
if [ "${LIBRDKAFKA_BROKER:-kafka}" = mock ]; then
  "$PY" gen_assignments.py --mock
else
  "$PY" gen_assignments.py
fi

echo "== crosscheck"
"$PY" crosscheck.py
