# The arm64 build of deploy/package.sh (sourced by it): Debian's Swift cross-compiles gyrogate
# for aarch64 with a Swift SDK made from Debian trixie's arm64 packages. Everything comes from
# Debian's archive:
# - the toolchain: a Debian sid chroot (amd64) with swiftlang. Trixie's own swiftlang (6.0) is
#   too old for gyrogate's dependencies; sid's Release file has outlived its Valid-Until date on
#   the mirror, hence Check-Valid-Until false;
# - the SDK's sysroot: trixie's arm64 libc6-dev, libstdc++-14-dev, libsqlite3-dev,
#   libmosquitto-dev, libbluetooth-dev, extracted (nothing runs), plus the aarch64 Swift runtime
#   and static libraries out of sid's arm64 swiftlang .deb.
# Both are kept in the cache folder and remade only when their recipe below changes. From
# nothing, the three downloads run at once (ensure_toolchain), and each phase says its time.

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

# phase NAME COMMAND...: runs COMMAND, then says how long it took ("phase NAME: N s"), and
# returns its status. The cold build's phases are timed in its log (docs/benchmarks.md).
phase() {
    local name=$1 t0 status=0; shift
    t0=$(date +%s)
    "$@" || status=$?
    note "phase $name: $(( $(date +%s) - t0 )) s$([ "$status" = 0 ] || echo " (failed: $status)")"
    return "$status"
}

# The three downloads of a cold start are independent, and run at once: the sid toolchain
# chroot (the biggest: swiftlang amd64, 565 MB, 2.7 GB unpacked, through dpkg), the trixie arm64
# sysroot (extracted only), and sid's swiftlang:arm64 .deb (508 MB), of which only the aarch64
# runtime and static libraries are unpacked (usr/libexec/swift/lib/{swift,swift_static,clang}).
# That .deb is fetched on this machine by its own apt-get, with a private state folder and
# sid's sources (signed by Debian's archive keyring), so that the chroot needs no apt.

# make_chroot DIR: the sid toolchain chroot (essential packages, swiftlang and the build's tools;
# no Recommends, as mmdebstrap installs none).
make_chroot() {
    mmdebstrap --quiet --variant=essential --mode=root --include="$toolchain_packages" \
        --aptopt='Acquire::Check-Valid-Until "false"' sid "$1" "$debian_mirror" \
        || { echo "mmdebstrap could not make the sid chroot (network? the mirror $debian_mirror?)" >&2; return 1; }
}

# make_sysroot DIR: trixie's arm64 development packages, extracted (nothing runs).
make_sysroot() {
    local sysroot=$1 link
    mmdebstrap --quiet --variant=extract --mode=root --architectures=arm64 --include="$sysroot_packages" \
        trixie "$sysroot" "$debian_mirror" || { echo "mmdebstrap could not extract the trixie arm64 sysroot" >&2; return 1; }
    # An extracted root lacks the merged-/usr links that the packages' own scripts would make.
    for link in lib bin sbin; do [ -e "$sysroot/$link" ] || ln -s "usr/$link" "$sysroot/$link"; done
}

# fetch_swift_runtime DIR: sid's swiftlang:arm64 downloaded, its aarch64 runtime unpacked into
# DIR/usr/libexec/swift/lib (the rest of the .deb, the arm64 compiler, is not written out).
fetch_swift_runtime() {
    local dest=$1 apt=$1.apt keyring=/usr/share/keyrings/debian-archive-keyring.gpg deb part
    [ -f "$keyring" ] || { echo "$keyring missing: apt-get install debian-archive-keyring" >&2; return 1; }
    rm -rf -- "$apt" && mkdir -p -- "$apt/lists/partial" "$apt/archives/partial" "$apt/etc" "$dest"
    : > "$apt/status"
    echo "deb [arch=arm64 signed-by=$keyring] $debian_mirror sid main" > "$apt/etc/sources.list"
    local opts=(-o "Dir::Etc::SourceList=$apt/etc/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
        -o "Dir::State::Lists=$apt/lists" -o "Dir::State::status=$apt/status" -o "Dir::Cache=$apt"
        -o "Dir::Cache::archives=$apt/archives" -o APT::Architectures::=arm64
        -o Acquire::Check-Valid-Until=false -o Acquire::Languages=none -o Debug::NoLocking=true -o APT::Sandbox::User=root)
    apt-get -qq "${opts[@]}" update && (cd "$apt" && apt-get -qq "${opts[@]}" download swiftlang:arm64) \
        || { echo "could not download sid's swiftlang:arm64" >&2; return 1; }
    deb=$(ls "$apt"/swiftlang_*_arm64.deb) || return 1
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dest" ./usr/libexec/swift/lib/swift ./usr/libexec/swift/lib/swift_static \
        ./usr/libexec/swift/lib/clang || { echo "could not unpack the runtime out of $deb" >&2; return 1; }
    for part in swift swift_static clang; do
        [ -e "$dest/usr/libexec/swift/lib/$part" ] \
            || { echo "swiftlang:arm64 has no usr/libexec/swift/lib/$part: its layout changed" >&2; return 1; }
    done
    rm -rf -- "$apt"
}

# ensure_toolchain CACHE: the sid chroot with swiftlang, and the SDK installed in it.
ensure_toolchain() {
    local cache=$1 dir=$1/toolchain-sid
    local recipe="sid essential $toolchain_packages; sysroot trixie $sysroot_packages; sdk $sdk_name v2"
    if [ -f "$dir/.gyrogate-recipe" ] && [ "$(cat "$dir/.gyrogate-recipe")" = "$recipe" ]; then
        note "toolchain: reusing $dir ($(in_chroot "$dir" swift --version 2>&1 | head -n1))"
        return 0
    fi
    [ "$(id -u)" = 0 ] || die "making the arm64 toolchain needs root (chroot, mmdebstrap); run with sudo"
    for tool in mmdebstrap unshare apt-get; do
        command -v "$tool" >/dev/null || die "$tool not found: apt-get install mmdebstrap"
    done
    mkdir -p -- "$cache"
    rm -rf -- "$dir" "$dir.tmp" "$cache/sysroot.tmp" "$cache/runtime.tmp" "$cache/runtime.tmp.apt"
    note "toolchain: Debian sid with swiftlang in $dir, the trixie arm64 sysroot and sid's arm64 Swift runtime, at once (about 1.3 GB of downloads)"
    local t0 pids=() logs=() name status=0 i
    t0=$(date +%s)
    for name in chroot sysroot runtime; do
        case "$name" in
            chroot) phase "toolchain chroot (mmdebstrap sid, swiftlang)" make_chroot "$dir.tmp" >"$cache/$name.log" 2>&1 & ;;
            sysroot) phase "sysroot (mmdebstrap --variant=extract trixie arm64)" make_sysroot "$cache/sysroot.tmp" >"$cache/$name.log" 2>&1 & ;;
            runtime) phase "swiftlang:arm64 download and runtime unpack" fetch_swift_runtime "$cache/runtime.tmp" >"$cache/$name.log" 2>&1 & ;;
        esac
        pids+=($!); logs+=("$cache/$name.log")
    done
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}" || status=1
        cat -- "${logs[$i]}"; rm -f -- "${logs[$i]}"
    done
    [ "$status" = 0 ] || die "could not make the arm64 toolchain (above)"
    note "phase downloads and unpacking, all three: $(( $(date +%s) - t0 )) s"
    phase "SDK assembled" make_sdk "$cache" "$dir.tmp" || die "could not make the Swift SDK (above)"
    echo "$recipe" > "$dir.tmp/.gyrogate-recipe"
    mv -- "$dir.tmp" "$dir"
}

# make_sdk CACHE CHROOT: the Swift SDK bundle for aarch64 out of the sysroot and the runtime
# made in CACHE, installed in CHROOT.
make_sdk() {
    local cache=$1 chroot=$2
    local sysroot=$chroot$sdk_dir/sysroot
    mkdir -p -- "$(dirname -- "$sysroot")"
    mv -- "$cache/sysroot.tmp" "$sysroot"
    mkdir -p -- "$sysroot/usr/libexec/swift/lib"
    local part
    for part in swift swift_static clang; do
        mv -- "$cache/runtime.tmp/usr/libexec/swift/lib/$part" "$sysroot/usr/libexec/swift/lib/"
    done
    rm -rf -- "$cache/runtime.tmp"
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
    local sysroot=$sdk_dir/sysroot t0
    t0=$(date +%s)
    if ! in_chroot "$dir" env \
        PKG_CONFIG_PATH="$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig:$sysroot/usr/share/pkgconfig" \
        PKG_CONFIG_SYSROOT_DIR="$sysroot" \
        GYROGATE_STATIC_LIBSTDCXX="$sysroot/usr/lib/gcc/aarch64-linux-gnu/14/libstdc++.a" \
        bash -c 'cd /build/src && bash deploy/build-pi.sh --cross "$1" --scratch-path /build/scratch-arm64 --output /build/gyrogate' \
        build "$sdk_name" 2>&1 | { grep -vE '^\[[0-9]+/[0-9]+\]' || true; }; then
        die "the arm64 build failed (above)"
    fi
    note "phase swift build (cross, in the chroot): $(( $(date +%s) - t0 )) s"
    cp -- "$dir/build/gyrogate" "$out"
}
