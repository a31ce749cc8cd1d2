//! The static pod manifest directory, read as the kubelet's file source reads it
//! (`pkg/kubelet/config/file.go`, `extractFromDir` and `extractFromFile`, pinned at
//! kubernetes v1.31.0):
//!
//! - `filepath.Glob(dir, "[^.]*")`: hidden files are ignored; sub-directories are not entered
//!   ("Not recursing into manifest path").
//! - Each file holds one Pod, YAML or JSON (`tryDecodeSinglePod`): it must decode to
//!   `apiVersion: v1`, `kind: Pod`, with a name and at least one container, or the kubelet skips it
//!   ("Can't process manifest file").
//! - The namespace defaults to `default`; the pod name gets `-<node name>` appended
//!   (`applyDefaults`).
//! - Only regular files are read, at most 10 MiB each (`maxConfigLength`); anything else (a FIFO,
//!   a device) makes the kubelet fail the whole directory ("manifest path ... is not a directory
//!   or file") and is reported here without being opened, so it can never block or flood.
//! - YAML nested deeper than 10000 levels is refused, as the kubelet's decoder (`sigs.k8s.io/yaml`
//!   on `goyaml.v2`, `max_flow_level` and `max_indents`; `encoding/json`'s `maxNestingDepth`)
//!   refuses it ("exceeded max depth of 10000"). The depth is measured in one linear pass before
//!   any YAML parser sees the file, so a deep file costs its length, not its depth squared.
//! - A directory that does not exist holds no pods; one that cannot be read is an error.
//! - A file the kubelet may read but this process cannot (permission denied, an I/O error, or
//!   nesting deeper than [`MAX_PARSED_DEPTH`], which the kubelet takes and our YAML parser does
//!   not) is [`ManifestDir::unreadable`]: what it declares is unknown, not absent.

use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::Pod;
use podcoroner_core::{ManifestPod, StaticManifest, UnreadableManifest};
use serde::Deserialize;

use crate::{Error, Result};

/// The files of a manifest directory, in the kubelet's (lexical) order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestDir {
    /// The directory.
    pub path: PathBuf,
    /// False when the directory does not exist (which the kubelet treats as no static pods).
    pub exists: bool,
    /// One entry per regular, non-hidden file the kubelet reads (its pod, or why the kubelet
    /// rejects it).
    pub manifests: Vec<StaticManifest>,
    /// The files this process could not read although the kubelet may: unknown, not absent.
    pub unreadable: Vec<UnreadableManifest>,
}

/// Why one file gave no pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManifestError {
    /// The kubelet rejects the file too (malformed, not a Pod, too large, too deep): the reason.
    Rejected(String),
    /// The kubelet may read it but podcoroner cannot: the reason.
    Unreadable(String),
}

impl From<String> for ManifestError {
    fn from(reason: String) -> Self {
        ManifestError::Rejected(reason)
    }
}

impl From<&str> for ManifestError {
    fn from(reason: &str) -> Self {
        ManifestError::Rejected(reason.to_string())
    }
}

/// Reads every manifest in `dir`.
///
/// # Errors
/// [`Error::ManifestDirReadFailed`] when `dir` exists but cannot be listed. A file that cannot be
/// read or parsed is not an error: its [`StaticManifest::pod`] holds the reason.
pub fn read_dir(dir: &Path) -> Result<ManifestDir> {
    let fail = |error| Error::ManifestDirReadFailed {
        path: dir.to_path_buf(),
        error,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(ManifestDir {
                path: dir.to_path_buf(),
                exists: false,
                manifests: vec![],
                unreadable: vec![],
            });
        }
        Err(e) => return Err(fail(e)),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(fail)?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        // `os.Stat` follows symlinks, as the kubelet does.
        if let Some(bytes) = entry_bytes(&entry.path()) {
            found.push((entry.path(), bytes));
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let mut manifests = Vec::new();
    let mut unreadable = Vec::new();
    for (path, bytes) in found {
        let pod = bytes.and_then(|b| parse_file(&b));
        let path = path.display().to_string();
        match pod {
            Ok(pod) => manifests.push(StaticManifest { path, pod: Ok(pod) }),
            Err(ManifestError::Rejected(reason)) => manifests.push(StaticManifest {
                path,
                pod: Err(reason),
            }),
            Err(ManifestError::Unreadable(reason)) => {
                unreadable.push(UnreadableManifest { path, reason });
            }
        }
    }
    Ok(ManifestDir {
        path: dir.to_path_buf(),
        exists: true,
        manifests,
        unreadable,
    })
}

/// A person's name for a special file type.
fn file_kind(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    match () {
        _ if t.is_fifo() => "named pipe (FIFO)",
        _ if t.is_socket() => "unix socket",
        _ if t.is_char_device() => "character device",
        _ if t.is_block_device() => "block device",
        _ => "special file",
    }
}

/// The kubelet's limit on a manifest's size (`pkg/kubelet/config/file.go`, `maxConfigLength`).
pub const MAX_CONFIG_BYTES: u64 = 10 * 1024 * 1024;

/// Reads at most `max_bytes` of `path`, or says the file is larger, as `utilio.ReadAtMost`.
/// A file that cannot be opened or read is [`ManifestError::Unreadable`]: the kubelet runs as
/// root and may read what this process cannot.
fn read_at_most(path: &Path, max_bytes: u64) -> Result<Vec<u8>, ManifestError> {
    use std::io::Read as _;
    let unreadable =
        |e: std::io::Error| ManifestError::Unreadable(format!("cannot read file: {e}"));
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > max_bytes {
        return Err(ManifestError::Rejected(format!(
            "the file is larger than the kubelet's limit of {} MiB (maxConfigLength): it is never read",
            max_bytes / (1024 * 1024)
        )));
    }
    Ok(bytes)
}

/// The kubelet decoder's nesting limit: `goyaml.v2`'s `max_flow_level` and `max_indents`, and
/// `encoding/json`'s `maxNestingDepth`, all 10000.
pub const KUBELET_MAX_DEPTH: usize = 10_000;

/// The deepest nesting podcoroner's YAML parser takes (serde_yaml's recursion limit, 128);
/// between this and [`KUBELET_MAX_DEPTH`] a file is one the kubelet may read and we cannot.
pub const MAX_PARSED_DEPTH: usize = 128;

/// [`parse`], with the nesting depth checked first: deeper than [`KUBELET_MAX_DEPTH`] is
/// rejected as the kubelet rejects it, deeper than [`MAX_PARSED_DEPTH`] is unreadable.
pub fn parse_file(bytes: &[u8]) -> Result<ManifestPod, ManifestError> {
    check_nesting(bytes)?;
    parse(bytes).map_err(ManifestError::Rejected)
}

/// The checks [`parse_file`] makes before any YAML parser sees `bytes`: UTF-8, the kubelet's
/// nesting limit (rejected), podcoroner's parser's limits (unreadable).
pub fn check_nesting(bytes: &[u8]) -> Result<(), ManifestError> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    let n = measure(text, KUBELET_MAX_DEPTH + 1);
    match n.depth {
        d if d > KUBELET_MAX_DEPTH => Err(ManifestError::Rejected(format!(
            "yaml: exceeded max depth of {KUBELET_MAX_DEPTH}: the kubelet's decoder refuses it"
        ))),
        d if d > MAX_PARSED_DEPTH => Err(ManifestError::Unreadable(format!(
            "nested {d} levels deep: podcoroner's YAML parser reads at most {MAX_PARSED_DEPTH} \
             (the kubelet {KUBELET_MAX_DEPTH})"
        ))),
        _ if n.flow_cost > MAX_FLOW_COST => Err(ManifestError::Unreadable(format!(
            "{} flow collection tokens × levels (deep [ ] or {{ }} nesting repeated over the \
             file): more than the {MAX_FLOW_COST} podcoroner's YAML parser is given, whose time \
             grows with tokens × flow depth",
            n.flow_cost
        ))),
        _ => Ok(()),
    }
}

/// The most flow collection work a manifest may ask of serde_yaml's scanner (libyaml), which
/// re-checks every open flow level for each token: tokens inside flow collections times their
/// depth. 20 million is about half a second; a real manifest, even a large JSON one, asks for
/// well under a million.
pub const MAX_FLOW_COST: u64 = 20_000_000;

/// What [`measure`] finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nesting {
    /// An upper bound of the nesting depth (see [`nesting_depth`]).
    pub depth: usize,
    /// The sum, over the token starts inside flow collections, of their flow depth.
    pub flow_cost: u64,
}

/// An upper bound of the nesting depth of the YAML (or JSON) `text`, counted up to `stop`: see
/// [`measure`].
pub fn nesting_depth(text: &str, stop: usize) -> usize {
    measure(text, stop).depth
}

/// An upper bound of the nesting depth of the YAML (or JSON) `text`, counted up to `stop` (the
/// pass ends there), and the flow collection work it asks of a parser, in one pass: flow collections (`[`, `{` outside quoted scalars and comments) on top of block
/// collections (one level per open indentation column, per `- `, `? ` and `key: ` on a line).
/// Whatever is unsure counts: a bracket in a block plain scalar counts, a quoted scalar ends at
/// its line's end, block scalar content (`|`, `>`) is skipped only while indented as libyaml
/// reads it. The bound may be too high, never too low, which is what a limit needs.
pub fn measure(text: &str, stop: usize) -> Nesting {
    let mut max = 0;
    let mut flow = 0usize;
    let mut flow_cost = 0u64;
    // Strictly increasing indentation columns of the open block collections.
    let mut indents: Vec<usize> = Vec::new();
    // Inside a block scalar: (the parent's column, the content's indentation once known).
    let mut block_scalar: Option<(usize, Option<usize>)> = None;
    for line in text.split('\n') {
        let b = line.as_bytes();
        let indent = b.iter().take_while(|&&c| c == b' ').count();
        let blank = indent == b.len();
        if let Some((parent, content)) = block_scalar {
            match content {
                _ if blank => continue,
                Some(c) if indent >= c => continue,
                None if indent > parent => {
                    block_scalar = Some((parent, Some(indent)));
                    continue;
                }
                _ => block_scalar = None,
            }
        }
        if blank {
            continue;
        }
        if flow == 0 && b[indent] != b'#' {
            while indents.last().is_some_and(|&c| c > indent) {
                indents.pop();
            }
            if indents.last() != Some(&indent) {
                indents.push(indent);
            }
        }
        // The column of the innermost block node begun on this line: a block scalar's parent.
        let mut node_col = indent;
        let mut on_line = 0;
        let mut quote: Option<u8> = None;
        let mut i = indent;
        while i < b.len() {
            let c = b[i];
            if let Some(q) = quote {
                if c == b'\\' && q == b'"' {
                    i += 1;
                } else if c == q {
                    quote = None;
                }
                i += 1;
                continue;
            }
            let token_start =
                i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'[' | b'{' | b',' | b':');
            let then_space = b.get(i + 1).is_none_or(|&n| n == b' ' || n == b'\t');
            if flow > 0
                && (token_start || matches!(c, b'[' | b'{' | b']' | b'}' | b',' | b':'))
                && !matches!(c, b' ' | b'\t')
            {
                flow_cost += flow as u64;
            }
            match c {
                b'#' if i == 0 || matches!(b[i - 1], b' ' | b'\t') => break,
                b'"' | b'\'' if token_start => quote = Some(c),
                b'[' | b'{' => {
                    flow += 1;
                    max = max.max(indents.len() + on_line + flow);
                    if max >= stop {
                        return Nesting {
                            depth: max,
                            flow_cost,
                        };
                    }
                }
                b']' | b'}' => flow = flow.saturating_sub(1),
                b'-' | b'?' if flow == 0 && token_start && then_space => {
                    on_line += 1;
                    node_col = i;
                }
                b':' if flow == 0 && then_space => on_line += 1,
                b'|' | b'>' if flow == 0 && token_start && is_block_scalar_header(&b[i..]) => {
                    block_scalar = Some((node_col, None));
                    break;
                }
                _ if flow == 0 && token_start && !matches!(c, b' ' | b'\t') => {
                    node_col = node_col.max(i);
                }
                _ => {}
            }
            i += 1;
        }
        max = max.max(indents.len() + on_line + flow);
        if max >= stop {
            return Nesting {
                depth: max,
                flow_cost,
            };
        }
    }
    Nesting {
        depth: max,
        flow_cost,
    }
}

/// Whether `rest` (from a `|` or `>`) is a block scalar header: the indicator, chomping and
/// indentation indicators, then nothing but a comment.
fn is_block_scalar_header(rest: &[u8]) -> bool {
    let after = rest[1..]
        .iter()
        .position(|c| !matches!(c, b'-' | b'+' | b'0'..=b'9'))
        .map_or(rest.len(), |p| p + 1);
    let tail = &rest[after..];
    let text = tail.iter().position(|c| !matches!(c, b' ' | b'\t'));
    match text {
        None => true,
        Some(p) => tail[p] == b'#' && p > 0,
    }
}

/// Parses one manifest file's bytes into the static pod the kubelet would create, or the reason
/// it would reject the file (with line and column where the YAML or JSON is malformed). Call
/// [`parse_file`] on bytes of unknown nesting.
pub fn parse(bytes: &[u8]) -> Result<ManifestPod, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    // sigs.k8s.io/yaml reads the first document only; JSON is YAML.
    let first = serde_yaml::Deserializer::from_str(text)
        .next()
        .ok_or("empty file")?;
    let value = serde_yaml::Value::deserialize(first).map_err(|e| e.to_string())?;
    if value.is_null() {
        return Err("empty file".to_string());
    }
    let field = |name: &str| {
        value
            .get(name)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string()
    };
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    if kind.is_empty() {
        return Err("Object 'Kind' is missing".to_string());
    }
    if api_version != "v1" || kind != "Pod" {
        return Err(format!(
            "invalid pod: the file holds {api_version}/{kind}, not v1/Pod"
        ));
    }
    // Decode again from the text, not the value, so type errors carry their field path and line.
    let doc = serde_yaml::Deserializer::from_str(text)
        .next()
        .ok_or("empty file")?;
    let pod = Pod::deserialize(doc).map_err(|e| format!("invalid pod: {e}"))?;
    static_pod(pod)
}

/// The static pod the kubelet makes of `pod` (`applyDefaults`: the namespace defaults to
/// `default`), or why it rejects it (no name, no container).
pub fn static_pod(pod: Pod) -> Result<ManifestPod, String> {
    let name = pod.metadata.name.unwrap_or_default();
    if name.is_empty() {
        return Err("invalid pod: metadata.name: Required value".to_string());
    }
    if pod.spec.is_none_or(|s| s.containers.is_empty()) {
        return Err("invalid pod: spec.containers: Required value".to_string());
    }
    Ok(ManifestPod {
        name,
        namespace: pod
            .metadata
            .namespace
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "default".to_string()),
        uid: pod.metadata.uid.filter(|u| !u.is_empty()),
    })
}

/// One manifest file as a snapshot captures it: its bytes, or why they are not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// The file's path in the directory.
    pub path: PathBuf,
    /// Its bytes (at most [`MAX_CONFIG_BYTES`]); or why they were not read:
    /// [`ManifestError::Rejected`] for what the kubelet rejects too (a FIFO, a device, a dangling
    /// link, too large), [`ManifestError::Unreadable`] for what it may read and a snapshot may not
    /// (a link out of the directory, never followed; permission denied).
    pub content: Result<Vec<u8>, ManifestError>,
}

/// The files of `dir` the kubelet reads (non-hidden, top level, regular files), for a snapshot:
/// like [`read_dir`], except that a symbolic link is followed only when its target is inside
/// `dir`. `None` when `dir` does not exist.
///
/// # Errors
/// [`Error::ManifestDirReadFailed`] when `dir` exists but cannot be listed.
pub fn capture(dir: &Path) -> Result<Option<Vec<Captured>>> {
    let fail = |error| Error::ManifestDirReadFailed {
        path: dir.to_path_buf(),
        error,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(fail(e)),
    };
    let root = std::fs::canonicalize(dir).map_err(fail)?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(fail)?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
        // A link out of the directory is never followed; a dangling or looping one is left to
        // `entry_bytes`, as the kubelet sees it.
        if is_link
            && let Ok(target) = std::fs::canonicalize(&path)
            && !target.starts_with(&root)
        {
            out.push(Captured {
                content: Err(ManifestError::Unreadable(format!(
                    "a symbolic link to {}, outside {}: not followed into a snapshot",
                    target.display(),
                    dir.display()
                ))),
                path,
            });
            continue;
        }
        if let Some(content) = entry_bytes(&path) {
            out.push(Captured { path, content });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Some(out))
}

/// The bytes of the directory entry `path` as the kubelet's file source reads them (`os.Stat`
/// follows links); `None` for a directory, which it does not enter.
fn entry_bytes(path: &Path) -> Option<Result<Vec<u8>, ManifestError>> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => None,
        Ok(meta) if meta.is_file() => Some(read_at_most(path, MAX_CONFIG_BYTES)),
        Ok(meta) => Some(Err(ManifestError::Rejected(format!(
            "a {}, not a directory or regular file: the kubelet stops reading the whole \
             directory (\"manifest path is not a directory or file\")",
            file_kind(meta.file_type())
        )))),
        // A dangling or looping symbolic link (ELOOP is 40 on Linux): the kubelet skips it
        // ("Could not get metadata").
        Err(e) if e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(40) => {
            Some(Err(ManifestError::Rejected(format!(
                "cannot stat: {e}: the kubelet skips it (\"Could not get metadata\")"
            ))))
        }
        Err(e) => Some(Err(ManifestError::Unreadable(format!("cannot stat: {e}")))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd\n  namespace: kube-system\nspec:\n  containers:\n  - name: etcd\n    image: registry.k8s.io/etcd:3.5.15-0\n";

    #[test]
    fn parses_the_shapes_the_kubelet_accepts() {
        type Want = Result<(&'static str, &'static str, Option<&'static str>), &'static str>;
        let cases: &[(&str, Want)] = &[
            (POD, Ok(("etcd", "kube-system", None))),
            (
                r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","uid":"u-1"},"spec":{"containers":[{"name":"a","image":"b"}]}}"#,
                Ok(("web", "default", Some("u-1"))),
            ),
            (
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n  - name: a\n    image: b\n---\nkind: Junk\n",
                Ok(("x", "default", None)),
            ),
            (
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  unknownField: 1\nspec:\n  containers:\n  - {name: a, image: b}\n",
                Ok(("x", "default", None)),
            ),
            ("", Err("empty file")),
            (
                "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n",
                Err("invalid pod: the file holds v1/Service, not v1/Pod"),
            ),
            (
                "apiVersion: v1\nmetadata:\n  name: x\n",
                Err("Object 'Kind' is missing"),
            ),
            (
                "apiVersion: v1\nkind: Pod\nmetadata: {}\nspec:\n  containers: [{name: a}]\n",
                Err("invalid pod: metadata.name: Required value"),
            ),
            (
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec: {}\n",
                Err("invalid pod: spec.containers: Required value"),
            ),
        ];
        for (text, want) in cases {
            let got = parse(text.as_bytes());
            let got = got
                .as_ref()
                .map(|p| (p.name.as_str(), p.namespace.as_str(), p.uid.as_deref()));
            assert_eq!(got.map_err(String::as_str), *want, "{text}");
        }
    }

    #[test]
    fn nesting_is_bounded_as_the_kubelet_bounds_it() {
        let deep = |open: &str, close: &str, n: usize| {
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: d\n  x: {}{}\nspec:\n  containers: [{{name: a}}]\n",
                open.repeat(n),
                close.repeat(n)
            )
        };
        // The issue's files: refused as the kubelet's decoder refuses them, in linear time.
        for text in [deep("[", "]", 200_000), deep("{a: ", "}", 100_000)] {
            let started = std::time::Instant::now();
            let got = parse_file(text.as_bytes());
            assert_eq!(
                got,
                Err(ManifestError::Rejected(
                    "yaml: exceeded max depth of 10000: the kubelet's decoder refuses it"
                        .to_string()
                ))
            );
            // Not a benchmark: a quadratic parse of these files takes minutes.
            assert!(started.elapsed() < std::time::Duration::from_secs(5));
        }
        let block = format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: d\n  x:\n{}",
            (0..10_001)
                .map(|i| format!("{}- \n", " ".repeat(i)))
                .collect::<String>()
        );
        assert!(
            matches!(parse_file(block.as_bytes()), Err(ManifestError::Rejected(e)) if e.contains("max depth of 10000"))
        );
        // Deeper than our parser takes but within the kubelet's limit: unknown, not invalid.
        match parse_file(deep("[", "]", 300).as_bytes()) {
            Err(ManifestError::Unreadable(e)) => assert!(
                e.starts_with("nested 30") && e.contains("reads at most 128"),
                "{e}"
            ),
            other => panic!("{other:?}"),
        }
        // Within the depth bound, deep flow nesting repeated over a large file costs tokens ×
        // depth in libyaml: past the budget it is unknown, not parsed for seconds.
        let unit = format!("{}1{}, ", "[".repeat(120), "]".repeat(120));
        let repeated = deep("", "", 0).replace("x: ", &format!("x: [{}]", unit.repeat(5000)));
        match parse_file(repeated.as_bytes()) {
            Err(ManifestError::Unreadable(e)) => {
                assert!(e.contains("flow collection tokens"), "{e}")
            }
            other => panic!("{other:?}"),
        }
        // A large real JSON manifest (all flow) is well within it.
        let env: Vec<String> = (0..20_000)
            .map(|i| format!(r#"{{"name":"V{i}","value":"{i}"}}"#))
            .collect();
        let json = format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"big"}},"spec":{{"containers":[{{"name":"a","image":"b","env":[{}]}}]}}}}"#,
            env.join(",")
        );
        assert!(json.len() > 500_000);
        assert!(measure(&json, usize::MAX).flow_cost < MAX_FLOW_COST / 10);
        assert_eq!(parse_file(json.as_bytes()).unwrap().name, "big");
        // Real manifests are shallow, whatever their block scalars and quotes hold.
        let scripts = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd\n  annotations:\n    a: \"[[[[[[[[\"\n    b: '{{{{{{{{'\nspec:\n  containers:\n  - name: etcd\n    image: e\n    command:\n    - sh\n    - -c\n    - |\n      echo '[[[[[[[[[[[[\n        {{{{{{{{{{{{{\n      # [[[[\n    args: [\"--a=[x]\", \"b\"]  # ]]]]\n";
        assert!(
            nesting_depth(scripts, usize::MAX) < 12,
            "{}",
            nesting_depth(scripts, usize::MAX)
        );
        assert_eq!(parse_file(scripts.as_bytes()).unwrap().name, "etcd");
        assert_eq!(parse_file(POD.as_bytes()).unwrap().name, "etcd");
        assert!(nesting_depth(POD, usize::MAX) <= 6);
        // A quote does not hide what follows its line, nor a block scalar what is not its content.
        let tricky = format!("a: 'x\nb: |\n   t\n  c: {}\n", "[".repeat(200));
        assert!(nesting_depth(&tricky, usize::MAX) > 200);
    }

    #[test]
    fn a_file_we_cannot_read_is_unknown_not_invalid() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("etcd.yaml"), POD).unwrap();
        // Reading /proc/self/mem from offset 0 fails (EIO) even for root: a file the kubelet
        // may read and this process cannot.
        std::os::unix::fs::symlink("/proc/self/mem", dir.path().join("kube-apiserver.yaml"))
            .unwrap();
        std::os::unix::fs::symlink("/nonexistent", dir.path().join("dangling.yaml")).unwrap();
        let got = read_dir(dir.path()).unwrap();
        let names: Vec<_> = got
            .manifests
            .iter()
            .map(|m| (m.path.rsplit('/').next().unwrap(), m.pod.is_ok()))
            .collect();
        assert_eq!(names, vec![("dangling.yaml", false), ("etcd.yaml", true)]);
        assert!(
            got.manifests[0]
                .pod
                .as_ref()
                .unwrap_err()
                .contains("the kubelet skips it"),
            "{got:?}"
        );
        assert_eq!(got.unreadable.len(), 1, "{got:?}");
        assert!(got.unreadable[0].path.ends_with("kube-apiserver.yaml"));
        assert!(
            got.unreadable[0].reason.starts_with("cannot read file: "),
            "{:?}",
            got.unreadable
        );
    }

    #[test]
    fn malformed_yaml_names_line_and_column() {
        let err =
            parse(b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels: [a\n").unwrap_err();
        assert!(err.contains("line 5") || err.contains("line 6"), "{err}");
        let err =
            parse(b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers: 7\n")
                .unwrap_err();
        assert!(
            err.starts_with("invalid pod:") && err.contains("containers"),
            "{err}"
        );
    }

    #[test]
    fn reads_a_directory_like_the_file_source() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("etcd.yaml"), POD).unwrap();
        std::fs::write(p.join(".etcd.yaml.swp"), "junk").unwrap();
        std::fs::write(
            p.join("broken.yaml"),
            "kind: Pod\napiVersion: v1\nmetadata: [",
        )
        .unwrap();
        std::fs::create_dir(p.join("sub")).unwrap();
        std::fs::write(p.join("sub/other.yaml"), POD).unwrap();
        let status = std::process::Command::new("mkfifo")
            .arg(p.join("fifo.yaml"))
            .status()
            .unwrap();
        assert!(status.success());
        std::os::unix::fs::symlink("/dev/zero", p.join("zero.yaml")).unwrap();
        let big = format!("{POD}{}", "# padding\n".repeat(1_100_000));
        std::fs::write(p.join("huge.yaml"), big).unwrap();
        let got = read_dir(p).unwrap();
        assert!(got.exists);
        let errors: Vec<(String, String)> = got
            .manifests
            .iter()
            .filter_map(|m| {
                m.pod
                    .as_ref()
                    .err()
                    .map(|e| (m.path.rsplit('/').next().unwrap().to_string(), e.clone()))
            })
            .collect();
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(
            errors[1].0 == "fifo.yaml"
                && errors[1]
                    .1
                    .starts_with("a named pipe (FIFO), not a directory or regular file"),
            "{errors:?}"
        );
        assert!(
            errors[2].0 == "huge.yaml"
                && errors[2]
                    .1
                    .contains("larger than the kubelet's limit of 10 MiB"),
            "{errors:?}"
        );
        assert!(
            errors[3].0 == "zero.yaml"
                && errors[3]
                    .1
                    .starts_with("a character device, not a directory or regular file"),
            "{errors:?}"
        );
        for name in ["fifo.yaml", "zero.yaml", "huge.yaml"] {
            std::fs::remove_file(p.join(name)).unwrap();
        }
        let got = read_dir(p).unwrap();
        let names: Vec<_> = got
            .manifests
            .iter()
            .map(|m| m.path.rsplit('/').next().unwrap().to_string())
            .collect();
        assert_eq!(names, vec!["broken.yaml", "etcd.yaml"]);
        assert!(got.manifests[0].pod.is_err());
        assert_eq!(got.manifests[1].pod.as_ref().unwrap().name, "etcd");

        let missing = read_dir(&p.join("nope")).unwrap();
        assert!(!missing.exists && missing.manifests.is_empty());
        let not_dir = read_dir(&p.join("etcd.yaml")).unwrap_err();
        assert!(not_dir.to_string().contains("etcd.yaml"), "{not_dir}");
    }
}
