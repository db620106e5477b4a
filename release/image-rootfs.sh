#!/usr/bin/env bash
# Assembles the container image's root file system (the Containerfile's
# build context) from the static moonbox binary (release/build-binary.sh):
#
#     bash release/image-rootfs.sh BINARY DIR
#
# DIR gets usr/local/bin/moonbox, the CA bundle (for TLS to remote MCP
# upstreams), an /etc/passwd and /etc/group naming the non-root user 65532
# (moonbox), and an empty /tmp. Nothing else: the binary needs no dynamic
# loader and no shared library (release/check-dist.sh checks the released
# one, and runs the image).
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
cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/:/nonexistent\nmoonbox:x:65532:65532:moonbox:/tmp:/nonexistent\n' > "$root/etc/passwd"
printf 'root:x:0:\nmoonbox:x:65532:\n' > "$root/etc/group"
echo "image-rootfs: $root ($(du -sh "$root" | cut -f1)): moonbox, the CA bundle, the user"
