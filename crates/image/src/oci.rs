//! The OCI image archive: one gzipped layer holding the [`Rootfs`], the image configuration, the
//! manifest and the index, laid out as an OCI image layout (image-spec `image-layout.md`) in one
//! tar file, with Docker's `manifest.json` beside it so `docker load` of any version reads it.
//!
//! Reproducible: entries are sorted, every timestamp is
//! [`ImageMetadata::created_unix_seconds`], owners are numeric, the gzip header carries no name
//! or time, and JSON keys are sorted; the same tree and metadata give the same digests.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, Write};
use std::path::Path;
use std::str::FromStr as _;

use flate2::{Compression, GzBuilder};
use oci_spec::image::{
    Arch, ConfigBuilder, Descriptor, DescriptorBuilder, HistoryBuilder, ImageConfigurationBuilder,
    ImageIndexBuilder, ImageManifestBuilder, MediaType, Os, PlatformBuilder, RootFsBuilder,
    Sha256Digest,
};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::rootfs::{Content, Node, Rootfs};
use crate::{CMD, ENTRYPOINT, HTTP_PORT, ImageError, PATH_ENV, Result, USER, hex};

/// What the image says about itself besides its tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageMetadata {
    /// The reference the archive names the image, e.g. `ghcr.io/podcoroner/podcoroner:0.1.0`
    /// (`io.containerd.image.name` in the index, `RepoTags` in `manifest.json`).
    pub reference: String,
    /// `org.opencontainers.image.version`, e.g. `0.1.0`.
    pub version: String,
    /// `org.opencontainers.image.revision`: the source commit, when known.
    pub revision: Option<String>,
    /// `org.opencontainers.image.source`: the source repository URL, when known.
    pub source: Option<String>,
    /// The time of every file in the layer and the configuration's `created`, in Unix seconds
    /// (`SOURCE_DATE_EPOCH`, or the commit time, for a reproducible image).
    pub created_unix_seconds: i64,
}

/// What [`write_oci_archive`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageSummary {
    /// `sha256:<hex>` of the image manifest: the image's digest, as a registry reports it.
    pub manifest_digest: String,
    /// `sha256:<hex>` of the image configuration (Docker's "image ID").
    pub config_digest: String,
    /// `sha256:<hex>` of the gzipped layer.
    pub layer_digest: String,
    /// `sha256:<hex>` of the uncompressed layer tar (the configuration's `rootfs.diff_ids[0]`).
    pub layer_diff_id: String,
    /// Size of the gzipped layer in bytes.
    pub layer_bytes: u64,
    /// Size of the uncompressed layer tar in bytes.
    pub uncompressed_layer_bytes: u64,
    /// Number of entries (files, directories, links) in the layer.
    pub entries: usize,
    /// Size of the archive file in bytes.
    pub archive_bytes: u64,
}

/// The OCI (GOARCH) name of this machine's architecture: `amd64`, `arm64`, ….
pub fn oci_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

/// Writes `fs` as a one-layer image for this machine's architecture into the archive `out`
/// (written beside it under a temporary name, then renamed).
///
/// # Errors
/// [`ImageError::Io`] naming the file that could not be read or written;
/// [`ImageError::Encode`] when a JSON document cannot be built.
pub fn write_oci_archive(fs: &Rootfs, meta: &ImageMetadata, out: &Path) -> Result<ImageSummary> {
    let dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ImageError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let mtime = u64::try_from(meta.created_unix_seconds).unwrap_or(0);

    // The layer, into a temporary file, hashed compressed and uncompressed on the way.
    let mut layer_file = tempfile::tempfile_in(dir).map_err(io(dir))?;
    let (layer_diff_id, uncompressed_layer_bytes, layer_digest, layer_bytes, entries) = {
        let compressed = Hashing::new(BufWriter::new(&mut layer_file));
        let gz = GzBuilder::new().write(compressed, Compression::new(6));
        let mut tar = tar::Builder::new(Hashing::new(gz));
        let entries = append_tree(&mut tar, fs, mtime)?;
        let raw = tar.into_inner().map_err(io(out))?;
        let (gz, diff_id, raw_bytes) = raw.finish();
        let compressed = gz.finish().map_err(io(out))?;
        let (mut buf, digest, gz_bytes) = compressed.finish();
        buf.flush().map_err(io(out))?;
        (diff_id, raw_bytes, digest, gz_bytes, entries)
    };

    let config = canonical_json(&image_config(meta, &layer_diff_id)?, "image configuration")?;
    let config_digest = sha256(&config);
    let manifest = ImageManifestBuilder::default()
        .schema_version(2u32)
        .media_type(MediaType::ImageManifest)
        .config(descriptor(
            MediaType::ImageConfig,
            &config_digest,
            config.len() as u64,
        )?)
        .layers(vec![descriptor(
            MediaType::ImageLayerGzip,
            &layer_digest,
            layer_bytes,
        )?])
        .build()
        .map_err(encode("image manifest"))?;
    let manifest = canonical_json(&manifest, "image manifest")?;
    let manifest_digest = sha256(&manifest);
    let tag = meta
        .reference
        .rsplit_once(':')
        .filter(|(_, t)| !t.contains('/'))
        .map_or("latest", |(_, t)| t);
    let mut index_entry = descriptor(
        MediaType::ImageManifest,
        &manifest_digest,
        manifest.len() as u64,
    )?;
    index_entry.set_annotations(Some(HashMap::from([
        (
            "io.containerd.image.name".to_owned(),
            meta.reference.clone(),
        ),
        (
            "org.opencontainers.image.ref.name".to_owned(),
            tag.to_owned(),
        ),
    ])));
    index_entry.set_platform(Some(
        PlatformBuilder::default()
            .architecture(Arch::from(oci_arch()))
            .os(Os::Linux)
            .build()
            .map_err(encode("platform"))?,
    ));
    let index = ImageIndexBuilder::default()
        .schema_version(2u32)
        .media_type(MediaType::ImageIndex)
        .manifests(vec![index_entry])
        .build()
        .map_err(encode("image index"))?;
    let index = canonical_json(&index, "image index")?;
    let blob = |digest: &str| format!("blobs/sha256/{}", digest.trim_start_matches("sha256:"));
    let docker_manifest = canonical_json(
        &serde_json::json!([{
            "Config": blob(&config_digest),
            "RepoTags": [meta.reference],
            "Layers": [blob(&layer_digest)],
        }]),
        "manifest.json",
    )?;

    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io(dir))?;
    {
        let mut archive = tar::Builder::new(BufWriter::new(tmp.as_file_mut()));
        let small: [(&str, &[u8]); 4] = [
            ("oci-layout", br#"{"imageLayoutVersion":"1.0.0"}"#),
            ("index.json", &index),
            ("manifest.json", &docker_manifest),
            ("blobs/", &[]),
        ];
        for (name, bytes) in small {
            let dir_entry = name.ends_with('/');
            archive_entry(&mut archive, name, bytes, mtime, dir_entry).map_err(io(out))?;
        }
        archive_entry(&mut archive, "blobs/sha256/", &[], mtime, true).map_err(io(out))?;
        // Blobs in digest order, the layer streamed from its temporary file.
        let mut blobs = [
            (config_digest.clone(), None),
            (manifest_digest.clone(), None),
            (layer_digest.clone(), Some(layer_bytes)),
        ];
        blobs.sort();
        for (digest, streamed) in blobs {
            let name = blob(&digest);
            match streamed {
                Some(size) => {
                    layer_file.rewind().map_err(io(out))?;
                    let mut header = header(mtime, 0o644, 0);
                    header.set_size(size);
                    archive
                        .append_data(&mut header, &name, (&mut layer_file).take(size))
                        .map_err(io(out))?;
                }
                None => {
                    let bytes = if digest == config_digest {
                        &config
                    } else {
                        &manifest
                    };
                    archive_entry(&mut archive, &name, bytes, mtime, false).map_err(io(out))?;
                }
            }
        }
        archive
            .into_inner()
            .and_then(|mut w| w.flush())
            .map_err(io(out))?;
    }
    {
        use std::os::unix::fs::PermissionsExt as _;
        // A temporary file is 0600; an image archive is for anyone to load.
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(io(out))?;
    }
    tmp.as_file().sync_all().map_err(io(out))?;
    let archive_bytes = tmp.as_file().metadata().map_err(io(out))?.len();
    tmp.persist(out).map_err(|e| ImageError::Io {
        path: out.to_path_buf(),
        source: e.error,
    })?;
    Ok(ImageSummary {
        manifest_digest,
        config_digest,
        layer_digest,
        layer_diff_id,
        layer_bytes,
        uncompressed_layer_bytes,
        entries,
        archive_bytes,
    })
}

/// The image configuration: [`ENTRYPOINT`], [`CMD`], [`USER`], [`PATH_ENV`], the exposed
/// [`HTTP_PORT`], `SIGTERM` (the daemon drains and saves on it) and the OCI labels.
fn image_config(
    meta: &ImageMetadata,
    diff_id: &str,
) -> Result<oci_spec::image::ImageConfiguration> {
    let created = jiff::Timestamp::from_second(meta.created_unix_seconds)
        .map_err(|e| ImageError::Encode {
            what: "created",
            detail: e.to_string(),
        })?
        .to_string();
    let mut labels = HashMap::from([
        ("org.opencontainers.image.title", "podcoroner".to_owned()),
        (
            "org.opencontainers.image.description",
            "Node-local Kubernetes pod-lifecycle forensics: leaked pod sandboxes, static and mirror pod drift, stuck pod workers".to_owned(),
        ),
        ("org.opencontainers.image.version", meta.version.clone()),
        ("org.opencontainers.image.licenses", "Apache-2.0".to_owned()),
        ("org.opencontainers.image.created", created.clone()),
    ]);
    if let Some(revision) = &meta.revision {
        labels.insert("org.opencontainers.image.revision", revision.clone());
    }
    if let Some(source) = &meta.source {
        labels.insert("org.opencontainers.image.source", source.clone());
    }
    let config = ConfigBuilder::default()
        .user(USER)
        .env(vec![PATH_ENV.to_owned()])
        .entrypoint(
            ENTRYPOINT
                .iter()
                .map(|s| (*s).to_owned())
                .collect::<Vec<_>>(),
        )
        .cmd(CMD.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
        .exposed_ports(vec![format!("{HTTP_PORT}/tcp")])
        .working_dir("/")
        .stop_signal("SIGTERM")
        .labels(
            labels
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect::<HashMap<_, _>>(),
        )
        .build()
        .map_err(encode("image configuration"))?;
    ImageConfigurationBuilder::default()
        .created(created.clone())
        .architecture(Arch::from(oci_arch()))
        .os(Os::Linux)
        .config(config)
        .rootfs(
            RootFsBuilder::default()
                .typ("layers")
                .diff_ids(vec![diff_id.to_owned()])
                .build()
                .map_err(encode("rootfs"))?,
        )
        .history(vec![
            HistoryBuilder::default()
                .created(created)
                .created_by("podcoroner-image: podcoroner, journalctl and their libraries from Debian packages (cargo xtask image)")
                .build()
                .map_err(encode("history"))?,
        ])
        .build()
        .map_err(encode("image configuration"))
}

/// Appends every node of `fs` to the layer; returns how many.
fn append_tree<W: Write>(tar: &mut tar::Builder<W>, fs: &Rootfs, mtime: u64) -> Result<usize> {
    let mut n = 0;
    for (path, node) in fs.nodes() {
        let rel = path.trim_start_matches('/');
        let fail = |source| ImageError::Io {
            path: path.into(),
            source,
        };
        match node {
            Node::Dir { mode, owner } => {
                let mut h = header(mtime, *mode, *owner);
                h.set_entry_type(tar::EntryType::Directory);
                h.set_size(0);
                tar.append_data(&mut h, format!("{rel}/"), std::io::empty())
                    .map_err(fail)?;
            }
            Node::File { content, mode } => {
                let mut h = header(mtime, *mode, 0);
                match content {
                    Content::Bytes(bytes) => {
                        h.set_size(bytes.len() as u64);
                        tar.append_data(&mut h, rel, bytes.as_slice())
                            .map_err(fail)?;
                    }
                    Content::Host(src) => {
                        let io = |source| ImageError::Io {
                            path: src.clone(),
                            source,
                        };
                        let file = File::open(src).map_err(io)?;
                        let len = file.metadata().map_err(io)?.len();
                        h.set_size(len);
                        tar.append_data(&mut h, rel, file.take(len)).map_err(io)?;
                    }
                }
            }
            Node::Symlink { target } => {
                let mut h = header(mtime, 0o777, 0);
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_size(0);
                tar.append_link(&mut h, rel, target).map_err(fail)?;
            }
        }
        n += 1;
    }
    Ok(n)
}

/// A GNU tar header with numeric owner `owner:owner`, `mode` and `mtime`, no user or group name.
fn header(mtime: u64, mode: u32, owner: u32) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_mtime(mtime);
    h.set_mode(mode);
    h.set_uid(u64::from(owner));
    h.set_gid(u64::from(owner));
    h.set_entry_type(tar::EntryType::Regular);
    h
}

fn archive_entry<W: Write>(
    archive: &mut tar::Builder<W>,
    name: &str,
    bytes: &[u8],
    mtime: u64,
    dir: bool,
) -> std::io::Result<()> {
    let mut h = header(mtime, if dir { 0o755 } else { 0o644 }, 0);
    if dir {
        h.set_entry_type(tar::EntryType::Directory);
    }
    h.set_size(bytes.len() as u64);
    archive.append_data(&mut h, name, bytes)
}

fn descriptor(media_type: MediaType, digest: &str, size: u64) -> Result<Descriptor> {
    let hex = digest.trim_start_matches("sha256:");
    let digest = Sha256Digest::from_str(hex).map_err(encode("digest"))?;
    DescriptorBuilder::default()
        .media_type(media_type)
        .digest(digest)
        .size(size)
        .build()
        .map_err(encode("descriptor"))
}

fn encode<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> ImageError {
    move |e| ImageError::Encode {
        what,
        detail: e.to_string(),
    }
}

/// `value` as compact JSON with every object's keys sorted (the types hold `HashMap`s, whose
/// order would otherwise change the digests from run to run).
fn canonical_json<T: serde::Serialize>(value: &T, what: &'static str) -> Result<Vec<u8>> {
    fn sorted(v: Value) -> Value {
        match v {
            Value::Object(map) => {
                let mut entries: Vec<(String, Value)> = map.into_iter().collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
            }
            Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
            other => other,
        }
    }
    let value = serde_json::to_value(value).map_err(encode(what))?;
    serde_json::to_vec(&sorted(value)).map_err(encode(what))
}

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(bytes)))
}

/// A writer that hashes (SHA-256) and counts what passes through it.
struct Hashing<W> {
    inner: W,
    hasher: Sha256,
    bytes: u64,
}

impl<W> Hashing<W> {
    fn new(inner: W) -> Self {
        Hashing {
            inner,
            hasher: Sha256::new(),
            bytes: 0,
        }
    }

    /// The inner writer, `sha256:<hex>` of what was written, and its length.
    fn finish(self) -> (W, String, u64) {
        (
            self.inner,
            format!("sha256:{}", hex(&self.hasher.finalize())),
            self.bytes,
        )
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::io::Read as _;

    use super::*;

    fn small_tree() -> Rootfs {
        let mut fs = Rootfs::default();
        fs.add_file(
            "/usr/local/bin/podcoroner",
            Content::Bytes(b"\x7fELF-not-really".to_vec()),
            0o755,
        )
        .unwrap();
        fs.add_dir("/tmp", 0o1777, 0).unwrap();
        fs.add_dir("/home/nonroot", 0o700, 65532).unwrap();
        fs.add_symlink("/etc/os-release", "../usr/lib/os-release")
            .unwrap();
        fs.add_file(
            "/usr/lib/os-release",
            Content::Bytes(b"ID=debian\n".to_vec()),
            0o644,
        )
        .unwrap();
        fs
    }

    fn meta() -> ImageMetadata {
        ImageMetadata {
            reference: "ghcr.io/podcoroner/podcoroner:0.1.0".to_owned(),
            version: "0.1.0".to_owned(),
            revision: Some("4eb80df".to_owned()),
            source: None,
            created_unix_seconds: 1_764_000_000,
        }
    }

    /// The archive's members by name.
    fn members(path: &Path) -> BTreeMap<String, Vec<u8>> {
        let mut out = BTreeMap::new();
        let mut archive = tar::Archive::new(File::open(path).unwrap());
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let name = entry.path().unwrap().to_string_lossy().into_owned();
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).unwrap();
            out.insert(name, bytes);
        }
        out
    }

    fn json(bytes: &[u8]) -> Value {
        serde_json::from_slice(bytes).unwrap()
    }

    #[test]
    fn the_archive_is_an_oci_layout_whose_digests_check_out() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("image.tar");
        let summary = write_oci_archive(&small_tree(), &meta(), &out).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "{mode:o}");
        let m = members(&out);
        assert_eq!(json(&m["oci-layout"])["imageLayoutVersion"], "1.0.0");
        // Every blob is stored under its own digest.
        for (name, bytes) in m
            .iter()
            .filter(|(n, _)| n.starts_with("blobs/sha256/") && n.len() > 13)
        {
            assert_eq!(
                sha256(bytes).trim_start_matches("sha256:"),
                name.trim_start_matches("blobs/sha256/"),
                "{name}"
            );
        }
        let index = json(&m["index.json"]);
        let entry = &index["manifests"][0];
        assert_eq!(entry["digest"], summary.manifest_digest.as_str());
        assert_eq!(
            entry["annotations"]["io.containerd.image.name"],
            "ghcr.io/podcoroner/podcoroner:0.1.0"
        );
        assert_eq!(
            entry["annotations"]["org.opencontainers.image.ref.name"],
            "0.1.0"
        );
        assert_eq!(entry["platform"]["os"], "linux");
        let manifest = json(&m[&format!("blobs/sha256/{}", &summary.manifest_digest[7..])]);
        assert_eq!(manifest["config"]["digest"], summary.config_digest.as_str());
        assert_eq!(
            manifest["layers"][0]["digest"],
            summary.layer_digest.as_str()
        );
        assert_eq!(
            manifest["layers"][0]["mediaType"],
            "application/vnd.oci.image.layer.v1.tar+gzip"
        );
        let config = json(&m[&format!("blobs/sha256/{}", &summary.config_digest[7..])]);
        assert_eq!(
            config["config"]["Entrypoint"],
            serde_json::json!(["/usr/local/bin/podcoroner"])
        );
        assert_eq!(
            config["config"]["Cmd"],
            serde_json::json!(["daemon", "--config", "/etc/podcoroner/config.yaml"])
        );
        assert_eq!(config["config"]["User"], "0");
        assert_eq!(
            config["config"]["ExposedPorts"],
            serde_json::json!({"9657/tcp": {}})
        );
        assert_eq!(config["created"], "2025-11-24T16:00:00Z");
        assert_eq!(
            config["config"]["Labels"]["org.opencontainers.image.revision"],
            "4eb80df"
        );
        assert_eq!(
            config["rootfs"]["diff_ids"][0],
            summary.layer_diff_id.as_str()
        );
        let docker = json(&m["manifest.json"]);
        assert_eq!(
            docker[0]["RepoTags"][0],
            "ghcr.io/podcoroner/podcoroner:0.1.0"
        );
        assert_eq!(
            docker[0]["Config"],
            format!("blobs/sha256/{}", &summary.config_digest[7..])
        );

        // The layer: gunzipped, its digest is the diff ID, and it holds the tree with owners,
        // modes, times and link targets.
        let layer = &m[&format!("blobs/sha256/{}", &summary.layer_digest[7..])];
        assert_eq!(layer.len() as u64, summary.layer_bytes);
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(layer.as_slice())
            .read_to_end(&mut raw)
            .unwrap();
        assert_eq!(sha256(&raw), summary.layer_diff_id);
        assert_eq!(raw.len() as u64, summary.uncompressed_layer_bytes);
        let mut seen = Vec::new();
        for entry in tar::Archive::new(raw.as_slice()).entries().unwrap() {
            let entry = entry.unwrap();
            let h = entry.header();
            let name = entry.path().unwrap().to_string_lossy().into_owned();
            assert_eq!(h.mtime().unwrap(), 1_764_000_000, "{name}");
            seen.push((
                name,
                h.mode().unwrap(),
                h.uid().unwrap(),
                entry
                    .link_name()
                    .unwrap()
                    .map(|l| l.to_string_lossy().into_owned()),
            ));
        }
        let find = |n: &str| {
            seen.iter()
                .find(|e| e.0 == n)
                .cloned()
                .unwrap_or_else(|| panic!("{n} in {seen:?}"))
        };
        assert_eq!(find("tmp/").1, 0o1777);
        assert_eq!(find("home/nonroot/").2, 65532);
        assert_eq!(find("usr/local/bin/podcoroner").1, 0o755);
        assert_eq!(
            find("etc/os-release").3.as_deref(),
            Some("../usr/lib/os-release")
        );
        assert_eq!(seen.len(), summary.entries);
        // Parents come before children.
        let names: Vec<&str> = seen.iter().map(|e| e.0.as_str()).collect();
        assert!(
            names.iter().position(|n| *n == "usr/").unwrap()
                < names
                    .iter()
                    .position(|n| *n == "usr/local/bin/podcoroner")
                    .unwrap()
        );
    }

    #[test]
    fn the_same_tree_gives_the_same_digests_and_a_change_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let a = write_oci_archive(&small_tree(), &meta(), &dir.path().join("a.tar")).unwrap();
        let b = write_oci_archive(&small_tree(), &meta(), &dir.path().join("b.tar")).unwrap();
        assert_eq!(a, b);
        assert_eq!(
            std::fs::read(dir.path().join("a.tar")).unwrap(),
            std::fs::read(dir.path().join("b.tar")).unwrap()
        );
        let mut changed = small_tree();
        changed
            .add_file(
                "/usr/lib/os-release",
                Content::Bytes(b"ID=other\n".to_vec()),
                0o644,
            )
            .unwrap();
        let c = write_oci_archive(&changed, &meta(), &dir.path().join("c.tar")).unwrap();
        assert_ne!(a.layer_diff_id, c.layer_diff_id);
        assert_ne!(a.manifest_digest, c.manifest_digest);
        let later = ImageMetadata {
            created_unix_seconds: 1_764_000_001,
            ..meta()
        };
        let d = write_oci_archive(&small_tree(), &later, &dir.path().join("d.tar")).unwrap();
        assert_ne!(a.config_digest, d.config_digest);
    }
}
