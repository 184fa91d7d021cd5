# Shared by scripts/run and scripts/test. Source it; don't run it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Packages to build depthlens (headers and libraries it links) and to run it on a machine
# without a GPU (Mesa's lavapipe Vulkan driver).
BUILD_PACKAGES=(pkg-config libvulkan-dev libglfw3-dev glslang-dev spirv-tools libv4l-dev
                libimgui-dev libstb-dev libpng-dev libjpeg62-turbo-dev mesa-vulkan-drivers
                liblz4-dev libbz2-dev  # ROS bag chunks (bag: sources)
                libsqlite3-dev libzstd-dev zlib1g-dev  # ROS 2 recordings: rosbag2 .db3, zstd (MCAP chunks, rosbag2 compression), MCAP CRCs
                libavformat-dev libavcodec-dev libavutil-dev libswscale-dev  # Matroska in and out (mkv: sources, record --mkv)
                cyclonedds-dev cyclonedds-tools)  # ROS 2's DDS (dds: sources, publish): libddsc 0.10, idlc
# What the tests need on top: validation layers, a virtual X server, a window driver, screenshots.
TEST_PACKAGES=(vulkan-validationlayers xvfb xdotool imagemagick x11-utils)
# ffmpeg and ffprobe: the independent decoder the video and Matroska tests check against (depthlens
# itself encodes in-process through libavcodec and runs no ffmpeg); scripts/bench-convert times it.
TEST_PACKAGES+=(ffmpeg)
# gnuplot draws `bench --plot` (its test runs it).
TEST_PACKAGES+=(gnuplot-nox)
# The independent reference for ROS bags: ROS's own Python reader (with its lz4 chunks).
TEST_PACKAGES+=(python3-rosbag python3-roslz4)
# PLY files from independent writers (plyfile, trimesh from PyPI) go in a venv: scripts/ply-corpus.
TEST_PACKAGES+=(python3-venv)
# Calibration files: a ROS camera_info written by PyYAML (block style), an independent YAML writer.
TEST_PACKAGES+=(python3-yaml)
# A second host for the DDS tests: two network namespaces joined by a veth pair (ip netns, ip link).
TEST_PACKAGES+=(iproute2)
# GNU time: the hostile-input tests' peak memory of a child (TestSupport's PeakRun).
TEST_PACKAGES+=(time)

# ensure_packages PKG...: installs the Debian packages that are missing; quiet when all are there.
ensure_packages() {
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "depthlens: installing ${missing[*]}" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    if ! command -v apt-get >/dev/null; then
        echo "depthlens: apt-get not found; install these packages by hand: ${missing[*]}" >&2
        exit 1
    fi
    # Update the package lists once, then install quietly.
    $sudo apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

ensure_swift() {
    if ! command -v swift >/dev/null; then
        echo "depthlens: the Swift toolchain (swift 6) is required and was not found on PATH" >&2
        exit 1
    fi
}
