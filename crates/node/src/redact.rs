//! What `collect` takes out of a snapshot by default (`--keep-secrets` keeps it): values that
//! hold or may hold secrets in pod specs, manifests and API pods alike.
//!
//! - every `env[].value` (a container's environment, often a password or a token);
//! - the string value of a key named like a secret (`password`, `passwd`, `secret`, `token`,
//!   `credential`, `apikey`, `api_key`, `privatekey`, `private_key`, any case), unless the key
//!   names a reference to one (`…Name`, `…Ref`, `…File`, `…Path`, `…Key`);
//! - the value of a `--flag=value` argument named like a secret (`--token=…`, not
//!   `--token-file=…`);
//! - the `kubectl.kubernetes.io/last-applied-configuration` annotation, a copy of the whole spec.
//!
//! Names, images, commands and labels stay: the rules need them.

use serde_json::Value;

/// What a redacted value becomes.
pub const REDACTED: &str = "<redacted>";

/// The annotation that holds a copy of the whole object as last applied.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Redacts `value` in place (see the module docs); returns how many values were redacted.
pub fn redact(value: &mut Value) -> usize {
    match value {
        Value::Object(map) => {
            let mut n = 0;
            for (key, v) in map.iter_mut() {
                if key == "env"
                    && let Value::Array(vars) = v
                {
                    for var in vars {
                        if let Some(val) = var.get_mut("value")
                            && val.is_string()
                        {
                            *val = Value::String(REDACTED.to_string());
                            n += 1;
                        }
                    }
                }
                if (key == LAST_APPLIED || secret_shaped(key)) && v.is_string() {
                    *v = Value::String(REDACTED.to_string());
                    n += 1;
                    continue;
                }
                n += redact(v);
            }
            n
        }
        Value::Array(items) => items.iter_mut().map(redact).sum(),
        Value::String(s) => match secret_flag(s) {
            Some(flag) => {
                *s = format!("{flag}={REDACTED}");
                1
            }
            None => 0,
        },
        _ => 0,
    }
}

/// Whether a key or flag name names a secret rather than a reference to one.
fn secret_shaped(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let words = [
        "password",
        "passwd",
        "secret",
        "token",
        "credential",
        "apikey",
        "api_key",
        "api-key",
        "privatekey",
        "private_key",
        "private-key",
    ];
    let reference = ["name", "ref", "file", "path", "key", "dir"];
    words.iter().any(|w| lower.contains(w))
        && !reference.iter().any(|r| {
            lower.ends_with(r) && !lower.ends_with("apikey") && !lower.ends_with("privatekey")
        })
}

/// The `--flag` part of a `--flag=value` argument whose flag names a secret.
fn secret_flag(arg: &str) -> Option<&str> {
    let (flag, value) = arg.split_once('=')?;
    (flag.starts_with('-') && !value.is_empty() && value != REDACTED && secret_shaped(flag))
        .then_some(flag)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_go_and_what_the_rules_read_stays() {
        let mut pod = json!({
            "metadata": {"name": "etcd", "annotations": {
                "kubernetes.io/config.hash": "abc",
                "kubectl.kubernetes.io/last-applied-configuration": "{\"spec\": {\"env\": \"x\"}}"
            }},
            "spec": {"containers": [{
                "name": "etcd", "image": "registry.k8s.io/etcd:3.5.15-0",
                "command": ["etcd", "--token=s3cr3t", "--client-cert-auth=true", "--token-file=/etc/t"],
                "env": [{"name": "ETCD_ROOT_PASSWORD", "value": "hunter2"},
                        {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "db", "key": "pw"}}}]
            }], "volumes": [{"name": "s", "secret": {"secretName": "db-secret"}}],
                "password": "plain", "serviceAccountToken": "eyJh"}
        });
        assert_eq!(redact(&mut pod), 5);
        assert_eq!(
            pod,
            json!({
                "metadata": {"name": "etcd", "annotations": {
                    "kubernetes.io/config.hash": "abc",
                    "kubectl.kubernetes.io/last-applied-configuration": REDACTED
                }},
                "spec": {"containers": [{
                    "name": "etcd", "image": "registry.k8s.io/etcd:3.5.15-0",
                    "command": ["etcd", "--token=<redacted>", "--client-cert-auth=true", "--token-file=/etc/t"],
                    "env": [{"name": "ETCD_ROOT_PASSWORD", "value": REDACTED},
                            {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "db", "key": "pw"}}}]
                }], "volumes": [{"name": "s", "secret": {"secretName": "db-secret"}}],
                    "password": REDACTED, "serviceAccountToken": REDACTED}
            })
        );
    }
}
