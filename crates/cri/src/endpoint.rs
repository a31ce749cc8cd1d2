//! Runtime endpoint resolution, the way crictl does it.
//!
//! Precedence (crictl `cmd/crictl/main.go`, `getRuntimeService` and the `--runtime-endpoint` flag
//! bound to `CONTAINER_RUNTIME_ENDPOINT`):
//!
//! 1. the explicit endpoint (a command-line flag),
//! 2. the environment variable `CONTAINER_RUNTIME_ENDPOINT`,
//! 3. `runtime-endpoint` in the crictl config file (`/etc/crictl.yaml`, or `$CRI_CONFIG_FILE`),
//! 4. the first of [`DEFAULT_ENDPOINTS`] whose socket exists.
//!
//! Endpoints given explicitly (steps 1–3) are used even when the socket does not exist, so that
//! the connection error names them; only the defaults are probed. An empty value counts as
//! unset. An endpoint is `unix:///absolute/path` or a bare `/absolute/path` (which cri-client
//! also accepts, with a deprecation warning); other schemes are rejected.
//!
//! [`resolve`] is pure: it takes the environment value, the crictl config contents and an
//! "exists" predicate. [`resolve_from_system`] reads the real ones.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The endpoints crictl probes, in order, when none is configured: containerd, CRI-O,
/// cri-dockerd.
pub const DEFAULT_ENDPOINTS: [&str; 3] = [
    "unix:///run/containerd/containerd.sock",
    "unix:///run/crio/crio.sock",
    "unix:///var/run/cri-dockerd.sock",
];

/// The environment variable crictl binds to `--runtime-endpoint`.
pub const ENV_RUNTIME_ENDPOINT: &str = "CONTAINER_RUNTIME_ENDPOINT";

/// The environment variable crictl binds to `--config`.
pub const ENV_CRICTL_CONFIG: &str = "CRI_CONFIG_FILE";

/// crictl's default config file.
pub const DEFAULT_CRICTL_CONFIG: &str = "/etc/crictl.yaml";

/// Which precedence step produced an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointSource {
    /// The explicit endpoint (command-line flag).
    Flag,
    /// `CONTAINER_RUNTIME_ENDPOINT`.
    Env,
    /// `runtime-endpoint` in the crictl config file.
    CrictlConfig,
    /// The first existing socket of [`DEFAULT_ENDPOINTS`].
    Default,
}

/// A resolved CRI endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedEndpoint {
    /// Normalized address, always `unix:///absolute/path`.
    pub endpoint: String,
    /// The socket path.
    pub socket: PathBuf,
    /// Where it came from.
    pub source: EndpointSource,
}

/// The inputs of [`resolve`], each `None` when absent.
#[derive(Debug, Clone, Copy, Default)]
pub struct EndpointInputs<'a> {
    /// The explicit endpoint (command-line flag).
    pub flag: Option<&'a str>,
    /// The value of `CONTAINER_RUNTIME_ENDPOINT`.
    pub env: Option<&'a str>,
    /// The crictl config file's path and contents, when it exists.
    pub crictl_config: Option<(&'a Path, &'a str)>,
}

/// The longest socket path a unix socket address holds (`sun_path` is 108 bytes with its NUL).
pub const MAX_SOCKET_PATH_BYTES: usize = 107;

/// Parses an endpoint into its normalized `unix:///path` form and its socket path.
///
/// Accepts `unix:///abs/path`, `unix:/abs/path` and a bare `/abs/path`.
///
/// # Errors
///
/// [`Error::InvalidEndpoint`] for an empty string, a control character (a NUL), another scheme
/// (`tcp://`, `npipe://`), a relative path, or a path longer than [`MAX_SOCKET_PATH_BYTES`].
pub fn parse_endpoint(endpoint: &str) -> Result<(String, PathBuf)> {
    let invalid = |reason| Error::InvalidEndpoint {
        endpoint: endpoint.to_owned(),
        reason,
    };
    let trimmed = endpoint.trim();
    if trimmed.is_empty() {
        return Err(invalid("empty"));
    }
    if trimmed.chars().any(char::is_control) {
        return Err(invalid("it holds a control character"));
    }
    // The scheme is case-insensitive, as Go's url.Parse (cri-client) takes it.
    let scheme = trimmed
        .split_once(':')
        .map(|(s, _)| s)
        .filter(|s| !s.contains('/'));
    let path = match scheme {
        Some(s) if s.eq_ignore_ascii_case("unix") => {
            let rest = &trimmed[s.len() + 1..];
            match rest.strip_prefix("//") {
                // `unix://localhost/path`: a host before the path, which a unix socket ignores.
                Some(r) if !r.starts_with('/') && !r.is_empty() => {
                    r.find('/').map_or(r, |at| &r[at..])
                }
                Some(r) => r,
                None => rest,
            }
        }
        Some(_) if trimmed.contains("://") => {
            return Err(invalid("only unix sockets (unix:///path) are supported"));
        }
        _ => trimmed,
    };
    if !path.starts_with('/') {
        return Err(invalid("the socket path must be absolute"));
    }
    // `sun_path` holds 108 bytes with its NUL: a longer path cannot be connected to.
    if path.len() > MAX_SOCKET_PATH_BYTES {
        return Err(invalid(
            "the socket path is longer than a unix socket address holds (107 bytes)",
        ));
    }
    Ok((format!("unix://{path}"), PathBuf::from(path)))
}

/// Reads `runtime-endpoint` from the contents of a crictl config file (YAML).
///
/// crictl's config is a flat map of scalars (`runtime-endpoint`, `image-endpoint`, `timeout`,
/// `debug`, …); this reads the top-level `runtime-endpoint: <value>` line, with optional quotes
/// and a trailing `# comment`. Returns `None` when the key is absent or empty.
pub fn crictl_config_runtime_endpoint(contents: &str) -> Option<String> {
    contents.lines().find_map(|line| {
        let rest = line.strip_prefix("runtime-endpoint:")?;
        let value = match rest.find(" #") {
            Some(idx) => &rest[..idx],
            None => rest,
        };
        let value = value.trim().trim_matches(|c| c == '"' || c == '\'').trim();
        (!value.is_empty()).then(|| value.to_owned())
    })
}

/// Resolves the endpoint from its inputs, crictl's way (see the module docs).
///
/// `exists` is asked only about the default sockets.
///
/// # Errors
///
/// [`Error::InvalidEndpoint`] when the chosen endpoint is malformed;
/// [`Error::EndpointResolutionFailed`] when nothing is configured and no default socket exists.
pub fn resolve(
    inputs: &EndpointInputs<'_>,
    exists: impl Fn(&Path) -> bool,
) -> Result<ResolvedEndpoint> {
    let set = |v: Option<&str>| {
        v.map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    let configured = set(inputs.flag)
        .map(|e| (e, EndpointSource::Flag))
        .or_else(|| set(inputs.env).map(|e| (e, EndpointSource::Env)))
        .or_else(|| {
            inputs
                .crictl_config
                .and_then(|(_, contents)| crictl_config_runtime_endpoint(contents))
                .map(|e| (e, EndpointSource::CrictlConfig))
        });
    if let Some((endpoint, source)) = configured {
        let (endpoint, socket) = parse_endpoint(&endpoint)?;
        return Ok(ResolvedEndpoint {
            endpoint,
            socket,
            source,
        });
    }
    for candidate in DEFAULT_ENDPOINTS {
        let (endpoint, socket) = parse_endpoint(candidate)?;
        if exists(&socket) {
            return Ok(ResolvedEndpoint {
                endpoint,
                socket,
                source: EndpointSource::Default,
            });
        }
    }
    Err(Error::EndpointResolutionFailed {
        crictl_config: inputs.crictl_config.map_or_else(
            || PathBuf::from(DEFAULT_CRICTL_CONFIG),
            |(p, _)| p.to_owned(),
        ),
        probed: DEFAULT_ENDPOINTS.iter().map(|e| (*e).to_owned()).collect(),
    })
}

/// Resolves the endpoint from `flag`, the process environment and the crictl config file on
/// disk, then probes the default sockets on the real filesystem.
///
/// `crictl_config`: the config file to read; `None` means `$CRI_CONFIG_FILE`, else
/// `/etc/crictl.yaml`. A missing config file is not an error.
///
/// # Errors
///
/// As [`resolve`], plus [`Error::CrictlConfigReadFailed`] when the config file exists but cannot
/// be read.
pub fn resolve_from_system(
    flag: Option<&str>,
    crictl_config: Option<&Path>,
) -> Result<ResolvedEndpoint> {
    let env = std::env::var(ENV_RUNTIME_ENDPOINT).ok();
    let config_path = match crictl_config {
        Some(path) => path.to_owned(),
        None => std::env::var_os(ENV_CRICTL_CONFIG)
            .filter(|v| !v.is_empty())
            .map_or_else(|| PathBuf::from(DEFAULT_CRICTL_CONFIG), PathBuf::from),
    };
    let contents = match std::fs::read_to_string(&config_path) {
        Ok(contents) => Some(contents),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => {
            return Err(Error::CrictlConfigReadFailed {
                path: config_path,
                source,
            });
        }
    };
    let inputs = EndpointInputs {
        flag,
        env: env.as_deref(),
        crictl_config: contents.as_deref().map(|c| (config_path.as_path(), c)),
    };
    resolve(&inputs, |path| path.exists())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTAINERD: &str = "/run/containerd/containerd.sock";
    const CRIO: &str = "/run/crio/crio.sock";
    const DOCKERD: &str = "/var/run/cri-dockerd.sock";

    #[track_caller]
    fn check(
        flag: Option<&str>,
        env: Option<&str>,
        config: Option<&str>,
        existing: &[&str],
        expected: Option<(&str, EndpointSource)>,
    ) {
        let config_path = Path::new("/etc/crictl.yaml");
        let inputs = EndpointInputs {
            flag,
            env,
            crictl_config: config.map(|c| (config_path, c)),
        };
        let res = resolve(&inputs, |p| existing.iter().any(|e| Path::new(e) == p));
        match (res, expected) {
            (Ok(got), Some((endpoint, source))) => {
                assert_eq!((got.endpoint.as_str(), got.source), (endpoint, source));
                assert_eq!(
                    got.socket,
                    Path::new(endpoint.trim_start_matches("unix://"))
                );
            }
            (Err(Error::EndpointResolutionFailed { probed, .. }), None) => {
                assert_eq!(probed, DEFAULT_ENDPOINTS);
            }
            (res, expected) => panic!("got {res:?}, expected {expected:?}"),
        }
    }

    #[test]
    fn precedence_table() {
        use EndpointSource::*;
        let cfg = "runtime-endpoint: unix:///cfg.sock\nimage-endpoint: unix:///img.sock\n";
        // Each step wins over the ones below it.
        check(
            Some("unix:///flag.sock"),
            Some("unix:///env.sock"),
            Some(cfg),
            &[CONTAINERD],
            Some(("unix:///flag.sock", Flag)),
        );
        check(
            None,
            Some("unix:///env.sock"),
            Some(cfg),
            &[CONTAINERD],
            Some(("unix:///env.sock", Env)),
        );
        check(
            None,
            None,
            Some(cfg),
            &[CONTAINERD],
            Some(("unix:///cfg.sock", CrictlConfig)),
        );
        check(
            None,
            None,
            None,
            &[CONTAINERD, CRIO],
            Some(("unix:///run/containerd/containerd.sock", Default)),
        );
        check(
            None,
            None,
            None,
            &[CRIO, DOCKERD],
            Some(("unix:///run/crio/crio.sock", Default)),
        );
        check(
            None,
            None,
            None,
            &[DOCKERD],
            Some(("unix:///var/run/cri-dockerd.sock", Default)),
        );
        check(None, None, None, &[], None);
        // Empty values count as unset.
        check(
            Some(""),
            Some("  "),
            Some("runtime-endpoint: \"\"\n"),
            &[CRIO],
            Some(("unix:///run/crio/crio.sock", Default)),
        );
        // A config without runtime-endpoint falls through to probing.
        check(
            None,
            None,
            Some("image-endpoint: unix:///img.sock\ntimeout: 2\n"),
            &[CONTAINERD],
            Some(("unix:///run/containerd/containerd.sock", Default)),
        );
        // Configured endpoints are not probed: they are used even if missing.
        check(
            Some("/nowhere.sock"),
            None,
            None,
            &[CONTAINERD],
            Some(("unix:///nowhere.sock", Flag)),
        );
        check(
            None,
            Some("unix:///nowhere.sock"),
            None,
            &[],
            Some(("unix:///nowhere.sock", Env)),
        );
    }

    #[test]
    fn endpoint_forms() {
        let ok = |s: &str| {
            parse_endpoint(s)
                .map(|(e, p)| (e, p.display().to_string()))
                .unwrap()
        };
        assert_eq!(
            ok("unix:///run/x.sock"),
            ("unix:///run/x.sock".into(), "/run/x.sock".into())
        );
        assert_eq!(
            ok("/run/x.sock"),
            ("unix:///run/x.sock".into(), "/run/x.sock".into())
        );
        assert_eq!(
            ok("unix:/run/x.sock"),
            ("unix:///run/x.sock".into(), "/run/x.sock".into())
        );
        assert_eq!(
            ok(" unix:///run/x.sock\n"),
            ("unix:///run/x.sock".into(), "/run/x.sock".into())
        );
        // The scheme in any case, and a host before the path, as Go's url.Parse reads them.
        assert_eq!(
            ok("UNIX:///run/x.sock"),
            ("unix:///run/x.sock".into(), "/run/x.sock".into())
        );
        assert_eq!(
            ok("unix://localhost/run/x.sock"),
            ("unix:///run/x.sock".into(), "/run/x.sock".into())
        );
        let long = format!("/{}", "a".repeat(MAX_SOCKET_PATH_BYTES));
        for bad in [
            "",
            "tcp://127.0.0.1:1234",
            "npipe:////./pipe/x",
            "unix://relative.sock",
            "x.sock",
            "unix:///run/x\0.sock",
            long.as_str(),
        ] {
            let err = parse_endpoint(bad).unwrap_err();
            assert!(matches!(err, Error::InvalidEndpoint { .. }), "{bad}: {err}");
        }
    }

    #[test]
    fn crictl_config_parsing() {
        let cases = [
            ("runtime-endpoint: unix:///a.sock\n", Some("unix:///a.sock")),
            (
                "runtime-endpoint: \"unix:///a.sock\"\n",
                Some("unix:///a.sock"),
            ),
            (
                "runtime-endpoint: 'unix:///a.sock'  # containerd\n",
                Some("unix:///a.sock"),
            ),
            (
                "# runtime-endpoint: unix:///commented.sock\ntimeout: 10\n",
                None,
            ),
            ("image-endpoint: unix:///img.sock\n", None),
            ("runtime-endpoint:\n", None),
            (
                "debug: false\nruntime-endpoint: /b.sock\npull-image-on-create: false\n",
                Some("/b.sock"),
            ),
        ];
        for (contents, expected) in cases {
            assert_eq!(
                crictl_config_runtime_endpoint(contents).as_deref(),
                expected,
                "{contents:?}"
            );
        }
    }

    #[test]
    fn invalid_configured_endpoint_is_an_error_not_a_fallback() {
        let inputs = EndpointInputs {
            flag: Some("tcp://localhost:1"),
            ..Default::default()
        };
        let err = resolve(&inputs, |_| true).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid CRI endpoint \"tcp://localhost:1\": only unix sockets (unix:///path) are supported"
        );
    }

    #[test]
    fn resolution_failure_names_what_was_tried() {
        let err = resolve(&EndpointInputs::default(), |_| false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "resolving the CRI endpoint failed: no endpoint flag, no CONTAINER_RUNTIME_ENDPOINT, \
             no runtime-endpoint in /etc/crictl.yaml, and none of unix:///run/containerd/containerd.sock, \
             unix:///run/crio/crio.sock, unix:///var/run/cri-dockerd.sock exists"
        );
    }

    #[test]
    fn resolve_from_system_reads_the_given_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crictl.yaml");
        std::fs::write(&path, "runtime-endpoint: unix:///from-file.sock\n").unwrap();
        // The flag wins, so the process environment does not matter here.
        let res = resolve_from_system(Some("/flag.sock"), Some(&path)).unwrap();
        assert_eq!(
            (res.endpoint.as_str(), res.source),
            ("unix:///flag.sock", EndpointSource::Flag)
        );
        // An unreadable config (a directory) is an error that names it.
        let err = resolve_from_system(None, Some(dir.path())).unwrap_err();
        assert!(matches!(err, Error::CrictlConfigReadFailed { .. }), "{err}");
    }
}
