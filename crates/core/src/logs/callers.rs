//! Whose code a record's caller is: the kubelet's, or another Kubernetes component's (etcd,
//! kube-apiserver, kube-proxy, kube-controller-manager, kube-scheduler), which log in the same
//! shapes (klog, zap JSON). A log whose records come from another component's code and none
//! from the kubelet's was given by mistake: read as the kubelet's it would be a clean bill.
//!
//! Only files that one side alone has are named: shared packages (`reflector.go`, `flags.go`,
//! `server.go`, `httplog.go`, `plugins.go`, client-go, gRPC) name nobody.

/// Whose code a caller (`kubelet.go:2063`, JSON's `kuberuntime/kuberuntime_manager.go:1090`,
/// zap's `etcdserver/server.go:2044`) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallerOwner {
    /// The kubelet's own packages (`pkg/kubelet`, `cmd/kubelet`).
    Kubelet,
    /// Another component's: its name as its binary is called.
    Other(&'static str),
}

/// Path prefixes of etcd's zap callers (`etcdserver/server.go:2044`, `embed/etcd.go:308`).
const ETCD_PREFIXES: &[&str] = &[
    "etcdserver/",
    "etcdmain/",
    "embed/",
    "rafthttp/",
    "mvcc/",
    "wal/",
    "v3rpc/",
    "membership/",
];

/// Files only another component has, by name (the path's last part, without the line).
const OTHERS: &[(&str, &str)] = &[
    // k8s.io/apiserver and kube-aggregator, apiextensions-apiserver.
    ("cacher.go", "kube-apiserver"),
    ("watch_cache.go", "kube-apiserver"),
    ("storage_factory.go", "kube-apiserver"),
    ("apf_controller.go", "kube-apiserver"),
    ("genericapiserver.go", "kube-apiserver"),
    ("available_controller.go", "kube-apiserver"),
    ("apiservice_controller.go", "kube-apiserver"),
    ("crdregistration_controller.go", "kube-apiserver"),
    ("customresource_discovery_controller.go", "kube-apiserver"),
    ("establishing_controller.go", "kube-apiserver"),
    ("naming_controller.go", "kube-apiserver"),
    ("nonstructuralschema_controller.go", "kube-apiserver"),
    (
        "cluster_authentication_trust_controller.go",
        "kube-apiserver",
    ),
    ("storage_rbac.go", "kube-apiserver"),
    ("storage_scheduling.go", "kube-apiserver"),
    ("default_servicecidr_controller.go", "kube-apiserver"),
    ("cidrallocator.go", "kube-apiserver"),
    ("repairip.go", "kube-apiserver"),
    ("crd_finalizer.go", "kube-apiserver"),
    ("system_namespaces_controller.go", "kube-apiserver"),
    ("local_available_controller.go", "kube-apiserver"),
    ("remote_available_controller.go", "kube-apiserver"),
    // cmd/kube-proxy, pkg/proxy.
    ("proxier.go", "kube-proxy"),
    ("server_others.go", "kube-proxy"),
    ("conntrack.go", "kube-proxy"),
    ("endpointslicecache.go", "kube-proxy"),
    // cmd/kube-controller-manager, pkg/controller.
    ("controllermanager.go", "kube-controller-manager"),
    ("garbagecollector.go", "kube-controller-manager"),
    ("graph_builder.go", "kube-controller-manager"),
    ("node_lifecycle_controller.go", "kube-controller-manager"),
    ("replica_set.go", "kube-controller-manager"),
    ("deployment_controller.go", "kube-controller-manager"),
    ("attach_detach_controller.go", "kube-controller-manager"),
    ("namespace_controller.go", "kube-controller-manager"),
    ("resource_quota_controller.go", "kube-controller-manager"),
    ("endpoints_controller.go", "kube-controller-manager"),
    ("endpointslice_controller.go", "kube-controller-manager"),
    ("tokens_controller.go", "kube-controller-manager"),
    ("range_allocator.go", "kube-controller-manager"),
    ("daemon_controller.go", "kube-controller-manager"),
    ("stateful_set.go", "kube-controller-manager"),
    ("job_controller.go", "kube-controller-manager"),
    ("pv_controller.go", "kube-controller-manager"),
    ("pv_controller_base.go", "kube-controller-manager"),
    ("horizontal.go", "kube-controller-manager"),
    ("disruption.go", "kube-controller-manager"),
    // client-go's leader election: the controller manager, the scheduler, controllers; never
    // the kubelet.
    (
        "leaderelection.go",
        "kube-controller-manager or kube-scheduler",
    ),
    // pkg/scheduler.
    ("schedule_one.go", "kube-scheduler"),
    ("default_preemption.go", "kube-scheduler"),
];

/// Files only the kubelet has, by name (besides `kubelet*.go` and `kuberuntime_*.go`).
const KUBELET: &[&str] = &[
    "pod_workers.go",
    "remote_runtime.go",
    "remote_image.go",
    "status_manager.go",
    "mirror_client.go",
    "eviction_manager.go",
    "image_gc_manager.go",
    "container_gc.go",
    "pod_container_deletor.go",
    "volume_manager.go",
    "prober_manager.go",
];

/// Whose code `caller` is, `None` when the file names nobody (a shared package, or one not
/// listed).
pub fn caller_owner(caller: &str) -> Option<CallerOwner> {
    let path = caller.rsplit_once(':').map_or(caller, |(path, _)| path);
    if ETCD_PREFIXES.iter().any(|p| path.starts_with(p)) {
        return Some(CallerOwner::Other("etcd"));
    }
    let file = path.rsplit_once('/').map_or(path, |(_, file)| file);
    if file.starts_with("kubelet") || file.starts_with("kuberuntime_") || KUBELET.contains(&file) {
        return Some(CallerOwner::Kubelet);
    }
    OTHERS
        .iter()
        .find(|(f, _)| *f == file)
        .map(|&(_, who)| CallerOwner::Other(who))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callers_are_told_apart_by_their_files() {
        use CallerOwner::*;
        for (caller, want) in [
            ("kubelet.go:2063", Some(Kubelet)),
            ("kubelet_node_status.go:390", Some(Kubelet)),
            ("kuberuntime/kuberuntime_manager.go:1090", Some(Kubelet)),
            ("pod_workers.go:1301", Some(Kubelet)),
            ("etcdserver/server.go:2044", Some(Other("etcd"))),
            ("embed/etcd.go:308", Some(Other("etcd"))),
            ("cacher.go:410", Some(Other("kube-apiserver"))),
            ("proxier.go:853", Some(Other("kube-proxy"))),
            (
                "leaderelection.go:258",
                Some(Other("kube-controller-manager or kube-scheduler")),
            ),
            // Shared packages name nobody.
            ("reflector.go:255", None),
            ("flags.go:64", None),
            ("server.go:529", None),
            ("app/server.go:529", None),
            ("httplog.go:132", None),
            ("plugins.go:630", None),
        ] {
            assert_eq!(caller_owner(caller), want, "{caller}");
        }
    }
}
