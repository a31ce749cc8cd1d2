//! The lab's pause image, built locally because no registry is reachable: a static binary that
//! waits for SIGTERM or SIGINT (`gcc -static` of [`PAUSE_C`]), packed as an OCI image archive
//! (`oci-layout`, `index.json` with the `io.containerd.image.name` annotation, a manifest, a
//! config whose `Entrypoint` is `/pause`, one uncompressed tar layer) that
//! `ctr images import` accepts.
//!
//! The archive is built once per source and architecture and cached in
//! `$TMPDIR/podcoroner-test-support/pause-<key>.tar` (written to a temporary file, then renamed, so
//! parallel test processes never see half an archive). Within a process it is built at most once.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::LabError;

/// The pause program. PID 1 of a PID namespace ignores signals it has no handler for, hence the
/// handlers.
pub const PAUSE_C: &str = r#"#include <signal.h>
#include <unistd.h>

static void bye(int sig) { (void)sig; _exit(0); }

int main(void) {
    signal(SIGTERM, bye);
    signal(SIGINT, bye);
    for (;;) pause();
}
"#;

/// A built pause image archive.
#[derive(Debug, Clone)]
pub struct PauseImage {
    /// The OCI image archive, ready for `ctr images import`.
    pub archive: PathBuf,
    /// The image reference it is imported as (`io.containerd.image.name`), e.g.
    /// `localhost/podcoroner/pause:0123456789ab`.
    pub name: String,
}

/// The pause image, built (or found in the cache) on first use.
///
/// # Errors
///
/// [`LabError::PauseImageBuildFailed`] when gcc fails or the cache is not writable.
pub fn pause_image() -> Result<PauseImage, LabError> {
    static IMAGE: OnceLock<Result<PauseImage, String>> = OnceLock::new();
    IMAGE
        .get_or_init(|| build_cached().map_err(|e| e.to_string()))
        .clone()
        .map_err(|reason| LabError::PauseImageBuildFailed { reason })
}

fn oci_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

fn build_cached() -> Result<PauseImage, LabError> {
    let key = hex(&Sha256::digest(
        format!("{PAUSE_C}\n{}\nv1", oci_arch()).as_bytes(),
    ));
    let name = format!("localhost/podcoroner/pause:{}", &key[..12]);
    let cache_dir = std::env::temp_dir().join("podcoroner-test-support");
    let archive = cache_dir.join(format!("pause-{}.tar", &key[..16]));
    if archive.is_file() {
        return Ok(PauseImage { archive, name });
    }
    std::fs::create_dir_all(&cache_dir)
        .map_err(|e| fail(format!("creating {}: {e}", cache_dir.display())))?;
    let work = tempfile::Builder::new()
        .prefix("build-")
        .tempdir_in(&cache_dir)
        .map_err(|e| {
            fail(format!(
                "creating a build dir in {}: {e}",
                cache_dir.display()
            ))
        })?;
    let binary = compile(work.path())?;
    let bytes = oci_archive(&binary, &name)?;
    let tmp = work.path().join("pause.tar");
    std::fs::write(&tmp, bytes).map_err(|e| fail(format!("writing {}: {e}", tmp.display())))?;
    std::fs::rename(&tmp, &archive)
        .map_err(|e| fail(format!("renaming to {}: {e}", archive.display())))?;
    Ok(PauseImage { archive, name })
}

fn fail(reason: String) -> LabError {
    LabError::PauseImageBuildFailed { reason }
}

fn compile(dir: &Path) -> Result<Vec<u8>, LabError> {
    let source = dir.join("pause.c");
    let binary = dir.join("pause");
    std::fs::write(&source, PAUSE_C)
        .map_err(|e| fail(format!("writing {}: {e}", source.display())))?;
    let out = Command::new("gcc")
        .args(["-static", "-Os", "-s", "-o"])
        .arg(&binary)
        .arg(&source)
        .output()
        .map_err(|e| fail(format!("running gcc: {e}")))?;
    if !out.status.success() {
        return Err(fail(format!(
            "gcc -static failed ({}): {} (is libc6-dev installed?)",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    std::fs::read(&binary).map_err(|e| fail(format!("reading {}: {e}", binary.display())))
}

/// The OCI image archive holding `binary` as `/pause`, named `name`.
fn oci_archive(binary: &[u8], name: &str) -> Result<Vec<u8>, LabError> {
    let layer = tar_of(&[("pause", 0o755, binary)])?;
    let layer_digest = format!("sha256:{}", hex(&Sha256::digest(&layer)));
    let config = serde_json::to_vec(&json!({
        "architecture": oci_arch(),
        "os": "linux",
        "config": { "Entrypoint": ["/pause"], "WorkingDir": "/" },
        "rootfs": { "type": "layers", "diff_ids": [layer_digest] },
        "history": [{ "created_by": "podcoroner-test-support: gcc -static pause.c" }],
    }))
    .map_err(|e| fail(e.to_string()))?;
    let config_digest = format!("sha256:{}", hex(&Sha256::digest(&config)));
    let manifest = serde_json::to_vec(&json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": config_digest,
            "size": config.len(),
        },
        "layers": [{
            "mediaType": "application/vnd.oci.image.layer.v1.tar",
            "digest": layer_digest,
            "size": layer.len(),
        }],
    }))
    .map_err(|e| fail(e.to_string()))?;
    let manifest_digest = format!("sha256:{}", hex(&Sha256::digest(&manifest)));
    let tag = name.rsplit_once(':').map_or("latest", |(_, tag)| tag);
    let index = serde_json::to_vec(&json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": manifest_digest,
            "size": manifest.len(),
            "platform": { "architecture": oci_arch(), "os": "linux" },
            "annotations": {
                "io.containerd.image.name": name,
                "org.opencontainers.image.ref.name": tag,
            },
        }],
    }))
    .map_err(|e| fail(e.to_string()))?;
    let blob = |digest: &str| format!("blobs/sha256/{}", digest.trim_start_matches("sha256:"));
    let (layer_path, config_path, manifest_path) = (
        blob(&layer_digest),
        blob(&config_digest),
        blob(&manifest_digest),
    );
    tar_of(&[
        (
            "oci-layout",
            0o644,
            br#"{"imageLayoutVersion":"1.0.0"}"#.as_slice(),
        ),
        ("index.json", 0o644, &index),
        (&manifest_path, 0o644, &manifest),
        (&config_path, 0o644, &config),
        (&layer_path, 0o644, &layer),
    ])
}

/// A deterministic tar (mtime 0, root-owned) of regular files.
fn tar_of(files: &[(&str, u32, &[u8])]) -> Result<Vec<u8>, LabError> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, mode, data) in files {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_mode(*mode);
        header.set_size(data.len() as u64);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        builder
            .append_data(&mut header, path, *data)
            .map_err(|e| fail(format!("tar {path}: {e}")))?;
    }
    builder.into_inner().map_err(|e| fail(format!("tar: {e}")))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archive_layout_and_digests() {
        let bytes = oci_archive(b"\x7fELF fake", "localhost/podcoroner/pause:abc").unwrap();
        let mut archive = tar::Archive::new(bytes.as_slice());
        let mut files = std::collections::BTreeMap::new();
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let path = entry.path().unwrap().display().to_string();
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut data).unwrap();
            files.insert(path, data);
        }
        let index: serde_json::Value = serde_json::from_slice(&files["index.json"]).unwrap();
        let desc = &index["manifests"][0];
        assert_eq!(
            desc["annotations"]["io.containerd.image.name"],
            "localhost/podcoroner/pause:abc"
        );
        // Every blob is stored under its own digest, and sizes match.
        for (path, data) in files.iter().filter(|(p, _)| p.starts_with("blobs/")) {
            assert_eq!(
                path.trim_start_matches("blobs/sha256/"),
                hex(&Sha256::digest(data))
            );
        }
        let manifest_path = format!(
            "blobs/sha256/{}",
            desc["digest"]
                .as_str()
                .unwrap()
                .trim_start_matches("sha256:")
        );
        let manifest: serde_json::Value = serde_json::from_slice(&files[&manifest_path]).unwrap();
        assert_eq!(desc["size"], files[&manifest_path].len());
        let config_path = format!(
            "blobs/sha256/{}",
            manifest["config"]["digest"]
                .as_str()
                .unwrap()
                .trim_start_matches("sha256:")
        );
        let config: serde_json::Value = serde_json::from_slice(&files[&config_path]).unwrap();
        assert_eq!(config["config"]["Entrypoint"], json!(["/pause"]));
        assert_eq!(
            config["rootfs"]["diff_ids"][0],
            manifest["layers"][0]["digest"]
        );
        assert_eq!(files["oci-layout"], br#"{"imageLayoutVersion":"1.0.0"}"#);
    }
}
