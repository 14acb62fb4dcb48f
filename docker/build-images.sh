#!/usr/bin/env bash
# Builds leaselab's images FROM scratch, for machines whose Docker Engine
# cannot pull from a registry (air-gapped CI), and for the chaos image, which
# no registry has:
#
#   leaselab/redis:<redis version>-local          this machine's Debian redis-server
#                                                 and redis-cli with every shared
#                                                 library ldd lists, and the loader
#   leaselab/toxiproxy:<toxiproxy version>-local  static (CGO_ENABLED=0) builds of
#                                                 cmd/server and cmd/cli of the
#                                                 Toxiproxy version go.mod pins
#   leaselab/chaos:<release>-local                a static build of this tree's
#                                                 ./cmd/chaos, its version stamped
#                                                 (git describe); the tag is the
#                                                 release internal/version names,
#                                                 which the Kubernetes templates pin
#
# Nothing is pulled: the inputs are the local redis-server binary (Debian
# package redis-server), this source tree and Go modules (the Go module proxy
# or cache). Point docker-compose.yml and the container provider at the
# result with
#   export LEASELAB_REDIS_IMAGE=leaselab/redis:7.0.15-local
#   export LEASELAB_TOXIPROXY_IMAGE=leaselab/toxiproxy:2.12.0-local
# which is what --print-env prints, with LEASELAB_CHAOS_IMAGE (the tests of
# the Kubernetes templates run their pods from it).
#
# Usage: docker/build-images.sh [--print-env]
# Environment: REDIS_SERVER, REDIS_CLI (default /usr/bin/redis-server, /usr/bin/redis-cli).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
print_env=false
case "${1:-}" in
  --print-env) print_env=true ;;
  "") ;;
  *) echo "usage: $0 [--print-env]" >&2; exit 2 ;;
esac

redis_server=${REDIS_SERVER:-/usr/bin/redis-server}
redis_cli=${REDIS_CLI:-/usr/bin/redis-cli}
for b in "$redis_server" "$redis_cli"; do
  if [ ! -x "$b" ]; then
    echo "build-images: $b not found: install the Debian package redis-server (apt-get install redis-server)" >&2
    exit 1
  fi
done
redis_version=$("$redis_server" --version | sed -n 's/.* v=\([0-9][0-9.]*\).*/\1/p')
toxiproxy_version=$(cd "$root" && go list -m -f '{{.Version}}' github.com/Shopify/toxiproxy/v2)
toxiproxy_version=${toxiproxy_version#v}
redis_tag="leaselab/redis:${redis_version}-local"
toxiproxy_tag="leaselab/toxiproxy:${toxiproxy_version}-local"
# The release is written once, in internal/version (Release).
release=$(sed -n 's/^const Release = "\(v[0-9][0-9.]*\)"$/\1/p' "$root/internal/version/version.go")
if [ -z "$release" ]; then
  echo "build-images: no 'const Release = \"vX.Y.Z\"' in internal/version/version.go" >&2
  exit 1
fi
chaos_tag="leaselab/chaos:${release}-local"
# The version chaos version prints, as the documented build stamps it (docs/cli.md):
# empty outside a git checkout, and chaos then says its version is unknown.
stamp=$(git -C "$root" describe --tags --always --dirty 2>/dev/null || true)

work=$(mktemp -d "${TMPDIR:-/tmp}/leaselab-images.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Toxiproxy: the server and the CLI of the module version go.mod pins, in
# one go command (they share most of their compilation), built with that
# module's own dependency versions as its releases are. In the background,
# while Redis's context is assembled.
mkdir -p "$work/toxiproxy"
ldflags="-s -w -X github.com/Shopify/toxiproxy/v2.Version=${toxiproxy_version}"
(cd "$work" && CGO_ENABLED=0 GOBIN="$work/bin" go install -trimpath -ldflags "$ldflags" \
  "github.com/Shopify/toxiproxy/v2/cmd/server@v${toxiproxy_version}" \
  "github.com/Shopify/toxiproxy/v2/cmd/cli@v${toxiproxy_version}") &
toxiproxy_pid=$!

# chaos: a static build of this tree, also in the background.
mkdir -p "$work/chaos"
(cd "$root" && CGO_ENABLED=0 go build -trimpath \
  -ldflags "-s -w -X github.com/leaselab/leaselab/internal/version.build=${stamp}" \
  -o "$work/chaos/chaos" ./cmd/chaos) &
chaos_pid=$!

# Redis: the binaries under the public image's paths, and every library
# they load at the path ldd resolves it to (symlinks followed), plus the
# dynamic loader named in the binaries' PT_INTERP.
rootfs="$work/redis/rootfs"
mkdir -p "$rootfs/usr/local/bin" "$rootfs/data"
cp -L "$redis_server" "$rootfs/usr/local/bin/redis-server"
cp -L "$redis_cli" "$rootfs/usr/local/bin/redis-cli"
for lib in $(ldd "$redis_server" "$redis_cli" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && $2 ~ /^\(/ {print $1}' | sort -u); do
  mkdir -p "$rootfs$(dirname "$lib")"
  cp -L "$lib" "$rootfs$lib"
done
cp "$root/docker/redis/Dockerfile" "$work/redis/"

if ! wait "$toxiproxy_pid"; then
  kill "$chaos_pid" 2>/dev/null || true
  wait "$chaos_pid" 2>/dev/null || true
  echo "build-images: building Toxiproxy ${toxiproxy_version} failed" >&2
  exit 1
fi
mv "$work/bin/server" "$work/toxiproxy/toxiproxy"
mv "$work/bin/cli" "$work/toxiproxy/toxiproxy-cli"
cp "$root/docker/toxiproxy/Dockerfile" "$work/toxiproxy/"
wait "$chaos_pid" || { echo "build-images: building chaos failed" >&2; exit 1; }
cp "$root/docker/chaos/Dockerfile" "$work/chaos/"

# The legacy builder and BuildKit both build FROM scratch without a
# registry. Their chatter (the legacy builder's deprecation notice) is shown
# only if the build fails.
build() {
  local log
  if ! log=$(docker build -q "$@" 2>&1 >/dev/null); then
    echo "$log" >&2
    echo "build-images: docker build $* failed" >&2
    exit 1
  fi
}
build --build-arg "REDIS_VERSION=$redis_version" -t "$redis_tag" "$work/redis"
build --build-arg "TOXIPROXY_VERSION=$toxiproxy_version" -t "$toxiproxy_tag" "$work/toxiproxy"
build --build-arg "LEASELAB_VERSION=${stamp:-unknown}" -t "$chaos_tag" "$work/chaos"

# A smoke check of each image without a shell: the binaries run.
docker run --rm "$redis_tag" redis-server --version >/dev/null
docker run --rm "$toxiproxy_tag" -version >/dev/null
# chaos says the version stamped into it (or that it has none).
want=${stamp:-unknown version: built from a source tree without VCS information}
said=$(docker run --rm "$chaos_tag" version | sed -n 's/^leaselab  *//p')
case "$said" in
  "$want ("*) ;;
  *) echo "build-images: $chaos_tag says it is '$said', not $want" >&2; exit 1 ;;
esac

if $print_env; then
  echo "export LEASELAB_REDIS_IMAGE=$redis_tag"
  echo "export LEASELAB_TOXIPROXY_IMAGE=$toxiproxy_tag"
  echo "export LEASELAB_CHAOS_IMAGE=$chaos_tag"
else
  echo "built $redis_tag, $toxiproxy_tag and $chaos_tag"
fi
