#!/usr/bin/env bash
# Builds the Dockerfile and checks the image for real: `make image-test` (not part of `make test`:
# a first run takes several minutes, later ones reuse the cached base and layers).
#
# No container registry is needed. The base image is made from Debian's packages: debootstrap
# writes a minimal Debian (bookworm ships Python 3.11) with python3 and python3-venv, and
# `podman import` turns it into localhost/flynn-base. The Dockerfile is built on it
# (--build-arg BASE=...; pip installs from PyPI during the build), then one container runs
# with a named volume and the script checks that:
#   - GET /healthz and /readyz answer 200 through the published port, and the image's
#     HEALTHCHECK passes (podman healthcheck run);
#   - the daemon (PID 1 in the container) runs as uid 10001, not root;
#   - a message sent over the gateway is answered, the embedding model (MiniLM) loads, and the
#     database, the gateway token and the data dir (0700) are in the volume, owned by that uid;
#   - SIGTERM (podman stop) ends the daemon with exit code 0;
#   - a second container on the same volume finds the stored message and the same token.
#
# Needs root (rootful podman). Installs debootstrap, podman and runc with apt-get when missing.
# Its podman state (images, cache) lives in $FLYNN_IMAGE_TEST_DIR (default
# /var/tmp/flynn-image-test), apart from the machine's own podman storage (its driver:
# FLYNN_IMAGE_TEST_DRIVER, else overlay where it mounts, else vfs); containers and the
# volume it made are removed on exit, whatever happened. `tools/image_test.sh --purge` also
# removes the images and that directory.
#
# What podman needs in a sandbox like this one (2 cores, cgroup v1 without CAP_SYS_RESOURCE)
# is written to a containers.conf of its own: runc (crun refuses hybrid cgroups), the cgroupfs
# manager, a file events backend, ulimits no higher than the ones this shell has (podman's
# defaults would be refused), and overlay storage where the kernel mounts it, else vfs.
set -euo pipefail

cd "$(dirname "$0")/.."

SUITE=${FLYNN_IMAGE_TEST_SUITE:-bookworm}
MIRROR=${FLYNN_IMAGE_TEST_MIRROR:-http://deb.debian.org/debian}
STATE=${FLYNN_IMAGE_TEST_DIR:-/var/tmp/flynn-image-test}
BASE_IMAGE=localhost/flynn-base:$SUITE
IMAGE=localhost/flynn:image-test
NAME=flynn-image-test
VOLUME=flynn-image-test-data
CLIENT=image-test
# podman's run-time state, one per store.
RUNROOT=/run/flynn-image-test-$(printf '%s' "$STATE" | cksum | cut -d' ' -f1)

say() { printf '==> %s\n' "$*"; }
fail() {
    printf 'image-test FAILED: %s\n' "$*" >&2
    exit 1
}

if [ "$(id -u)" != 0 ]; then
    fail "run as root (rootful podman and debootstrap need it)"
fi

need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v podman >/dev/null || need+=(podman)
command -v runc >/dev/null || need+=(runc)
command -v curl >/dev/null || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
    say "apt-get install ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# podman configuration of its own, so nothing of the machine's podman setup is touched.
mkdir -p "$STATE"
driver=vfs
probe=$(mktemp -d)
mkdir -p "$probe"/{l,u,w,m}
if mount -t overlay overlay -o "lowerdir=$probe/l,upperdir=$probe/u,workdir=$probe/w" \
    "$probe/m" 2>/dev/null; then
    umount "$probe/m"
    driver=overlay
fi
rm -rf "$probe"
driver=${FLYNN_IMAGE_TEST_DRIVER:-$driver}
if [ -f "$STATE/driver" ] && [ "$(cat "$STATE/driver")" != "$driver" ]; then
    # A store keeps the driver it was made with.
    rm -rf "$STATE/storage"
fi
echo "$driver" >"$STATE/driver"

nofile=$(ulimit -Hn)
[ "$nofile" = unlimited ] || [ "$nofile" -gt 1048576 ] && nofile=1048576
nproc=$(ulimit -Hu)
# podman lowers its own process limit to 32768, and the container cannot go above its parent.
[ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ] && nproc=32768

cat >"$STATE/storage.conf" <<EOF
[storage]
driver = "$driver"
graphroot = "$STATE/storage"
runroot = "$RUNROOT"
EOF
cat >"$STATE/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
log_driver = "k8s-file"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
export CONTAINERS_CONF=$STATE/containers.conf
export CONTAINERS_STORAGE_CONF=$STATE/storage.conf

if [ "${1:-}" = --purge ]; then
    podman rm -f "$NAME" "$NAME-2" >/dev/null 2>&1 || true
    podman volume rm -f "$VOLUME" >/dev/null 2>&1 || true
    podman rmi -a -f >/dev/null 2>&1 || true
    rm -rf "$STATE" "$RUNROOT"
    say "purged $STATE"
    exit 0
fi

cleanup() {
    podman rm -f -t 0 "$NAME" "$NAME-2" >/dev/null 2>&1 || true
    rm -rf "$STATE/rootfs" 2>/dev/null || true
    podman volume rm -f "$VOLUME" >/dev/null 2>&1 || true
}
trap cleanup EXIT
cleanup # left over from an interrupted run

started=$(date +%s)

# 1. The base: a minimal Debian with its python3, imported as an image (once; then cached).
if ! podman image exists "$BASE_IMAGE"; then
    rootfs=$STATE/rootfs
    rm -rf "$rootfs"
    say "debootstrap $SUITE (python3, python3-venv) from $MIRROR"
    debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
        "$SUITE" "$rootfs" "$MIRROR" >"$STATE/debootstrap.log" 2>&1 ||
        fail "debootstrap failed; see $STATE/debootstrap.log"
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin \
        "$rootfs"/var/cache/apt/archives/*.deb
    say "podman import -> $BASE_IMAGE"
    tar -C "$rootfs" --numeric-owner -cf - . | podman import --quiet \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change 'CMD ["python3"]' \
        - "$BASE_IMAGE" >/dev/null
    rm -rf "$rootfs"
fi
pyver=$(podman run --rm "$BASE_IMAGE" python3 -c \
    'import sys; print("%d.%d.%d" % sys.version_info[:3]); sys.exit(sys.version_info < (3, 11))') ||
    fail "the base's python3 ($pyver) is older than 3.11, which flynn needs"
say "base $BASE_IMAGE: Python $pyver"

# 2. The Dockerfile, on that base. --format docker keeps HEALTHCHECK (OCI images drop it).
# The build's pip trusts what this machine trusts (a TLS-inspecting proxy's CA, say): the host's
# CA bundle is mounted over the base's for the RUN steps only, so the image never keeps it.
build_opts=(--format docker --network host --build-arg "BASE=$BASE_IMAGE")
bundle=/etc/ssl/certs/ca-certificates.crt
[ -s "$bundle" ] && build_opts+=(--volume "$bundle:$bundle:ro")
say "podman build --build-arg BASE=$BASE_IMAGE -t $IMAGE"
podman build "${build_opts[@]}" -t "$IMAGE" . \
    >"$STATE/build.log" 2>&1 || {
    tail -n 40 "$STATE/build.log" >&2
    fail "podman build failed; see $STATE/build.log"
}
# Leftovers of builds older than an hour go (recent ones stay as the cache of the next run).
podman image prune -f --filter until=1h >/dev/null

# 3. Run it as the README says: a named volume, the gateway published on loopback only.
# Without systemd podman cannot time the HEALTHCHECK (it uses systemd timers, and podman 4.3 tries
# even with --health-interval disable): it is run by hand below, and that complaint is hidden.
no_timer() { "$@" 2> >(grep -v 'unable to get systemd connection' >&2); }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
say "podman run -p 127.0.0.1:$port:8765 -v $VOLUME:/data $IMAGE"
no_timer podman run -d --name "$NAME" --health-interval disable -p "127.0.0.1:$port:8765" -v "$VOLUME:/data" "$IMAGE" >/dev/null
logs() {
    echo "--- container logs ---" >&2
    podman logs "$NAME" 2>&1 | tail -n 30 >&2 || true
}

healthz=""
for _ in $(seq 60); do
    if healthz=$(curl -fsS -m 2 "http://127.0.0.1:$port/healthz" 2>/dev/null); then
        break
    fi
    [ "$(podman inspect -f '{{.State.Running}}' "$NAME")" = true ] || {
        logs
        fail "the container exited"
    }
    healthz=""
    sleep 1
done
[ -n "$healthz" ] || {
    logs
    fail "/healthz did not answer within 60 s"
}
say "GET /healthz: $healthz"
readyz=$(curl -fsS -m 5 "http://127.0.0.1:$port/readyz") || {
    logs
    fail "/readyz did not answer 200"
}
say "GET /readyz: $readyz"
podman healthcheck run "$NAME" >/dev/null || fail "the image's HEALTHCHECK failed"
say "HEALTHCHECK: healthy"

# 4. Not root: the daemon itself (PID 1 in the container), seen from inside and from the host.
uid_inside=$(podman exec "$NAME" awk '/^Uid:/ {print $2}' /proc/1/status)
host_pid=$(podman inspect -f '{{.State.Pid}}' "$NAME")
uid_host=$(awk '/^Uid:/ {print $2}' "/proc/$host_pid/status")
say "daemon uid: $uid_inside inside, $uid_host on the host (pid $host_pid)"
[ "$uid_inside" = 10001 ] && [ "$uid_host" = 10001 ] || fail "the daemon runs as uid $uid_inside"

# 5. A conversation over the gateway (the image's own Python and websockets), then the volume.
reply=$(podman exec -i "$NAME" python - "$CLIENT" <<'EOF'
import asyncio, json, pathlib, sys
import websockets

async def main() -> None:
    token = pathlib.Path("/data/gateway-token").read_text().strip()
    async with websockets.connect("ws://127.0.0.1:8765/ws") as ws:
        await ws.send(json.dumps({"type": "hello", "token": token, "client_id": sys.argv[1]}))
        assert json.loads(await ws.recv())["type"] == "ready"
        text = "my favourite colour is teal, and this note proves the image keeps data"
        await ws.send(json.dumps({"type": "message", "id": "m1", "text": text}))
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if frame["type"] == "reply":
                print(frame["text"][:120].replace("\n", " "))
                return
            if frame["type"] == "error":
                raise SystemExit(f"error frame: {frame}")

asyncio.run(main())
EOF
) || {
    logs
    fail "no reply over the gateway"
}
say "gateway reply: $reply"

# The image carries the embedding model (memory.embeddings is on by default): the daemon loads
# it in the background after it serves, and says so once it has.
loaded=""
for _ in $(seq 60); do
    loaded=$(podman logs "$NAME" 2>&1 | grep -m1 '"memory.embeddings_loaded"' || true)
    [ -n "$loaded" ] && break
    sleep 1
done
[ -n "$loaded" ] || {
    logs
    fail "the embedding model did not load (no memory.embeddings_loaded in the logs)"
}
say "embedding model: $loaded"

mountpoint=$(podman volume inspect -f '{{.Mountpoint}}' "$VOLUME")
say "volume $VOLUME at $mountpoint:"
ls -ln "$mountpoint" | sed 's/^/    /'
[ "$(stat -c '%u %a' "$mountpoint")" = "10001 700" ] ||
    fail "the volume's root is $(stat -c 'uid %u mode %a' "$mountpoint"), not uid 10001 mode 700"
for f in flynn.db gateway-token; do
    [ -s "$mountpoint/$f" ] || fail "$f is not in the volume"
    [ "$(stat -c %u "$mountpoint/$f")" = 10001 ] || fail "$f is not owned by uid 10001"
done
token=$(cat "$mountpoint/gateway-token")

# 6. SIGTERM drains and exits 0.
no_timer podman stop -t 30 "$NAME" >/dev/null
code=$(podman inspect -f '{{.State.ExitCode}}' "$NAME")
say "podman stop: exit code $code"
[ "$code" = 0 ] || {
    logs
    fail "the daemon exited $code on SIGTERM"
}

# 7. What the first container stored is there for the next one.
found=$(podman run --rm --name "$NAME-2" --no-healthcheck -v "$VOLUME:/data" "$IMAGE" \
    sessions search teal --session "gateway:$CLIENT" --json) || fail "flynn sessions search failed"
case $found in
*"proves the image keeps data"*) ;;
*) fail "the stored message was not found from a new container: $found" ;;
esac
[ "$(cat "$mountpoint/gateway-token")" = "$token" ] || fail "the gateway token changed"
say "a new container on the volume finds the message (sessions search teal) and the same token"

say "image-test passed in $(($(date +%s) - started)) s (image $IMAGE, storage $driver)"
