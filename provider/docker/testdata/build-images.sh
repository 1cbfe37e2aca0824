#!/usr/bin/env bash
# Builds the Docker images airlock's tests and benchmark use, without any
# registry: a root filesystem made on this host, loaded with
# `docker import`. Prints one line per image, "NAME sha256:ID":
#   busybox  FROM-scratch style: Debian's static busybox only, /tmp 0755
#   python   the host's python3, its standard library and the shared
#            libraries it loads (ldd), plus busybox for sh, tar and kill;
#            no /tmp
#   volume   busybox with a declared VOLUME, which the provider refuses
# Images are tagged airlock-test/NAME:CONTENT-HASH so a rebuild is skipped
# when the inputs did not change; tests refer to them by id.
set -euo pipefail
BUSYBOX=${BUSYBOX:-/bin/busybox}
[ -x "$BUSYBOX" ] || BUSYBOX=/usr/bin/busybox
if ! "$BUSYBOX" --list >/dev/null 2>&1 || ldd "$BUSYBOX" >/dev/null 2>&1; then
  echo "build-images: need Debian's static busybox; apt-get install busybox-static" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

busybox_root() {
  local d=$1
  mkdir -p "$d/bin" "$d/tmp" "$d/etc" "$d/proc" "$d/dev" "$d/sys"
  # /tmp as many images have it, 0755 and root's: the Engine copies
  # that mode onto the scratch tmpfs, so the provider must not need
  # mode=1777 to let the run's user write there.
  chmod 0755 "$d/tmp"
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
  # No /tmp at all, as in an image made FROM scratch: on Engine 20.10
  # the working directory /tmp is then made 0755 under the tmpfs.
  rmdir "$d/tmp"
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

# inputs is a cheap fingerprint of what goes into the images: this
# script, busybox, and the python files by name, size and time.
inputs=$( {
  sha256sum <"$0"
  sha256sum <"$BUSYBOX"
  py=$(readlink -f /usr/bin/python3 2>/dev/null || true)
  [ -n "$py" ] && find "$py" "/usr/lib/$(basename "$py")" -printf '%P %s %T@\n' 2>/dev/null
} | sha256sum | cut -c1-12)

# build NAME ROOTFS-FUNCTION IMPORT-FLAGS...: reuse the image tagged with
# the inputs' fingerprint, else make the root filesystem and import it.
build() {
  local name=$1 make=$2 tag id
  shift 2
  tag=airlock-test/$name:$(printf '%s %s' "$inputs" "$*" | sha256sum | cut -c1-12)
  if ! id=$(docker image inspect -f '{{.Id}}' "$tag" 2>/dev/null); then
    rm -rf "${work:?}/root"
    "$make" "$work/root"
    tar -C "$work/root" -cf - . | docker import "$@" - "$tag" >/dev/null
    id=$(docker image inspect -f '{{.Id}}' "$tag")
  fi
  echo "$name $id"
}

build busybox busybox_root --change 'ENV PATH=/bin' --change 'CMD ["sh"]'
build volume busybox_root --change 'ENV PATH=/bin' --change 'VOLUME /data'
build python python_root --change 'ENV PATH=/usr/bin:/bin' --change 'CMD ["python3"]'
