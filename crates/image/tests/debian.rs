//! The root filesystem built from Debian's packages: journalctl and its whole library closure are
//! there and run in the tree (chroot), every package a file came from has its dpkg record and
//! copyright file, and the generated files say what the image promises.
//!
//! Needs `apt-get download` access to Debian's archive (and package lists: `apt-get update`), and
//! root for the chroot.

use std::path::Path;
use std::process::Command;

use podcoroner_image::{Node, Rootfs};

fn file_text(fs: &Rootfs, path: &str) -> String {
    match fs.get(path) {
        Some(Node::File {
            content: podcoroner_image::Content::Bytes(bytes),
            ..
        }) => String::from_utf8_lossy(bytes).into_owned(),
        other => panic!("{path}: {other:?}"),
    }
}

#[test]
fn the_tree_holds_journalctl_and_its_libraries_and_they_run() {
    // The test binary stands in for podcoroner: a dynamically linked Rust executable.
    let exe = std::env::current_exe().unwrap();
    let fs = Rootfs::from_debian(&exe).unwrap_or_else(|e| panic!("{e}"));

    assert!(matches!(
        fs.get(podcoroner_image::BINARY_PATH),
        Some(Node::File { mode: 0o755, .. })
    ));
    assert!(matches!(
        fs.get(podcoroner_image::JOURNALCTL_PATH),
        Some(Node::File { .. })
    ));
    // journalctl's private library, found through its DT_RUNPATH, and the loader through
    // PT_INTERP's symbolic link.
    assert!(
        fs.nodes().any(|(p, _)| p
            .starts_with("/usr/lib/x86_64-linux-gnu/systemd/libsystemd-shared-")
            || p.starts_with("/usr/lib/aarch64-linux-gnu/systemd/libsystemd-shared-")),
        "no libsystemd-shared"
    );
    assert!(matches!(
        fs.get("/lib64/ld-linux-x86-64.so.2")
            .or(fs.get("/lib/ld-linux-aarch64.so.1")),
        Some(Node::Symlink { .. })
    ));

    // Every package gave something and has its record and copyright.
    let names: Vec<&str> = fs.packages().iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, podcoroner_image::PACKAGES);
    for (name, version) in fs.packages() {
        let record = file_text(&fs, &format!("/var/lib/dpkg/status.d/{name}"));
        assert!(
            record.contains(&format!("Package: {name}\n"))
                && record.contains(&format!("Version: {version}\n")),
            "{name}: {record}"
        );
    }
    assert!(matches!(
        fs.get("/usr/share/doc/libgcc-s1"),
        Some(Node::Symlink { target }) if target == "gcc-12-base"
    ));
    assert!(matches!(
        fs.get("/usr/share/doc/gcc-12-base/copyright"),
        Some(Node::File { .. })
    ));
    assert!(matches!(
        fs.get("/usr/share/doc/systemd/copyright"),
        Some(Node::File { .. })
    ));

    let bundle = file_text(&fs, "/etc/ssl/certs/ca-certificates.crt");
    assert!(
        bundle.matches("-----BEGIN CERTIFICATE-----").count() > 100,
        "the CA bundle holds {} certificates",
        bundle.matches("-----BEGIN CERTIFICATE-----").count()
    );
    assert!(file_text(&fs, "/etc/passwd").contains("nonroot:x:65532:65532:"));
    assert!(matches!(
        fs.get("/tmp"),
        Some(Node::Dir {
            mode: 0o1777,
            owner: 0
        })
    ));
    assert!(matches!(
        fs.get("/home/nonroot"),
        Some(Node::Dir { owner: 65532, .. })
    ));
    assert!(matches!(
        fs.get("/etc/os-release"),
        Some(Node::Symlink { .. })
    ));
    // No shell, no package manager.
    for absent in ["/bin/sh", "/bin/bash", "/usr/bin/apt-get", "/usr/bin/dpkg"] {
        assert!(fs.get(absent).is_none(), "{absent} is in the image");
    }

    // The tree runs: journalctl finds every library it needs with nothing from the host.
    let dir = tempfile::tempdir().unwrap();
    fs.write_to_dir(dir.path()).unwrap();
    let out = Command::new("chroot")
        .arg(dir.path())
        .args([podcoroner_image::JOURNALCTL_PATH, "--version"])
        .output()
        .expect("chroot (needs root)");
    assert!(
        out.status.success(),
        "journalctl in the tree: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("systemd 252"));
    let os_release = std::fs::read_to_string(dir.path().join("etc/os-release")).unwrap();
    assert!(os_release.contains("ID=debian"), "{os_release}");
    assert!(Path::new(&dir.path().join("usr/local/bin/podcoroner")).is_file());
}

#[test]
fn a_library_no_package_provides_is_named() {
    // curl links libcurl, which no package of the image provides.
    let curl = Path::new("/usr/bin/curl");
    assert!(
        curl.is_file(),
        "this test uses /usr/bin/curl (Debian package curl)"
    );
    let err = Rootfs::from_debian(curl).unwrap_err().to_string();
    assert!(
        err.contains("libcurl.so.4 (needed by /usr/local/bin/podcoroner) is in none of the image's Debian packages"),
        "{err}"
    );
}
