#!/usr/bin/env bash
# The compose path end to end, as a CI suite uses it: bring docker-compose.yml
# up, wait until Redis and Toxiproxy are healthy, run one scenario through the
# chaos CLI against them, take the stack down, and check that no container,
# network or volume of it is left. Exits with the CLI's code (0: the
# scenario's expectations held), or 1 if anything is left behind.
#
# Usage: docker/compose-smoke.sh [SCENARIO [CHAOS FLAGS...]]
#   default: leader-crash --time-scale 0.2
# Environment: LEASELAB_REDIS_IMAGE, LEASELAB_TOXIPROXY_IMAGE (docker/build-images.sh
# --print-env); LEASELAB_REDIS_PORT (6379), LEASELAB_TOXIPROXY_PORT (8474),
# LEASELAB_PROXY_PORTS (21000-21031); CHAOS, the CLI to run (default: go run ./cmd/chaos).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if docker-compose version >/dev/null 2>&1; then
  compose=(docker-compose)
elif docker compose version >/dev/null 2>&1; then
  compose=(docker compose)
else
  echo "compose-smoke: neither docker-compose nor the docker compose plugin is installed" >&2
  exit 3
fi
project="leaselab-smoke-$$"
compose+=(-p "$project" -f "$root/docker-compose.yml")
redis_port=${LEASELAB_REDIS_PORT:-6379}
api_port=${LEASELAB_TOXIPROXY_PORT:-8474}
proxy_ports=${LEASELAB_PROXY_PORTS:-21000-21031}
out=$(mktemp -d "${TMPDIR:-/tmp}/leaselab-smoke.XXXXXX")

# Whatever happens, the stack goes, and nothing of it may be left.
down() {
  local code=$?
  "${compose[@]}" down -v --remove-orphans -t 1 >/dev/null 2>&1 || true
  local left=""
  for what in "ps -a" "network ls" "volume ls"; do
    left+=$(docker $what -q --filter "label=com.docker.compose.project=$project")
  done
  rm -rf "$out"
  if [ -n "$left" ]; then
    echo "compose-smoke: left behind: $left" >&2
    exit 1
  fi
  echo "compose-smoke: stack $project removed, nothing left"
  exit "$code"
}
trap down EXIT
trap 'exit 130' INT TERM

start=$(date +%s%N)
"${compose[@]}" up -d
# docker-compose v1 has no `up --wait`: poll the health checks.
for _ in $(seq 1 120); do
  states=$(docker inspect -f '{{.State.Health.Status}}' $("${compose[@]}" ps -q))
  [ "$(grep -c '^healthy$' <<<"$states")" = 2 ] && break
  sleep 0.5
done
[ "$(grep -c '^healthy$' <<<"$states")" = 2 ] || { echo "compose-smoke: not healthy: $states" >&2; exit 3; }
echo "compose-smoke: healthy after $(( ($(date +%s%N) - start) / 1000000 )) ms"

scenario=${1:-leader-crash}
shift || true
[ $# -gt 0 ] || set -- --time-scale 0.2
chaos=${CHAOS:-go run ./cmd/chaos}
# shellcheck disable=SC2086 # CHAOS may be a command with arguments
$chaos run "$scenario" "$@" --out "$out" \
  --redis-addr "127.0.0.1:$redis_port" --toxiproxy-addr "127.0.0.1:$api_port" \
  --proxy-ports "$proxy_ports" --proxy-upstream redis:6379
