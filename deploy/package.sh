#!/usr/bin/env bash
# Builds gyrogate's Debian package: dist/gyrogate_<version>_<arch>.deb, for a Raspberry Pi
# (arm64) or a PC (amd64).
#
# Usage: sudo bash deploy/package.sh --arch arm64|amd64 [--binary PATH] [--version V] [--output DIR]
#                                    [--cache DIR]
#
#   --arch arm64   cross-builds with Debian's Swift (sid's swiftlang) for trixie-based systems
#                  (Raspberry Pi OS 13, Debian 13): see docs/deployment.md, "The Debian package"
#   --arch amd64   builds with this machine's Swift (6.3 from swift.org), for the Debian release
#                  this machine runs and newer
#   --binary PATH  package this gyrogate instead of building one (it must be for --arch)
#   --version V    the package's version (default: the one gyrogate --version prints)
#   --output DIR   where the .deb goes (default: dist/)
#   --cache DIR    where the arm64 toolchain and sysroot and both builds are kept between runs (default
#                  $GYROGATE_PACKAGE_CACHE, else /var/cache/gyrogate-package when root, else
#                  .package-cache/ in the repository)
#
# arm64 needs root, mmdebstrap, and Debian's archive: the first run makes a Debian sid chroot
# with swiftlang and a trixie arm64 sysroot turned into a Swift SDK, then builds
# with deploy/build-pi.sh --cross inside the chroot; later runs reuse both and rebuild only what
# changed. The package's maintainer scripts are made from deploy/debian/ and
# deploy/system-setup.sh, which deploy/install.sh uses too.
set -euo pipefail

me="deploy/package.sh"
die() { echo "$me: error: $*" >&2; exit 1; }
note() { echo "== $*"; }
usage() { sed -n '/^# Usage:/,/^#                  .package-cache/p' "$0" | sed 's/^# \{0,1\}//'; }

arch="" binary="" version="" output="" cache=${GYROGATE_PACKAGE_CACHE:-}
while [ $# -gt 0 ]; do
    case "$1" in
        --arch) [ $# -ge 2 ] || die "--arch needs arm64 or amd64"; arch=$2; shift 2 ;;
        --arch=*) arch=${1#*=}; shift ;;
        --binary) [ $# -ge 2 ] || die "--binary needs a PATH"; binary=$2; shift 2 ;;
        --binary=*) binary=${1#*=}; shift ;;
        --version) [ $# -ge 2 ] || die "--version needs a version"; version=$2; shift 2 ;;
        --version=*) version=${1#*=}; shift ;;
        --output) [ $# -ge 2 ] || die "--output needs a DIR"; output=$2; shift 2 ;;
        --output=*) output=${1#*=}; shift ;;
        --cache) [ $# -ge 2 ] || die "--cache needs a DIR"; cache=$2; shift 2 ;;
        --cache=*) cache=${1#*=}; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
case "$arch" in
    arm64|amd64) ;;
    "") usage >&2; die "--arch is required: arm64 (a Raspberry Pi) or amd64" ;;
    *) die "--arch $arch: not supported (arm64 or amd64)" ;;
esac
# Relative paths are the caller's.
absolute() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
[ -z "$binary" ] || { binary=$(absolute "$binary"); [ -x "$binary" ] || die "--binary $binary: no such executable"; }
[ -z "$output" ] || output=$(absolute "$output")
[ -z "$cache" ] || cache=$(absolute "$cache")
cd "$(dirname -- "$0")/.."
repo=$PWD
output=${output:-$repo/dist}
if [ -z "$cache" ]; then
    if [ "$(id -u)" = 0 ]; then cache=/var/cache/gyrogate-package; else cache=$repo/.package-cache; fi
fi

if [ -z "$version" ]; then
    version=$(sed -n 's/^ *static let version = "\(.*\)"$/\1/p' Sources/gyrogate/Gyrogate.swift)
    [ -n "$version" ] || die "no version in Sources/gyrogate/Gyrogate.swift (static let version = \"...\"); pass --version"
fi
case "$version" in [0-9]*) ;; *) die "--version $version: a Debian version starts with a digit" ;; esac

for tool in dpkg-deb readelf gzip; do
    command -v "$tool" >/dev/null || die "$tool not found: apt-get install dpkg-dev binutils gzip"
done

work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT

# sync_sources DEST: the repository's files (tracked and new, not ignored ones; Package.resolved
# too, so that every toolchain builds the same dependency versions) in DEST, writing only those
# whose content differs. A build folder kept beside DEST then stays valid from run to run and
# from clone to clone (a fresh clone's files are all new to it by their times).
sync_sources() {
    local dest=$1 stage=$work/sources file
    rm -rf -- "$stage" && mkdir -p -- "$stage" "$dest"
    { git ls-files -co --exclude-standard -z; [ ! -f Package.resolved ] || printf 'Package.resolved\0'; } \
        | tar -c --null -T - -f - | tar -x -C "$stage" -f - || die "could not copy the sources into $stage"
    (cd "$stage" && find . -type f -print0) | while IFS= read -r -d '' file; do
        cmp -s -- "$stage/$file" "$dest/$file" || { mkdir -p -- "$(dirname -- "$dest/$file")" && cp -f -- "$stage/$file" "$dest/$file"; }
    done
    (cd "$dest" && find . -type f -print0) | while IFS= read -r -d '' file; do
        [ -e "$stage/$file" ] || rm -f -- "$dest/$file"
    done
}

# ---------------------------------------------------------------------------------------------
# The binary.
if [ -z "$binary" ]; then
    case "$arch" in
        arm64)
            # shellcheck source=deploy/package-arm64.sh
            . deploy/package-arm64.sh
            build_arm64 "$cache" "$work/gyrogate"
            binary=$work/gyrogate
            ;;
        amd64)
            [ "$(uname -m)" = x86_64 ] || die "--arch amd64 builds natively: this machine is $(uname -m)"
            command -v swift >/dev/null || die "swift not found: --arch amd64 builds with this machine's Swift 6.3"
            sync_sources "$cache/amd64/src"
            note "bash deploy/release-build.sh in $cache/amd64 (this machine's Swift)"
            (cd "$cache/amd64/src" && bash deploy/release-build.sh --scratch-path "$cache/amd64/scratch") 2>&1 \
                | { grep -vE '^\[[0-9]+/[0-9]+\]' || true; } || die "swift build failed (above)"
            binary="$(cd "$cache/amd64/src" && bash deploy/release-build.sh --scratch-path "$cache/amd64/scratch" --show-bin-path)/gyrogate"
            ;;
    esac
fi
machine=$(readelf -h -- "$binary" | sed -n 's/^ *Machine: *//p')
case "$arch:$machine" in
    arm64:AArch64|amd64:*X86-64*) ;;
    *) die "$binary is for '$machine', not $arch" ;;
esac

# ---------------------------------------------------------------------------------------------
# Depends: the packages of the shared libraries the binary names, and the newest glibc symbol
# version it uses (what dpkg-shlibdeps would find, without needing the arm64 libraries
# installed here). tzdata: time zones are read from /usr/share/zoneinfo.
depends=()
glibc=$(readelf --dyn-syms -W -- "$binary" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n1)
[ -n "$glibc" ] || die "$binary uses no versioned glibc symbol: is it a dynamic gyrogate?"
for library in $(readelf -d -- "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    case "$library" in
        libc.so.6|libm.so.6|libpthread.so.0|libdl.so.2|librt.so.1|ld-linux*) package="libc6 (>= $glibc)" ;;
        libsqlite3.so.0) package=libsqlite3-0 ;;
        libmosquitto.so.1) package=libmosquitto1 ;;
        libstdc++.so.6) package=libstdc++6 ;;
        libgcc_s.so.1) package=libgcc-s1 ;;
        *) die "$binary needs $library, which $me does not know the package of: add it to the list" ;;
    esac
    case " ${depends[*]-} " in *" $package "*) ;; *) depends+=("$package") ;; esac
done
case " ${depends[*]} " in *" libc6 "*) ;; *) depends+=("libc6 (>= $glibc)") ;; esac
depends+=(tzdata)
depends_line=$(printf '%s, ' "${depends[@]}"); depends_line=${depends_line%, }

# ---------------------------------------------------------------------------------------------
# The tree: the same files install.sh installs, with prefix /usr and the unit where packages
# put theirs.
root=$work/root
doc=$root/usr/share/doc/gyrogate
note "staging gyrogate $version for $arch"
install -D -m 0755 -- "$binary" "$root/usr/bin/gyrogate"
install -d -m 0755 "$doc/docs" "$doc/mosquitto"
install -m 0644 README.md "$doc/README.md"
install -m 0644 docs/*.md "$doc/docs/"
install -m 0644 deploy/mosquitto/*.conf "$doc/mosquitto/"
install -m 0644 deploy/debian/copyright "$doc/copyright"
sed -e "s/@VERSION@/$version/" -e "s/@DATE@/$(date -R -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")/" \
    deploy/debian/changelog | gzip -9n > "$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"
install -d -m 0755 "$root/usr/lib/systemd/system"
sed -e "s#/usr/local/bin/gyrogate#/usr/bin/gyrogate#g" -e "s#/usr/local/share/doc/gyrogate#/usr/share/doc/gyrogate#g" \
    deploy/gyrogate.service > "$root/usr/lib/systemd/system/gyrogate.service"
grep -q '^ExecStart=/usr/bin/gyrogate run ' "$root/usr/lib/systemd/system/gyrogate.service" \
    || die "deploy/gyrogate.service: no ExecStart=/usr/local/bin/gyrogate run ... line to point at /usr/bin/gyrogate"
chmod 0644 "$root/usr/lib/systemd/system/gyrogate.service"
# The configuration: a conffile, which dpkg never overwrites once the administrator edited it.
# postinst gives it to the group gyrogate (which does not exist yet while dpkg unpacks).
install -d -m 0755 "$root/etc/gyrogate"
(. deploy/system-setup.sh && gyrogate_system_config < config.json > "$root/etc/gyrogate/config.json") \
    || die "could not make /etc/gyrogate/config.json from config.json (above)"
chmod 0644 "$root/etc/gyrogate/config.json"

# The control files; the maintainer scripts carry deploy/system-setup.sh where they say
# #SYSTEM-SETUP#.
control=$root/DEBIAN
install -d -m 0755 "$control"
installed_kb=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@DEPENDS@/$depends_line/" \
    -e "s/@INSTALLED_SIZE@/$installed_kb/" deploy/debian/control > "$control/control"
echo /etc/gyrogate/config.json > "$control/conffiles"
for script in postinst prerm postrm; do
    awk -v setup=deploy/system-setup.sh '
        /^#SYSTEM-SETUP#$/ { while ((getline line < setup) > 0) print line; next }
        { print }' "deploy/debian/$script" > "$control/$script"
    chmod 0755 "$control/$script"
done
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) > "$control/md5sums"
chmod 0644 "$control/control" "$control/conffiles" "$control/md5sums"

mkdir -p -- "$output"
deb=$output/gyrogate_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null || die "dpkg-deb --build failed (above)"
echo "package: $deb"
echo "size:    $(stat -c %s -- "$deb") bytes ($(du -h -- "$deb" | cut -f1)); binary $(stat -c %s -- "$binary") bytes"
echo "depends: $depends_line"
