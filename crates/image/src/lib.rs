//! podcoroner's container image, built without a Docker engine.
//!
//! The image is distroless in the sense of `gcr.io/distroless`: no shell and no package manager.
//! It holds
//!
//! - the `podcoroner` binary at [`BINARY_PATH`];
//! - `journalctl` at [`JOURNALCTL_PATH`], which the journald log source runs
//!   (`kubelet_log: journald`, the shipped configuration);
//! - the shared libraries both load: their ELF `DT_NEEDED` closure, resolved through
//!   `DT_RUNPATH`/`DT_RPATH` and the loader's default directories, plus the `PT_INTERP` loader;
//! - CA certificates, `/etc/passwd` and `/etc/group` with `root` and `nonroot` ([`NONROOT_UID`]),
//!   `/etc/nsswitch.conf`, `/etc/os-release`, and the empty directories the DaemonSet mounts over;
//! - for every Debian package a file came from, its control record in
//!   `/var/lib/dpkg/status.d/<package>` (what image scanners such as Trivy and Grype read, as in
//!   distroless) and its copyright file.
//!
//! Every file but the binary comes from the Debian packages in [`PACKAGES`], fetched with
//! `apt-get download` and unpacked with `dpkg-deb`, so the image's libraries are exactly those
//! packages' versions. Building:
//!
//! 1. [`Rootfs::from_debian`] downloads and unpacks the packages and resolves the closure;
//! 2. [`write_oci_archive`] packs the tree as one reproducible layer into an OCI image archive
//!    (an OCI image layout plus Docker's `manifest.json`) that `ctr images import`,
//!    `docker load`, `podman load` and `skopeo copy oci-archive:…` accept; or
//!    [`Rootfs::write_to_dir`] writes the tree to a directory, for the Dockerfile's
//!    `FROM scratch` stage.
//!
//! `cargo xtask image` drives both (xtask/src/main.rs).

mod debian;
mod elf;
mod oci;
mod rootfs;

use std::path::PathBuf;

pub use oci::{ImageMetadata, ImageSummary, oci_arch, write_oci_archive};
pub use rootfs::{Content, Node, Rootfs};

/// Where the podcoroner binary lives in the image.
pub const BINARY_PATH: &str = "/usr/local/bin/podcoroner";
/// Where `journalctl` lives in the image (Debian bookworm's `systemd` package installs it in
/// `/bin`).
pub const JOURNALCTL_PATH: &str = "/bin/journalctl";
/// The image's `Entrypoint`.
pub const ENTRYPOINT: &[&str] = &[BINARY_PATH];
/// The image's `Cmd`: the daemon with the configuration the DaemonSet mounts from its ConfigMap.
pub const CMD: &[&str] = &["daemon", "--config", "/etc/podcoroner/config.yaml"];
/// The image's `User`. The CRI socket is `root:root 0660` on containerd and CRI-O nodes, so the
/// agent runs as uid 0 with every capability dropped (deploy/base/daemonset.yaml); where the
/// socket has a group, run as [`NONROOT_UID`] with that group as a supplemental group
/// (docs/install.md).
pub const USER: &str = "0";
/// The uid and gid of the `nonroot` user in `/etc/passwd` (distroless's `nonroot`).
pub const NONROOT_UID: u32 = 65532;
/// The port the daemon serves on in the DaemonSet (`--listen 0.0.0.0:9657`), exposed by the
/// image.
pub const HTTP_PORT: u16 = 9657;
/// `PATH` in the image: the binary's directory and journalctl's.
pub const PATH_ENV: &str = "PATH=/usr/local/bin:/usr/bin:/bin";

/// The Debian packages the image's files come from: the C runtime (`libc6`, `libgcc-s1`),
/// journalctl (`systemd`, `libsystemd-shared`) and every library journalctl links, plus
/// `ca-certificates`, `base-files` (`/etc/os-release`) and `gcc-12-base` (the copyright file of
/// `libgcc-s1`). The names are Debian 12 (bookworm)'s, the release the Dockerfile's build stage
/// and the CI machines run.
///
/// [`Rootfs::from_debian`] fails on a package none of whose files ends up in the image, and on a
/// library no package here provides, so this list is exactly what the image needs.
pub const PACKAGES: &[&str] = &[
    "base-files",
    "ca-certificates",
    "gcc-12-base",
    "libacl1",
    "libaudit1",
    "libblkid1",
    "libc6",
    "libcap-ng0",
    "libcap2",
    "libcrypt1",
    "libgcc-s1",
    "libgcrypt20",
    "libgpg-error0",
    "libip4tc2",
    "libkmod2",
    "liblz4-1",
    "liblzma5",
    "libmount1",
    "libpam0g",
    "libpcre2-8-0",
    "libseccomp2",
    "libselinux1",
    "libssl3",
    "libsystemd-shared",
    "libzstd1",
    "systemd",
];

/// Why building the image failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImageError {
    /// A command the build runs (`apt-get`, `dpkg-deb`) could not start or failed.
    #[error("`{command}` failed: {detail}{hint}")]
    CommandFailed {
        /// The command line.
        command: String,
        /// Its exit status and standard error, or why it did not start.
        detail: String,
        /// What to do about it, when known (starts with a separator).
        hint: &'static str,
    },
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// An ELF file the image needs could not be parsed.
    #[error("{}: not a readable ELF file: {detail}", path.display())]
    BadElf {
        /// The file on the build machine.
        path: PathBuf,
        /// What the parser said.
        detail: String,
    },
    /// A shared library an ELF file needs is in none of [`PACKAGES`].
    #[error(
        "{library} (needed by {needed_by}) is in none of the image's Debian packages: add the \
         package that provides it (`dpkg -S {library}`) to podcoroner_image::PACKAGES"
    )]
    UnresolvedLibrary {
        /// The `DT_NEEDED` name or `PT_INTERP` path.
        library: String,
        /// The image path of the file that needs it.
        needed_by: String,
    },
    /// A file the image is built around is in none of [`PACKAGES`].
    #[error("{path} is in none of the image's Debian packages ({})", PACKAGES.join(", "))]
    MissingFile {
        /// The image path.
        path: String,
    },
    /// A package of [`PACKAGES`] gives the image no file.
    #[error(
        "Debian package {package} gives the image no file: remove it from podcoroner_image::PACKAGES"
    )]
    UnusedPackage {
        /// The package name.
        package: String,
    },
    /// A symbolic link chain does not end, or leaves the root filesystem.
    #[error("symbolic link {path} does not resolve inside the image: {detail}")]
    BadSymlink {
        /// The image path of the link.
        path: String,
        /// What went wrong.
        detail: String,
    },
    /// Encoding the image's JSON documents failed.
    #[error("encoding {what}: {detail}")]
    Encode {
        /// Which document.
        what: &'static str,
        /// The encoder's message.
        detail: String,
    },
}

/// Shorthand for results of this crate.
pub type Result<T, E = ImageError> = std::result::Result<T, E>;

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
