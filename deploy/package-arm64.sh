# The arm64 build of deploy/package.sh (sourced by it): Debian's Swift cross-compiles gyrogate
# for aarch64 with a Swift SDK made from Debian trixie's arm64 packages. Everything comes from
# Debian's archive:
# - the toolchain: a Debian sid chroot (amd64) with swiftlang. Trixie's own swiftlang (6.0) is
#   too old for gyrogate's dependencies; sid's Release file has outlived its Valid-Until date on
#   the mirror, hence Check-Valid-Until false;
# - the SDK's sysroot: trixie's arm64 libc6-dev, libstdc++-14-dev, libsqlite3-dev,
#   libmosquitto-dev, libbluetooth-dev, extracted (nothing runs), plus the aarch64 Swift runtime
#   and static libraries out of sid's arm64 swiftlang .deb.
# Both are kept in the cache folder and remade only when their recipe below changes.

debian_mirror=${GYROGATE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
toolchain_packages=swiftlang,ca-certificates,git,pkgconf,libsqlite3-dev,libmosquitto-dev,file
sysroot_packages=libc6-dev,libstdc++-14-dev,libsqlite3-dev,libmosquitto-dev,libbluetooth-dev
sdk_name=gyrogate-debian-aarch64
sdk_triple=aarch64-unknown-linux-gnu
# Inside the chroot.
sdk_bundle=/root/.swiftpm/swift-sdks/$sdk_name.artifactbundle
sdk_dir=$sdk_bundle/$sdk_name/$sdk_triple

# in_chroot DIR COMMAND...: runs COMMAND in the chroot DIR with /proc (the Swift driver finds
# its runtime through /proc/self/exe), /dev and the folders named in $chroot_binds (read-only,
# at the same paths), in a mount namespace of its own, so that nothing stays mounted when it
# ends, however it ends.
chroot_binds=""
in_chroot() {
    local dir=$1; shift
    cp -L /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
    unshare --mount --propagation private -- sh -c '
        dir=$1 binds=$2; shift 2
        mount -t proc proc "$dir/proc" && mount --rbind /dev "$dir/dev" || exit 1
        for bind in $binds; do
            mkdir -p "$dir$bind" && mount --bind "$bind" "$dir$bind" && mount -o remount,bind,ro "$dir$bind" || exit 1
        done
        exec chroot "$dir" "$@"' \
        in_chroot "$dir" "$chroot_binds" env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"
}

# share_git_rewrites CHROOT: SwiftPM fetches the dependencies with git. Where this machine's git
# rewrites their URLs to local mirrors (url.<path>.insteadOf in its system or global
# configuration), the chroot's git gets the same rewrites and the mirrors are bound into it.
share_git_rewrites() {
    local chroot=$1 key value base
    : > "$chroot/etc/gitconfig"
    chroot_binds=""
    while read -r key value; do
        base=${key#url.}; base=${base%.insteadof}
        git config -f "$chroot/etc/gitconfig" --add "url.$base.insteadOf" "$value"
        case "$base" in
            /*) case " $chroot_binds " in *" ${base%/} "*) ;; *) chroot_binds="$chroot_binds ${base%/}" ;; esac ;;
        esac
    done < <(git config --get-regexp '^url\..*\.insteadof$' || true)
    # Mirrors are owned by another user than the chroot's root.
    git config -f "$chroot/etc/gitconfig" --add safe.directory '*'
}

# ensure_toolchain CACHE: the sid chroot with swiftlang, and the SDK installed in it.
ensure_toolchain() {
    local cache=$1 dir=$1/toolchain-sid
    local recipe="sid $toolchain_packages; sysroot trixie $sysroot_packages; sdk $sdk_name v1"
    if [ -f "$dir/.gyrogate-recipe" ] && [ "$(cat "$dir/.gyrogate-recipe")" = "$recipe" ]; then
        note "toolchain: reusing $dir ($(in_chroot "$dir" swift --version 2>&1 | head -n1))"
        return 0
    fi
    [ "$(id -u)" = 0 ] || die "making the arm64 toolchain needs root (chroot, mmdebstrap); run with sudo"
    for tool in mmdebstrap unshare; do
        command -v "$tool" >/dev/null || die "$tool not found: apt-get install mmdebstrap"
    done
    mkdir -p -- "$cache"
    rm -rf -- "$dir" "$dir.tmp"
    note "toolchain: Debian sid with swiftlang in $dir (mmdebstrap; about 3.3 GB, minutes)"
    mmdebstrap --quiet --variant=apt --mode=root --include="$toolchain_packages" \
        --aptopt='Acquire::Check-Valid-Until "false"' sid "$dir.tmp" "$debian_mirror" \
        || die "mmdebstrap could not make the sid chroot (network? the mirror $debian_mirror?)"
    make_sdk "$cache" "$dir.tmp"
    echo "$recipe" > "$dir.tmp/.gyrogate-recipe"
    mv -- "$dir.tmp" "$dir"
}

# make_sdk CACHE CHROOT: the Swift SDK bundle for aarch64, installed in CHROOT.
make_sdk() {
    local cache=$1 chroot=$2
    local sysroot=$chroot$sdk_dir/sysroot
    note "sysroot: trixie arm64 $sysroot_packages"
    mkdir -p -- "$(dirname -- "$sysroot")"
    mmdebstrap --quiet --variant=extract --mode=root --architectures=arm64 --include="$sysroot_packages" \
        trixie "$sysroot" "$debian_mirror" || die "mmdebstrap could not extract the trixie arm64 sysroot"
    # An extracted root lacks the merged-/usr links that the packages' own scripts would make.
    local link
    for link in lib bin sbin; do [ -e "$sysroot/$link" ] || ln -s "usr/$link" "$sysroot/$link"; done

    note "sysroot: the aarch64 Swift runtime from sid's swiftlang:arm64"
    in_chroot "$chroot" sh -c 'dpkg --add-architecture arm64 && apt-get -qq -o Acquire::Check-Valid-Until=false update \
        && cd /tmp && apt-get -qq download swiftlang:arm64 && dpkg-deb -x swiftlang_*_arm64.deb /tmp/swiftlang-arm64 \
        && rm -f swiftlang_*_arm64.deb' || die "could not download and unpack sid's swiftlang:arm64"
    mkdir -p -- "$sysroot/usr/libexec/swift/lib"
    local part
    for part in swift swift_static clang; do
        [ -d "$chroot/tmp/swiftlang-arm64/usr/libexec/swift/lib/$part" ] \
            || die "swiftlang:arm64 has no usr/libexec/swift/lib/$part: its layout changed"
        cp -a -- "$chroot/tmp/swiftlang-arm64/usr/libexec/swift/lib/$part" "$sysroot/usr/libexec/swift/lib/"
    done
    rm -rf -- "$chroot/tmp/swiftlang-arm64"
    ln -sfn ../libexec/swift/lib/swift "$sysroot/usr/lib/swift"
    ln -sfn ../libexec/swift/lib/swift_static "$sysroot/usr/lib/swift_static"

    # The bundle's metadata. Debian's compiler calls its own host x86_64-pc-linux-gnu.
    cat > "$chroot$sdk_bundle/info.json" <<EOF
{
  "schemaVersion": "1.0",
  "artifacts": {
    "$sdk_name": {
      "type": "swiftSDK",
      "version": "1",
      "variants": [
        { "path": "$sdk_name/$sdk_triple", "supportedTriples": ["x86_64-pc-linux-gnu", "x86_64-unknown-linux-gnu"] }
      ]
    }
  }
}
EOF
    cat > "$chroot$sdk_dir/swift-sdk.json" <<EOF
{
  "schemaVersion": "4.0",
  "targetTriples": {
    "$sdk_triple": {
      "sdkRootPath": "sysroot",
      "swiftResourcesPath": "sysroot/usr/lib/swift",
      "swiftStaticResourcesPath": "sysroot/usr/lib/swift_static",
      "toolsetPaths": ["toolset.json"]
    }
  }
}
EOF
    # lld, the toolchain's own (the sysroot has no aarch64 linker), named by its absolute path.
    cat > "$chroot$sdk_dir/toolset.json" <<EOF
{
  "schemaVersion": "1.0",
  "swiftCompiler": { "extraCLIOptions": ["-use-ld=lld"] },
  "linker": { "path": "/usr/libexec/swift/bin/ld.lld" }
}
EOF
    in_chroot "$chroot" swift sdk list 2>&1 | grep -qxF "$sdk_name" \
        || die "the chroot's swift does not list the SDK $sdk_name: $(in_chroot "$chroot" swift sdk list 2>&1)"
}

# build_arm64 CACHE OUT: the shipped build (deploy/build-pi.sh --cross) of this repository's
# files in the chroot, copied to OUT.
build_arm64() {
    local cache=$1 out=$2 dir=$1/toolchain-sid
    ensure_toolchain "$cache"
    sync_sources "$dir/build/src"
    share_git_rewrites "$dir"
    note "building in the chroot: deploy/build-pi.sh --cross $sdk_name (Swift $(in_chroot "$dir" swift --version 2>&1 | sed -n 's/.*Swift version \([0-9.]*\).*/\1/p'))"
    local sysroot=$sdk_dir/sysroot
    if ! in_chroot "$dir" env \
        PKG_CONFIG_PATH="$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig:$sysroot/usr/share/pkgconfig" \
        PKG_CONFIG_SYSROOT_DIR="$sysroot" \
        GYROGATE_STATIC_LIBSTDCXX="$sysroot/usr/lib/gcc/aarch64-linux-gnu/14/libstdc++.a" \
        bash -c 'cd /build/src && bash deploy/build-pi.sh --cross "$1" --scratch-path /build/scratch-arm64 --output /build/gyrogate' \
        build "$sdk_name" 2>&1 | { grep -vE '^\[[0-9]+/[0-9]+\]' || true; }; then
        die "the arm64 build failed (above)"
    fi
    cp -- "$dir/build/gyrogate" "$out"
}
