//! `RuntimeClient` against a real containerd (a private one per test, from
//! `podcoroner-test-support`), plus endpoints that are not a CRI runtime at all.
//!
//! The lab tests need root and containerd, runc, the CNI plugins and gcc; without them they fail
//! with the command that installs them (`cargo xtask test` does).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use podcoroner_core::{ContainerState, CriView, PodRef, Sandbox, SandboxState};
use podcoroner_cri::{ApiVersion, ApiVersionPreference, Error, RuntimeClient};
use podcoroner_test_support::{ContainerdLab, PodSpec};

const TIMEOUT: Duration = Duration::from_secs(10);
const STATIC_HASH: &str = "8d4c9a1e0f3b2a6c7d5e4f3a2b1c0d9e";
const WEB_UID: &str = "0b6f2c5e-2b1d-4e8a-9c1f-3d2e1f0a9b8c";
const JOB_UID: &str = "5a1d7c3e-9f2b-4d6a-8e1c-7b3a2f1e0d9c";

fn start_lab() -> ContainerdLab {
    ContainerdLab::start().unwrap_or_else(|e| panic!("{e}"))
}

fn pod_ref(pod: &PodSpec) -> PodRef {
    PodRef {
        namespace: pod.namespace.clone(),
        name: pod.name.clone(),
        uid: pod.uid.clone(),
    }
}

#[tokio::test]
async fn lists_what_the_kubelet_created_over_v1_and_v1alpha2() {
    let lab = start_lab();
    let before = Timestamp::now();

    // A static pod (config.source=file, config.hash = UID) in its second sandbox.
    let apiserver = PodSpec::static_pod("kube-system", "kube-apiserver-node-1", STATIC_HASH)
        .with_label("component", "kube-apiserver")
        .with_label("tier", "control-plane")
        .with_attempt(1);
    let apiserver_id = lab
        .run_pod(&apiserver)
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    // An API pod with a running container, an exited one and one created but never started.
    let web = PodSpec::api("default", "web-0", WEB_UID).with_label("app", "web");
    let web_id = lab.run_pod(&web).await.unwrap_or_else(|e| panic!("{e}"));
    let init_id = lab
        .create_container(&web_id, &web, "init", 0, true)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    lab.stop_container(&init_id)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let app_id = lab
        .create_container(&web_id, &web, "app", 2, true)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let sidecar_id = lab
        .create_container(&web_id, &web, "sidecar", 0, false)
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    // A stopped pod without containers: SANDBOX_NOTREADY.
    let job = PodSpec::api("batch", "job-x-7k2p9", JOB_UID);
    let job_id = lab.run_pod(&job).await.unwrap_or_else(|e| panic!("{e}"));
    lab.stop_sandbox(&job_id)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let after = Timestamp::now();

    let client = RuntimeClient::connect(&lab.endpoint(), TIMEOUT)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let info = client.runtime_info();
    assert_eq!(info.endpoint, lab.endpoint());
    assert_eq!(info.runtime_name, "containerd");
    assert!(
        info.runtime_version.starts_with("1.") || info.runtime_version.starts_with("v1."),
        "{}",
        info.runtime_version
    );
    assert_eq!(info.cri_api_version, ApiVersion::V1);

    let sandboxes = client.list_sandboxes().await.unwrap();
    let by_id: BTreeMap<&str, &Sandbox> = sandboxes.iter().map(|s| (s.id.as_str(), s)).collect();
    assert_eq!(by_id.len(), 3, "{sandboxes:#?}");
    for (id, pod, state) in [
        (&apiserver_id, &apiserver, SandboxState::Ready),
        (&web_id, &web, SandboxState::Ready),
        (&job_id, &job, SandboxState::NotReady),
    ] {
        let sandbox = by_id[id.as_str()];
        assert_eq!(sandbox.pod, pod_ref(pod));
        assert_eq!(sandbox.attempt, pod.attempt);
        assert_eq!(sandbox.state, state, "{}", pod.name);
        assert_eq!(sandbox.labels, pod.sandbox_labels());
        assert_eq!(sandbox.annotations, pod.annotations);
        assert!(sandbox.is_kubelet_managed());
        assert!(
            before <= sandbox.created_at && sandbox.created_at <= after,
            "{}",
            sandbox.created_at
        );
    }
    let static_sandbox = by_id[apiserver_id.as_str()];
    assert!(static_sandbox.is_static());
    assert_eq!(static_sandbox.config_hash(), STATIC_HASH);
    assert_eq!(static_sandbox.attempt, 1);
    assert!(!by_id[web_id.as_str()].is_static());
    assert_eq!(by_id[web_id.as_str()].config_source(), Some("api"));
    // Sorted by creation time.
    assert_eq!(
        sandboxes.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        [&apiserver_id, &web_id, &job_id]
    );

    let containers = client.list_containers().await.unwrap();
    let states: Vec<(&str, &str, u32, ContainerState)> = containers
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.attempt, c.state))
        .collect();
    assert_eq!(
        states,
        [
            (init_id.as_str(), "init", 0, ContainerState::Exited),
            (app_id.as_str(), "app", 2, ContainerState::Running),
            (sidecar_id.as_str(), "sidecar", 0, ContainerState::Created),
        ]
    );
    for c in &containers {
        assert_eq!(c.sandbox_id, web_id);
        assert_eq!(c.labels, web.container_labels(&c.name));
        assert_eq!(c.pod_uid(), Some(WEB_UID));
        assert_eq!(
            c.annotations["io.kubernetes.container.restartCount"],
            c.attempt.to_string()
        );
        assert!(
            c.image == lab.image() || c.image.starts_with("sha256:"),
            "{}",
            c.image
        );
        assert!(before <= c.created_at && c.created_at <= after);
    }

    // The crictl JSON snapshot format keeps everything the core types hold.
    let pods_json = podcoroner_cri::crictl_json::write_pods(&sandboxes);
    assert_eq!(
        podcoroner_cri::crictl_json::parse_pods(&pods_json, "pods").unwrap(),
        sandboxes
    );
    let ps_json = podcoroner_cri::crictl_json::write_containers(&containers);
    assert_eq!(
        podcoroner_cri::crictl_json::parse_containers(&ps_json, "ps").unwrap(),
        containers
    );

    let view = client.view().await.unwrap();
    assert_eq!(
        view,
        CriView {
            sandboxes: sandboxes.clone(),
            containers: containers.clone()
        }
    );

    // The same runtime through runtime.v1alpha2 gives identical core values.
    let alpha =
        RuntimeClient::connect_with(&lab.endpoint(), TIMEOUT, ApiVersionPreference::V1alpha2)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(alpha.runtime_info().cri_api_version, ApiVersion::V1alpha2);
    assert_eq!(alpha.runtime_info().runtime_name, "containerd");
    assert_eq!(alpha.runtime_info().runtime_version, info.runtime_version);
    assert_eq!(alpha.view().await.unwrap(), view);
    let forced_v1 = RuntimeClient::connect_with(&lab.endpoint(), TIMEOUT, ApiVersionPreference::V1)
        .await
        .unwrap();
    assert_eq!(forced_v1.runtime_info().cri_api_version, ApiVersion::V1);

    // Status RPCs, in both versions.
    for client in [&client, &alpha] {
        let status = client.sandbox_status(&web_id).await.unwrap();
        assert_eq!(&status.sandbox, by_id[web_id.as_str()]);
        let ip = status.ip.expect("a pod-network sandbox has an IP");
        let prefix = lab.network().0.trim_end_matches("0/24");
        assert!(ip.starts_with(prefix), "{ip} not in {}", lab.network().0);
        assert_eq!(
            client.sandbox_status(&job_id).await.unwrap().sandbox.state,
            SandboxState::NotReady
        );

        let app = client.container_status(&app_id).await.unwrap();
        assert_eq!(
            (app.name.as_str(), app.attempt, app.state),
            ("app", 2, ContainerState::Running)
        );
        assert!(app.started_at.is_some() && app.finished_at.is_none());
        assert_eq!(
            app.log_path,
            lab.pod_log_dir(&web)
                .join("app/2.log")
                .display()
                .to_string()
        );
        let init = client.container_status(&init_id).await.unwrap();
        assert_eq!(init.state, ContainerState::Exited);
        assert_eq!(init.exit_code, 0);
        assert!(init.finished_at.is_some());

        let unknown = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let err = client.container_status(unknown).await.unwrap_err();
        assert!(err.is_not_found(), "{err}");
        let message = err.to_string();
        assert!(
            message.starts_with(&format!(
                "calling ContainerStatus on {} failed: {unknown} not found: ",
                lab.endpoint()
            )),
            "{message}"
        );
        assert!(message.contains("not found"), "{message}");
        let err = client.sandbox_status(unknown).await.unwrap_err();
        assert!(err.is_not_found(), "{err}");
    }
}

#[tokio::test]
async fn stop_and_remove_sandbox() {
    let lab = start_lab();
    let keep = PodSpec::api("default", "keep", "11111111-1111-1111-1111-111111111111");
    let gone =
        PodSpec::api("default", "gone", "22222222-2222-2222-2222-222222222222").with_host_network();
    let keep_id = lab.run_pod(&keep).await.unwrap_or_else(|e| panic!("{e}"));
    let gone_id = lab.run_pod(&gone).await.unwrap_or_else(|e| panic!("{e}"));
    lab.create_container(&gone_id, &gone, "app", 0, true)
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    let client = RuntimeClient::connect(&lab.endpoint(), TIMEOUT)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let host_status = client.sandbox_status(&gone_id).await.unwrap();
    assert_eq!(host_status.sandbox.pod, pod_ref(&gone));

    client.stop_sandbox(&gone_id).await.unwrap();
    let view = client.view().await.unwrap();
    let states: Vec<_> = view
        .sandboxes
        .iter()
        .map(|s| (s.id.as_str(), s.state))
        .collect();
    assert_eq!(
        states,
        [
            (keep_id.as_str(), SandboxState::Ready),
            (gone_id.as_str(), SandboxState::NotReady)
        ]
    );
    assert_eq!(view.containers.len(), 1);
    assert_eq!(view.containers[0].state, ContainerState::Exited);

    client.remove_sandbox(&gone_id).await.unwrap();
    let view = client.view().await.unwrap();
    assert_eq!(
        view.sandboxes
            .iter()
            .map(|s| s.id.as_str())
            .collect::<Vec<_>>(),
        [keep_id.as_str()]
    );
    assert!(
        view.containers.is_empty(),
        "RemovePodSandbox removes its containers"
    );
    assert!(
        client
            .sandbox_status(&gone_id)
            .await
            .unwrap_err()
            .is_not_found()
    );
}

#[tokio::test]
async fn missing_socket_names_endpoint_and_rpc() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("missing.sock");
    let endpoint = format!("unix://{}", socket.display());
    let err = RuntimeClient::connect(&endpoint, TIMEOUT)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::SocketNotFound { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "calling Version on {endpoint} failed: no such socket {}",
            socket.display()
        )
    );
    // A bare path is accepted and normalized.
    let err = RuntimeClient::connect(&socket.display().to_string(), TIMEOUT)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("calling Version on {endpoint} failed")),
        "{err}"
    );
}

#[tokio::test]
async fn stale_socket_is_connection_refused() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("stale.sock");
    drop(UnixListener::bind(&socket).unwrap());
    let endpoint = format!("unix://{}", socket.display());
    let err = RuntimeClient::connect(&endpoint, TIMEOUT)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ConnectionRefused { .. }), "{err:?}");
    assert!(
        err.to_string().starts_with(&format!(
            "calling Version on {endpoint} failed: connection refused"
        )),
        "{err}"
    );
}

/// Serves `socket` from a thread: each connection gets `reply` (after reading what the client
/// sent first, when `read_first`), then is closed.
fn serve_garbage(socket: &std::path::Path, reply: &'static [u8], read_first: bool) {
    let listener = UnixListener::bind(socket).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            if read_first {
                let mut buf = [0u8; 1024];
                let _ = stream.read(&mut buf);
            }
            let _ = stream.write_all(reply);
        }
    });
}

#[tokio::test]
async fn socket_that_is_not_cri_fails_fast_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &'static [u8], bool); 3] = [
        ("closes.sock", b"", false),
        (
            "http1.sock",
            b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            true,
        ),
        (
            "garbage.sock",
            b"\x00\x01\x02 this is not http/2 at all \xff\xfe",
            true,
        ),
    ];
    for (name, reply, read_first) in cases {
        let socket = dir.path().join(name);
        serve_garbage(&socket, reply, read_first);
        let endpoint = format!("unix://{}", socket.display());
        let started = Instant::now();
        let err = RuntimeClient::connect(&endpoint, Duration::from_secs(5))
            .await
            .unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{name}: took {:?}",
            started.elapsed()
        );
        let message = err.to_string();
        assert!(
            message.starts_with(&format!(
                "{endpoint} answers neither runtime.v1 nor runtime.v1alpha2 Version: "
            )),
            "{name}: {message}"
        );
        assert!(
            matches!(err, Error::NotCriRuntime { .. }),
            "{name}: {err:?}"
        );
    }
}

#[tokio::test]
async fn silent_socket_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("silent.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    let endpoint = format!("unix://{}", socket.display());
    let started = Instant::now();
    let err = RuntimeClient::connect(&endpoint, Duration::from_millis(500))
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(
        err.to_string(),
        format!("calling Version on {endpoint} timed out after 500ms")
    );
}

/// A fake runtime that only speaks runtime.v1alpha2 (its v1 calls answer `Unimplemented`, as a
/// gRPC server does for an unknown service), like containerd before 1.6 or CRI-O before 1.23.
mod fake_v1alpha2 {
    use podcoroner_cri_api::v1alpha2 as api;
    use podcoroner_cri_api::v1alpha2::runtime_service_server::{
        RuntimeService, RuntimeServiceServer,
    };
    use tonic::{Request, Response, Status};

    pub struct Fake {
        /// Answer `Version` with `Unimplemented` too: a gRPC server that is no CRI runtime.
        pub no_version: bool,
    }

    /// Implements `RuntimeService` for [`Fake`] with the given methods, every other RPC
    /// answering `Unimplemented`. (The whole impl is generated so that `async_trait` sees every
    /// method.)
    macro_rules! impl_runtime_service {
        ({ $($explicit:tt)* } $($name:ident($req:ident) -> $resp:ident;)*) => {
            #[tonic::async_trait]
            impl RuntimeService for Fake {
                $($explicit)*
                $(
                    async fn $name(&self, _: Request<api::$req>) -> Result<Response<api::$resp>, Status> {
                        Err(Status::unimplemented("fake runtime"))
                    }
                )*
            }
        };
    }

    impl_runtime_service! {
        {
            async fn version(&self, _: Request<api::VersionRequest>) -> Result<Response<api::VersionResponse>, Status> {
                if self.no_version {
                    return Err(Status::unimplemented("not here"));
                }
                Ok(Response::new(api::VersionResponse {
                    version: "0.1.0".into(),
                    runtime_name: "fake-runtime".into(),
                    runtime_version: "v1.5.0".into(),
                    runtime_api_version: "v1alpha2".into(),
                }))
            }

            async fn list_pod_sandbox(
                &self,
                _: Request<api::ListPodSandboxRequest>,
            ) -> Result<Response<api::ListPodSandboxResponse>, Status> {
                Ok(Response::new(api::ListPodSandboxResponse {
                    items: vec![api::PodSandbox {
                        id: "old".into(),
                        metadata: Some(api::PodSandboxMetadata {
                            name: "legacy".into(),
                            uid: "u-1".into(),
                            namespace: "default".into(),
                            attempt: 3,
                        }),
                        state: api::PodSandboxState::SandboxNotready as i32,
                        created_at: 1_600_000_000_000_000_001,
                        ..Default::default()
                    }],
                }))
            }
        }
        run_pod_sandbox(RunPodSandboxRequest) -> RunPodSandboxResponse;
        stop_pod_sandbox(StopPodSandboxRequest) -> StopPodSandboxResponse;
        remove_pod_sandbox(RemovePodSandboxRequest) -> RemovePodSandboxResponse;
        pod_sandbox_status(PodSandboxStatusRequest) -> PodSandboxStatusResponse;
        create_container(CreateContainerRequest) -> CreateContainerResponse;
        start_container(StartContainerRequest) -> StartContainerResponse;
        stop_container(StopContainerRequest) -> StopContainerResponse;
        remove_container(RemoveContainerRequest) -> RemoveContainerResponse;
        list_containers(ListContainersRequest) -> ListContainersResponse;
        container_status(ContainerStatusRequest) -> ContainerStatusResponse;
    }

    /// Serves the fake on `socket` until the test's runtime ends.
    pub fn serve(socket: &std::path::Path, fake: Fake) {
        let listener = tokio::net::UnixListener::bind(socket).unwrap();
        let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(RuntimeServiceServer::new(fake))
                .serve_with_incoming(incoming),
        );
    }
}

#[tokio::test]
async fn falls_back_to_v1alpha2_when_v1_is_unimplemented() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("old-runtime.sock");
    fake_v1alpha2::serve(&socket, fake_v1alpha2::Fake { no_version: false });
    let endpoint = format!("unix://{}", socket.display());

    let client = RuntimeClient::connect(&endpoint, TIMEOUT)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(client.runtime_info().cri_api_version, ApiVersion::V1alpha2);
    assert_eq!(client.runtime_info().runtime_name, "fake-runtime");
    let sandboxes = client.list_sandboxes().await.unwrap();
    assert_eq!(sandboxes.len(), 1);
    assert_eq!(
        (sandboxes[0].attempt, sandboxes[0].state),
        (3, SandboxState::NotReady)
    );
    assert_eq!(
        sandboxes[0].created_at.to_string(),
        "2020-09-13T12:26:40.000000001Z"
    );
    let err = client.list_containers().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("calling ListContainers on {endpoint} failed: Unimplemented: fake runtime")
    );

    // Forcing v1 does not fall back.
    let err = RuntimeClient::connect_with(&endpoint, TIMEOUT, ApiVersionPreference::V1)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::RpcFailed {
                code: tonic::Code::Unimplemented,
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn grpc_server_without_cri_answers_neither_version() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("grpc-not-cri.sock");
    fake_v1alpha2::serve(&socket, fake_v1alpha2::Fake { no_version: true });
    let endpoint = format!("unix://{}", socket.display());
    let err = RuntimeClient::connect(&endpoint, TIMEOUT)
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, Error::NotCriRuntime { .. }), "{err:?}");
    assert!(
        message.starts_with(&format!("{endpoint} answers neither runtime.v1 nor runtime.v1alpha2 Version: runtime.v1: Unimplemented")),
        "{message}"
    );
    assert!(
        message.ends_with("runtime.v1alpha2: Unimplemented: not here"),
        "{message}"
    );
}
