//! Conversions from the generated CRI messages into `podcoroner-core` types, written once and
//! instantiated for `runtime.v1` and `runtime.v1alpha2` (the messages we use are field-for-field
//! identical in both).
//!
//! Conventions: CRI timestamps are `int64` nanoseconds since the Unix epoch; a missing
//! `metadata` becomes empty strings and attempt 0 rather than dropping the item; an unknown
//! sandbox state counts as not ready and an unknown container state as `Unknown`.

use jiff::Timestamp;

/// A CRI `int64` nanosecond timestamp as a [`Timestamp`].
///
/// Every `i64` nanosecond count (years 1677 to 2262) is within jiff's range, so this cannot fail.
pub fn timestamp_from_nanos(nanos: i64) -> Timestamp {
    Timestamp::from_nanosecond(i128::from(nanos))
        .expect("every i64 nanosecond count is within jiff's Timestamp range")
}

/// A [`Timestamp`] as CRI `int64` nanoseconds, saturating outside 1677–2262.
pub fn timestamp_to_nanos(ts: Timestamp) -> i64 {
    let nanos = ts.as_nanosecond();
    i64::try_from(nanos).unwrap_or(if nanos < 0 { i64::MIN } else { i64::MAX })
}

/// A CRI timestamp where 0 means "not set".
pub fn optional_timestamp(nanos: i64) -> Option<Timestamp> {
    (nanos != 0).then(|| timestamp_from_nanos(nanos))
}

macro_rules! conversions {
    ($api:ident) => {
        #[doc = concat!("Conversions from `runtime.", stringify!($api), "` messages.")]
        pub(crate) mod $api {
            use podcoroner_core::{Container, ContainerState, PodRef, Sandbox, SandboxState};
            use podcoroner_cri_api::$api as api;

            use super::{optional_timestamp, timestamp_from_nanos};
            use crate::types::{ContainerStatus, SandboxStatus};

            pub(crate) fn sandbox_state(value: i32) -> SandboxState {
                match api::PodSandboxState::try_from(value) {
                    Ok(api::PodSandboxState::SandboxReady) => SandboxState::Ready,
                    _ => SandboxState::NotReady,
                }
            }

            pub(crate) fn container_state(value: i32) -> ContainerState {
                match api::ContainerState::try_from(value) {
                    Ok(api::ContainerState::ContainerCreated) => ContainerState::Created,
                    Ok(api::ContainerState::ContainerRunning) => ContainerState::Running,
                    Ok(api::ContainerState::ContainerExited) => ContainerState::Exited,
                    Ok(api::ContainerState::ContainerUnknown) | Err(_) => ContainerState::Unknown,
                }
            }

            fn pod(metadata: Option<api::PodSandboxMetadata>) -> (PodRef, u32) {
                let m = metadata.unwrap_or_default();
                (
                    PodRef {
                        namespace: m.namespace,
                        name: m.name,
                        uid: m.uid,
                    },
                    m.attempt,
                )
            }

            pub(crate) fn sandbox(s: api::PodSandbox) -> Sandbox {
                let (pod, attempt) = pod(s.metadata);
                Sandbox {
                    id: s.id,
                    pod,
                    attempt,
                    state: sandbox_state(s.state),
                    created_at: timestamp_from_nanos(s.created_at),
                    labels: s.labels,
                    annotations: s.annotations,
                }
            }

            pub(crate) fn sandbox_status(s: api::PodSandboxStatus) -> SandboxStatus {
                let (pod, attempt) = pod(s.metadata);
                let ip = s.network.map(|n| n.ip).filter(|ip| !ip.is_empty());
                SandboxStatus {
                    sandbox: Sandbox {
                        id: s.id,
                        pod,
                        attempt,
                        state: sandbox_state(s.state),
                        created_at: timestamp_from_nanos(s.created_at),
                        labels: s.labels,
                        annotations: s.annotations,
                    },
                    ip,
                    runtime_handler: s.runtime_handler,
                }
            }

            pub(crate) fn container(c: api::Container) -> Container {
                let m = c.metadata.unwrap_or_default();
                let image = c.image.map(|i| i.image).filter(|i| !i.is_empty());
                Container {
                    id: c.id,
                    sandbox_id: c.pod_sandbox_id,
                    name: m.name,
                    attempt: m.attempt,
                    state: container_state(c.state),
                    created_at: timestamp_from_nanos(c.created_at),
                    started_at: None,
                    image: image.unwrap_or(c.image_ref),
                    labels: c.labels,
                    annotations: c.annotations,
                }
            }

            pub(crate) fn container_status(c: api::ContainerStatus) -> ContainerStatus {
                let m = c.metadata.unwrap_or_default();
                ContainerStatus {
                    id: c.id,
                    name: m.name,
                    attempt: m.attempt,
                    state: container_state(c.state),
                    created_at: timestamp_from_nanos(c.created_at),
                    started_at: optional_timestamp(c.started_at),
                    finished_at: optional_timestamp(c.finished_at),
                    exit_code: c.exit_code,
                    image: c.image.map(|i| i.image).unwrap_or_default(),
                    image_ref: c.image_ref,
                    reason: c.reason,
                    message: c.message,
                    labels: c.labels,
                    annotations: c.annotations,
                    log_path: c.log_path,
                }
            }
        }
    };
}

conversions!(v1);
conversions!(v1alpha2);

#[cfg(test)]
mod tests {
    use super::*;
    use podcoroner_core::{ContainerState, SandboxState};

    #[test]
    fn timestamps() {
        let cases: [(i64, &str); 4] = [
            (0, "1970-01-01T00:00:00Z"),
            (1_700_000_000_123_456_789, "2023-11-14T22:13:20.123456789Z"),
            (-1, "1969-12-31T23:59:59.999999999Z"),
            (i64::MAX, "2262-04-11T23:47:16.854775807Z"),
        ];
        for (nanos, expected) in cases {
            let ts = timestamp_from_nanos(nanos);
            assert_eq!(ts.to_string(), expected);
            assert_eq!(timestamp_to_nanos(ts), nanos);
        }
        assert_eq!(
            timestamp_from_nanos(i64::MIN).to_string(),
            "1677-09-21T00:12:43.145224192Z"
        );
        assert_eq!(optional_timestamp(0), None);
        assert_eq!(optional_timestamp(1), Some(timestamp_from_nanos(1)));
        let far: Timestamp = "9000-01-01T00:00:00Z".parse().unwrap();
        assert_eq!(timestamp_to_nanos(far), i64::MAX);
    }

    #[test]
    fn states_including_unknown_values() {
        assert_eq!(v1::sandbox_state(0), SandboxState::Ready);
        assert_eq!(v1::sandbox_state(1), SandboxState::NotReady);
        assert_eq!(v1::sandbox_state(7), SandboxState::NotReady);
        assert_eq!(v1alpha2::sandbox_state(0), SandboxState::Ready);
        let expected = [
            ContainerState::Created,
            ContainerState::Running,
            ContainerState::Exited,
            ContainerState::Unknown,
            ContainerState::Unknown,
        ];
        for (value, state) in expected.into_iter().enumerate() {
            assert_eq!(v1::container_state(value as i32), state);
            assert_eq!(v1alpha2::container_state(value as i32), state);
        }
    }

    #[test]
    fn container_image_falls_back_to_image_ref() {
        use podcoroner_cri_api::v1 as api;
        let c = api::Container {
            id: "c1".into(),
            pod_sandbox_id: "s1".into(),
            image_ref: "sha256:abc".into(),
            created_at: 5,
            state: 1,
            ..Default::default()
        };
        let got = v1::container(c);
        assert_eq!(
            (got.image.as_str(), got.name.as_str(), got.attempt),
            ("sha256:abc", "", 0)
        );
        assert_eq!(got.state, ContainerState::Running);
    }
}
