#!/usr/bin/env bash
# Builds the Docker images airlock's tests and benchmark use, without any
# registry: a root filesystem made on this host, loaded with
# `docker import`. Prints one line per image, "NAME sha256:ID":
#   busybox  FROM-scratch style: Debian's static busybox only
#   python   the host's python3, its standard library and the shared
#            libraries it loads (ldd), plus busybox for sh, tar and kill
#   volume   busybox with a declared VOLUME, which the provider refuses
# Images are tagged airlock-test/NAME:CONTENT-HASH so a rebuild is skipped
# when the inputs did not change; tests refer to them by id.
set -euo pipefail
BUSYBOX=${BUSYBOX:-/bin/busybox}
[ -x "$BUSYBOX" ] || BUSYBOX=/usr/bin/busybox
if ! "$BUSYBOX" --list >/dev/null 2>&1 || ! file -L "$BUSYBOX" 2>/dev/null | grep -q static; then
  echo "build-images: need Debian's static busybox; apt-get install busybox-static" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

busybox_root() {
  local d=$1
  mkdir -p "$d/bin" "$d/tmp" "$d/etc" "$d/proc" "$d/dev" "$d/sys"
  cp "$BUSYBOX" "$d/bin/busybox"
  for a in $("$BUSYBOX" --list); do
    [ -e "$d/bin/$a" ] || ln -s busybox "$d/bin/$a"
  done
  echo 'nobody:x:65534:65534:nobody:/tmp:/bin/sh' >"$d/etc/passwd"
  echo 'nogroup:x:65534:' >"$d/etc/group"
}

python_root() {
  local d=$1 py
  busybox_root "$d"
  py=$(readlink -f /usr/bin/python3)
  mkdir -p "$d/usr/bin"
  cp "$py" "$d/usr/bin/"
  ln -s "$(basename "$py")" "$d/usr/bin/python3"
  local lib
  lib=/usr/lib/$(basename "$py")
  mkdir -p "$d$lib"
  tar -C "$lib" --exclude=dist-packages --exclude=site-packages --exclude=test \
    --exclude=__pycache__ --exclude=idlelib --exclude=tkinter -cf - . | tar -C "$d$lib" -xf -
  { ldd "$py"; find "$lib/lib-dynload" -name '*.so' -exec ldd {} \; ; } 2>/dev/null |
    grep -o '/[^ ]*' | sort -u | while read -r so; do
      [ -e "$so" ] && cp -L --parents "$so" "$d/"
    done
}

build() {
  local name=$1 root=$2
  shift 2
  local hash tag id
  hash=$(cd "$root" && find . -type f -o -type l | LC_ALL=C sort | { xargs -d "\n" sha256sum 2>/dev/null || true; } | sha256sum | cut -c1-12)
  hash=$(printf '%s %s' "$hash" "$*" | sha256sum | cut -c1-12)
  tag=airlock-test/$name:$hash
  if ! id=$(docker image inspect -f '{{.Id}}' "$tag" 2>/dev/null); then
    tar -C "$root" -cf - . | docker import "$@" - "$tag" >/dev/null
    id=$(docker image inspect -f '{{.Id}}' "$tag")
  fi
  echo "$name $id"
}

busybox_root "$work/busybox"
build busybox "$work/busybox" --change 'ENV PATH=/bin' --change 'CMD ["sh"]'
build volume "$work/busybox" --change 'ENV PATH=/bin' --change 'VOLUME /data'
python_root "$work/python"
build python "$work/python" --change 'ENV PATH=/usr/bin:/bin' --change 'CMD ["python3"]'
