#!/usr/bin/env bash
# Assembles the container image's root file system (the Containerfile's
# build context) from the moonbox binary and the libraries it links, as
# this Debian system's packages installed them:
#
#     bash release/image-rootfs.sh BINARY DIR
#
# DIR gets usr/local/bin/moonbox, each library `ldd` names (and the dynamic
# loader) at its own path, the CA bundle, an /etc/passwd and /etc/group
# naming the non-root user 65532 (moonbox), and an empty /tmp.
set -euo pipefail
if [ $# -ne 2 ] || [ ! -x "$1" ]; then
  echo "usage: $0 BINARY DIR (BINARY an executable moonbox)" >&2
  exit 2
fi
binary=$1
root=$2
rm -rf "$root"
mkdir -p "$root/usr/local/bin" "$root/etc/ssl/certs" "$root/tmp"
chmod 1777 "$root/tmp"
install -m 0755 "$binary" "$root/usr/local/bin/moonbox"
# Every library the binary needs, resolved by the system's loader.
libs=$(ldd "$binary" | awk '/=> \//{print $3} /^\t\/[^ ]+ \(/{print $1}')
[ -n "$libs" ] || { echo "image-rootfs: ldd found no libraries in $binary (a static binary needs none; this script expects glibc)" >&2; exit 1; }
for lib in $libs; do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
  # The package that installed it, for the record (and so a library from
  # outside the system's packages is noticed).
  dpkg -S "$lib" >/dev/null 2>&1 || dpkg -S "$(readlink -f "$lib")" >/dev/null 2>&1 \
    || { echo "image-rootfs: $lib is from no Debian package" >&2; exit 1; }
done
cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/:/nonexistent\nmoonbox:x:65532:65532:moonbox:/tmp:/nonexistent\n' > "$root/etc/passwd"
printf 'root:x:0:\nmoonbox:x:65532:\n' > "$root/etc/group"
echo "image-rootfs: $root ($(du -sh "$root" | cut -f1)): moonbox and $(echo "$libs" | wc -w) libraries"
