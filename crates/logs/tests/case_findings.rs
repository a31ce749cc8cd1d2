//! Every real case in `testdata/cases/` diagnosed offline, as `podcoroner diagnose --offline
//! --kubelet-log FILE [--runtime-log FILE]` does: the files are read with [`read`] (the real
//! reader: assembler, parser, catalogue), the events go to `diagnose_with_logs` with an empty
//! node view (the node's name where the case gives it), and the findings are compared with what
//! `expected.md` says.
//!
//! Per case, the table says which files are the kubelet's and which the runtime's log, which
//! files are not logs (crictl and docker tables, `ls` output) and why the diagnosis goes
//! without them, and what `expected.md` asks that the logs alone cannot show. The findings of a
//! run must be exactly the wanted ones (kind, severity, pod, UID, sandbox and container IDs, and
//! words of the summary and evidence): no extra finding, so nothing `expected.md` rules out can
//! appear; the kinds it names as "must not report" are listed again in `never` for the reader.
//!
//! Severity: `expected.md` says "error" where podcoroner says `warning` (something leaks or is
//! stuck and needs an operator); it says `critical` only for what is node-wide (no pod on the
//! node can be started, stopped or torn down), which `expected.md` marks "node-wide" or
//! "critical". Each row says which applies.
//!
//! Invariants on every finding: an ID is whole (64 hex, a UUID, a 32-hex static pod UID) or a
//! hex prefix ending in `…` (a cut one, never completed by guessing), and it occurs in the
//! case's files; the evidence comes from the logs only.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use expect_test::expect_file;
use jiff::Timestamp;
use podcoroner_core::event::read_text_with;
use podcoroner_core::log_rules::{LogKind, LoggedEvent, diagnose_with_logs};
use podcoroner_core::logs::ParseContext;
use podcoroner_core::{Config, EvidenceSource, Finding, FindingKind as K, NodeView, pasted};
use podcoroner_logs::{Source, read_for_diagnosis, read_in_node_times};

/// One offline diagnosis: the logs of one node.
struct Run {
    /// The node's name where the case gives it (`""` when it does not).
    node: &'static str,
    /// `--kubelet-log` files (a node journal mixing kubelet and runtime lines goes here).
    kubelet: &'static [&'static str],
    /// `--runtime-log` files.
    runtime: &'static [&'static str],
    /// Message-only text (a Loki export, a `kubectl describe` event): [`read`] has no
    /// message-only mode, so these go through the core pipeline with
    /// `ParseContext::message_only`, as kubelet log text.
    messages: &'static [&'static str],
    /// Kinds `expected.md` rules out (already excluded by the exact match; listed for the reader).
    never: &'static [K],
    /// `--crictl-pods` files: `crictl pods` tables, the pasted CRI view.
    crictl_pods: &'static [&'static str],
    /// `--crictl-inspectp` files: `crictl inspectp` JSON, whole or cut.
    crictl_inspectp: &'static [&'static str],
    /// `--kubectl-pods` files: `kubectl get pods` tables, the pasted API view.
    kubectl_pods: &'static [&'static str],
}

impl Run {
    fn pastes(&self) -> impl Iterator<Item = &&'static str> {
        self.crictl_pods
            .iter()
            .chain(self.crictl_inspectp)
            .chain(self.kubectl_pods)
    }
}

const RUN: Run = Run {
    node: "",
    kubelet: &[],
    runtime: &[],
    messages: &[],
    never: &[],
    crictl_pods: &[],
    crictl_inspectp: &[],
    kubectl_pods: &[],
};

struct Case {
    slug: &'static str,
    runs: &'static [Run],
    /// Files that are not logs, and why the diagnosis goes without them.
    not_logs: &'static [(&'static str, &'static str)],
    /// What `expected.md` asks that the logs alone cannot show ("" when nothing).
    offline_gap: &'static str,
}

const CRICTL: &str = "crictl output: the CRI view, which --offline does not read";

const CASES: &[Case] = &[
    Case {
        slug: "01-docker-dead-sandbox-shm-busy",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "the pod: these lines name only the sandbox (the CRI view's labels would name it)",
    },
    Case {
        slug: "03-notready-sandbox-left-after-shim-disconnect",
        runs: &[Run {
            node: "node-a",
            kubelet: &["messages.log"],
            runtime: &["containerd.log"],
            // crictl called with a pod name is not a runtime problem.
            never: &[K::FindContainerRace, K::SandboxStopFailing],
            crictl_pods: &["crictl-pods.txt"],
            ..RUN
        }],
        not_logs: &[
            (
                "crictl-inspectp.txt",
                "crictl inspectp called with a pod name: its NotFound error, no document",
            ),
            (
                "crictl-logs.txt",
                "crictl's own stderr (its klog line is crictl's, pid 19578, not the kubelet's)",
            ),
            (
                "crictl-rmp.txt",
                "crictl output and a grep of /var/log/messages for the sudo line",
            ),
        ],
        offline_gap: "",
    },
    Case {
        slug: "04-containerd-containerstatus-notfound-hourly",
        runs: &[Run {
            node: "node-a",
            runtime: &["containerd.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "05-kubelet-gc-containerstatus-notfound",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "06-delete-race-removecontainer-twice",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            // The CNI plugin's own log given as the runtime's: its "Unable to enter namespace"
            // warning is teardown noise, not a failure (no StopPodSandbox error follows).
            runtime: &["cilium-cni.log"],
            never: &[K::SandboxStopFailing],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "08-orphaned-pod-vsphere-k8s16",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "whether a volume is still mounted (the escalation expected.md asks for) needs /proc/mounts",
    },
    Case {
        slug: "09-orphaned-pod-volume-paths-multi-version",
        // Four pastes from different reporters and nodes: one diagnosis each. warning (expected.md).
        runs: &[
            Run {
                node: "node-a",
                kubelet: &["kubelet-1.14.3-journald.log"],
                ..RUN
            },
            Run {
                kubelet: &["kubelet-1.14.8-wrapped.log"],
                ..RUN
            },
            Run {
                kubelet: &["kubelet-2018-description.log"],
                ..RUN
            },
            // the etcd line is another program's and gives nothing
            Run {
                node: "node-b",
                kubelet: &["messages-1.14.3.log"],
                ..RUN
            },
        ],
        not_logs: &[(
            "pod-dir-listing.txt",
            "ls of the pod directory: confirms the volume-subpaths variant the wrapped line already names",
        )],
        offline_gap: "",
    },
    Case {
        slug: "11-orphaned-pod-configmap-dir-not-empty",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "12-orphaned-pod-subpath-forker-out-of-order",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "14-mirror-pod-outdated-delete-loop",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "16-mirror-pod-create-alreadyexists-2015",
        runs: &[Run {
            node: "kubernetes-master",
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[(
            "docker-ps.txt",
            "docker ps: the running container 2752cfc55b8c and the static pod hash in its name are runtime state",
        )],
        offline_gap: "the running container and the static pod hash (5f35d49b…) come from docker ps, not the log",
    },
    Case {
        slug: "17-static-pod-removed-mirror-deleted-no-grace",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "the warning case (containers still running past the grace period) needs the CRI view",
    },
    Case {
        slug: "18-static-pod-not-removed-killpodsandbox-cni",
        runs: &[Run {
            node: "10.0.0.11",
            kubelet: &["kubelet.log"],
            never: &[K::StuckTerminatingPod, K::StaticPodRemoved],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "the sandbox ID is not in the excerpt (the remediation looks it up by the io.kubernetes.pod.uid \
                      label); whether the mirror pod stays needs the API view",
    },
    Case {
        slug: "19-static-pod-recreate-1.22-regression",
        runs: &[Run {
            node: "127.0.0.1",
            kubelet: &["kubelet-part1.log", "kubelet-part2.log"],
            never: &[K::FindContainerRace],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "StuckPodWorker (the re-add with the same UID) needs the SyncLoop ADD source=\"file\" that put the \
                      manifest back; neither window holds it (log_rules' unit test adds it to these lines)",
    },
    Case {
        slug: "21-cni-teardown-aws-vpc-del-failed-bottlerocket",
        runs: &[Run {
            node: "node-a",
            // one journal: containerd and kubelet lines
            kubelet: &["node-journal.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "the pod: these lines name only the sandbox",
    },
    Case {
        slug: "23-cni-teardown-empty-netns-sriov-dockershim",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "24-cni-teardown-plugin-missing-flannel-dockershim",
        runs: &[Run {
            node: "node-a",
            kubelet: &["messages.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "25-cni-teardown-flannel-netconf-empty-nested-escaping",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "26-cni-teardown-weave-journalctl-truncated",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "28-stuck-terminating-empty-cni-cache-aws",
        runs: &[
            // The logs alone: containerd's transient "cni plugin not initialized" (warning).
            Run {
                runtime: &["containerd.log"],
                ..RUN
            },
            // With the kubectl describe event read as message text (the API's copy of the
            // kubelet's KillPodSandbox error): one finding for the pod, the containerd line
            // joined by sandbox ID, the persistent cause (empty cache) over the transient one.
            // expected.md's "error" → warning.
            Run {
                runtime: &["containerd.log"],
                messages: &["kubectl-describe-event.txt"],
                ..RUN
            },
        ],
        not_logs: &[(
            "cni-results-ls.txt",
            "ls of /var/lib/cni/results: the 0-byte cache file of sandbox ace318da… is node state; the remediation \
             says where to look",
        )],
        offline_gap: "StuckTerminatingPod needs the kubelet's own KillPodSandbox errors, which the case has only as a \
                      kubectl describe event (API data, x229 over 49m); the 0-byte cache file of ace318da… needs ls",
    },
    Case {
        slug: "29-blog-talos-stoppodsandbox-empty-cni-cache",
        runs: &[Run {
            node: "node-a",
            messages: &["kubelet-message.txt"],
            ..RUN
        }],
        not_logs: &[
            (
                "cni-results-ls.txt",
                "ls of /var/lib/cni/results: the 0-byte file is node state (the remediation names its path)",
            ),
            (
                "crictl-session.txt",
                "a kubectl debug command and crictl rmp's output (the same error, printed by crictl)",
            ),
        ],
        offline_gap: "the CLI cannot read a message-only export (read has no message-only mode): this row uses the core \
                      pipeline with ParseContext::message_only",
    },
    Case {
        slug: "30-stuck-terminating-crio-kata-stop-infra-loop",
        runs: &[
            // node-a: CRI-O and kubelet in one journal; only the CRI client's line, no caller.
            // expected.md's "error" → warning.
            Run {
                node: "node-a",
                kubelet: &["node-a-journal.log"],
                ..RUN
            },
            // node-b: hard-wrapped lines; the pod from the k8s_POD_… infra container name.
            Run {
                node: "node-b",
                kubelet: &["node-b-kubelet-wrapped.log"],
                ..RUN
            },
        ],
        not_logs: &[("crictl.txt", CRICTL)],
        offline_gap: "node-a: StuckTerminatingPod needs the caller's line (KillPodSandbox), which the excerpt lacks, so \
                      the finding is the sandbox's; its pod name sits in a runtime name cut after it \
                      (k8s_POD_<name>_…) and is not extracted",
    },
    Case {
        slug: "32-node-shutdown-stuck-talos-kubelet-json",
        runs: &[Run {
            node: "10.0.0.8",
            kubelet: &["kubelet-part1.jsonl", "kubelet-part2.jsonl"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "36-sandbox-name-reserved-after-hard-reboot-ts-skew",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            runtime: &["containerd.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "LeakedSandbox 02b34412… needs \"failed to reserve sandbox name\" (named in the issue title, not in \
                      the excerpt; the rule is unit-tested); \"Loaded sandbox\" alone is what containerd logs for every \
                      sandbox when it restarts",
    },
    // Added with the prefix layer (issue 12); `missed:` says what expected.md asks that the
    // logs show but podcoroner does not find yet (the golden pins today's findings).
    Case {
        slug: "02-sandbox-not-gc-until-kubelet-restart",
        // missed: the mechanism signature, a second syncTerminatingPod for
        // default/nginx-75cd7474f-tt7b8 after "Pod is orphaned and must be torn down"
        // (kubelet 1.23 before k/k #107731).
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log", "kubelet-grep-n.log"],
            crictl_pods: &["crictl-pods.txt"],
            kubectl_pods: &["kubectl-get-pods.txt"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "the k/k #107730 signature (StuckPodWorker) needs the worker's \"remove all history\" before \
                      \"Pod is orphaned and must be torn down\", which the excerpt cuts: \"synced for the first \
                      time\" then \"orphaned\" alone is also what a kubelet start logs for a pod deleted while it was \
                      down, so it is no finding",
    },
    Case {
        slug: "07-crio-deletecontainer-id-does-not-exist",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "10-orphaned-pod-k3s-longhorn-vol-data-json",
        runs: &[Run {
            node: "node-a",
            kubelet: &["k3s.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "13-orphaned-pod-subpath-syslog-no-pid",
        runs: &[Run {
            node: "node-a",
            kubelet: &["messages.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "15-mirror-pod-create-forbidden-psp",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "20-static-pod-not-restarted-after-manifest-back",
        // run 0: the REMOVE and the kill (StaticPodRemoved, info); the manifest's return is not in
        // it. run 1: the getPodContainerStatuses NotFound with no progress after it is
        // PodStatusFailing (warning; expected.md's "error"), naming container 740ab753… (its
        // line is cut before pod=, so the pod is not named).
        runs: &[
            Run {
                node: "node-a",
                kubelet: &["kubelet.log"],
                ..RUN
            },
            Run {
                node: "node-a",
                kubelet: &["kubelet-quoted-comment.md"],
                ..RUN
            },
        ],
        not_logs: &[],
        offline_gap: "the verdict 'not restarted' for team-ns/kube-apiserver-node-a needs the manifest's return (a \
                      SyncLoop ADD source=\"file\" of the same UID and no container started after it), which \
                      the first excerpt does not hold; the second excerpt's getPodContainerStatuses line is cut \
                      before its pod= field, so PodStatusFailing names its container, not pod \
                      3a91011824b5370050c4bb2c2c0705ad (which has only PLEG lines)",
    },
    Case {
        slug: "22-cni-teardown-calico-killed-deadline",
        // The calico DEL failure of 1977065b… names the ADD failure of coredns-f5cb5585b-s2bxk
        // and the pod waiting for a new sandbox (coredns-5db795bd57-z4257, "No ready sandbox …
        // Need to start a new one"); the cut StopPodSandbox line joins the b25b1fe9… timeout.
        // expected.md's "error" → warning.
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            runtime: &["containerd.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "27-crictl-stopp-calico-datastore-unreachable",
        // crictl's own FATA line: the StopPodSandbox it ran failed in the CNI teardown.
        runs: &[Run {
            kubelet: &["crictl-stopp.txt"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "the pod: crictl names only the sandbox",
    },
    Case {
        slug: "31-stuck-terminating-talos-containerd-json",
        runs: &[Run {
            node: "node-a",
            runtime: &["containerd.jsonl"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "the containers' pods (CRI ContainerStatus labels)",
    },
    Case {
        slug: "33-notready-sandboxes-after-reboot-crictl-inspectp",
        runs: &[Run {
            crictl_inspectp: &["crictl-inspectp.json"],
            never: &[K::LeakedSandbox],
            ..RUN
        }],
        not_logs: &[
            (
                "crictl-inspectp-summary.txt",
                "the reporter's summary of crictl inspectp",
            ),
            ("find-empty-cni-files.txt", "find output over /var/lib/cni"),
        ],
        offline_gap: "the info leftover expected.md names is a NOT JUDGED entry instead: the pasted inspectp \
                      JSON is cut inside metadata, before \"state\", so the sandbox cf46d31391b99 may as well be \
                      READY; its SANDBOX_NOTREADY is the reporter's prose, not crictl output",
    },
    Case {
        slug: "34-removepodsandbox-no-such-id-wrapped-ids",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "35-cni-teardown-calico-nodename-logpkg-blank-lines",
        // expected.md says node-wide (every Calico teardown fails): critical, as found (the
        // nodename file missing: the CNI plugin's node agent is not running).
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "37-find-container-race-french-locale-journald",
        // The CreateContainer DeadlineExceeded in sandbox f09ac71b68bbe is the one warning
        // (RuntimeUnhealthy, the slow-create variant); the NotFound lookups are info.
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "38-real-kubelet-cni-broken-pod-deleted-text-v1.34.4",
        // expected.md: node-wide (the CNI plugin binary is missing): critical.
        runs: &[Run {
            node: "lab-node",
            kubelet: &["kubelet.log"],
            runtime: &["containerd.log"],
            never: &[K::LeakedSandbox, K::SandboxStopFailing],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "39-real-kubelet-cni-broken-pod-deleted-json-v1.34.4",
        // expected.md: node-wide (the CNI plugin binary is missing): critical.
        runs: &[Run {
            node: "lab-node",
            kubelet: &["kubelet.log"],
            runtime: &["containerd.log"],
            never: &[K::LeakedSandbox, K::SandboxStopFailing],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "40-real-kubelet-healthy-node-restart-v1.34.4",
        // expected.md: healthy; only the explained info findings.
        runs: &[Run {
            node: "lab-node",
            kubelet: &["kubelet.log"],
            never: &[K::RuntimeUnhealthy],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "41-real-kubelet-http-static-pod-removed-from-url-v1.34.4",
        runs: &[Run {
            node: "lab-node",
            kubelet: &["kubelet.log"],
            runtime: &["containerd.log"],
            never: &[K::StaticPodNotRemoved, K::OrphanedMirrorPod],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "healthy offline: the removal from the static pod URL shows only in the state (the URL's \
                      body and the CRI view, StaticPodNotRemoved while the kubelet was down); the restarted \
                      kubelet logs no REMOVE, it tears the pod down as an orphan",
    },
    Case {
        slug: "42-real-kubelet-sandbox-gc-stop-failing-after-restart-text-v1.34.4",
        // expected.md: node-wide (the CNI plugin binary is missing): critical.
        runs: &[Run {
            node: "lab-node",
            kubelet: &["kubelet.log"],
            runtime: &["containerd.log"],
            never: &[K::StuckTerminatingPod],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "43-real-kubelet-sandbox-gc-stop-failing-after-restart-json-v1.34.4",
        // expected.md: node-wide (the CNI plugin binary is missing): critical.
        runs: &[Run {
            node: "lab-node",
            kubelet: &["kubelet.log"],
            runtime: &["containerd.log"],
            never: &[K::StuckTerminatingPod],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "44-reserve-name-reverse-journal-containerd-12438",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            runtime: &[],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "45-reserve-name-windows-grep-n-wrapped-107561",
        runs: &[Run {
            kubelet: &["kubelet.err.log"],
            runtime: &[],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "46-stopcontainer-deadline-canceled-containerd-10755",
        runs: &[Run {
            kubelet: &[],
            runtime: &["containerd.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "47-stoppodsandbox-deadline-rke-docker-logs-7790",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            runtime: &[],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "48-stopcontainer-newest-first-containerd-1.2-2744",
        runs: &[Run {
            kubelet: &[],
            runtime: &["containerd.logs"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "49-pleg-eks-1.23-syslog-no-pid",
        runs: &[Run {
            kubelet: &["messages"],
            runtime: &[],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "50-pleg-k3s-journald-klog-skew-2370",
        runs: &[Run {
            kubelet: &["k3s.log"],
            runtime: &[],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "51-orphaned-pod-total-errors-1.x-134075",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            runtime: &[],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "52-orphaned-pod-not-a-directory-then-cleaned-105536",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            runtime: &[],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "53-slow-startup-markdown-quoted-kubestellar-2573",
        runs: &[Run {
            kubelet: &["journal.md"],
            runtime: &[],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "54-benign-kubelet-startup-runtime-not-yet-crio-5549",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            runtime: &[],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "healthy: \"PLEG is not healthy: pleg has yet to be successful\" while the kubelet starts is no finding",
    },
    Case {
        slug: "55-benign-cadvisor-404-crio-rfc3339-syslog-120988",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            runtime: &[],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "benign: cAdvisor's \"Failed to create existing container\" for a gone cgroup is noise",
    },
    Case {
        slug: "56-benign-crio-stop-long-grace-period-9754",
        runs: &[Run {
            kubelet: &[],
            runtime: &["crio.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "benign: a StopContainer still inside its 86400 s grace period has not failed",
    },
    Case {
        slug: "57-mirror-pod-webhook-denied-bottlerocket-1409",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            runtime: &[],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "58-mirror-pod-namespace-not-found-openshift-371",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            runtime: &[],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "59-benign-mirror-alreadyexists-after-kubelet-restart-22",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            runtime: &[],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "60-benign-single-cni-add-retry-cilium-kind-30820",
        runs: &[Run {
            kubelet: &["containerd-and-kubelet.log"],
            runtime: &[],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "benign: one CNI ADD failure that the next attempt mends",
    },
    Case {
        slug: "61-mirror-pod-already-exists-minikube-startup",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "benign: the mirror pods' start race of a kubelet restart (info)",
    },
    Case {
        slug: "62-killpodsandbox-calico-kdd-json-eof-dockershim",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "the plugin's panic itself, which only its own log shows",
    },
    Case {
        slug: "63-dockershim-stop-sandbox-no-such-container",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "64-killcontainer-stop-timeout-reverse-journal-containerd",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            runtime: &["runtime.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "65-podstatus-crio-id-does-not-exist-hyperkube",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "66-orphaned-pod-journald-no-hostname",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "67-benign-startup-runtime-down-2562047h-65843",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            never: &[K::RuntimeUnhealthy],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "benign: a kubelet before 1.14 starting (PLEG never relisted yet, the runtime status not yet checked)",
    },
    Case {
        slug: "68-crio-name-reserved-kubeadm-static-8481",
        runs: &[Run {
            runtime: &["runtime.log"],
            never: &[K::LeakedSandbox],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "69-benign-mirror-connrefused-bootstrap-224",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "benign: a control plane node's kubelet creating mirror pods before its static API server serves (connection refused), then registering",
    },
    Case {
        slug: "70-containerd-stop-canceled-11984",
        runs: &[Run {
            runtime: &["runtime.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "71-flannel-subnet-env-add-once-46",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "72-crio-multus-add-killed-cleanup-203",
        runs: &[Run {
            runtime: &["runtime.log"],
            never: &[K::SandboxStopFailing],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "73-crio-status-image-not-set-5709",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "74-k3s-runpodsandbox-deadline-497",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            never: &[K::SandboxCreateFailing],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "75-microk8s-runpodsandbox-pager-cut-3458",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            runtime: &["runtime.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "76-crio-stop-requests-unanswered-7053",
        runs: &[Run {
            runtime: &["runtime.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "77-containerd-no-runtime-handler-minikube-gvisor",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "78-k3s-multus-add-markdown-bold-5672",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "79-pleg-reinspection-docker-lower-id-47294",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "80-orphaned-volumes-not-a-directory-csi-114698",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "81-skip-delete-sources-not-ready-api-delivering-557",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "82-dockershim-calico-del-pod-desc-1",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "83-k3s-sandbox-does-not-exist-38344",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            never: &[K::StuckTerminatingPod, K::SandboxStopFailing],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "benign: sandboxes containerd no longer has, answered NotFound in its old words",
    },
    Case {
        slug: "84-crio-118-error-reserving-pod-name-capitalised-3571",
        runs: &[Run {
            runtime: &["runtime.log"],
            never: &[K::LeakedSandbox],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "85-kubelet-13-docker-down-at-start-28577",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "86-containerd-socket-refused-bottlerocket-2512",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "87-mirror-pod-forbidden-service-account-103587",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "88-pod-syncs-deadline-exceeded-45419",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            never: &[K::ContainerStopFailing, K::StuckTerminatingPod],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "89-dockertools-termination-failed-within-grace-31219",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "90-dockershim-calico-add-netns-gone-72044",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            never: &[K::SandboxStopFailing, K::StuckTerminatingPod],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "91-crio-del-cniversion-missing-9557",
        runs: &[Run {
            runtime: &["runtime.log"],
            never: &[K::SandboxCreateFailing],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "92-rfc5424-syslog-runpodsandbox-timeout",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "93-crio-ctr-name-reserved-create-still-running",
        runs: &[Run {
            runtime: &["runtime.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "94-cilium-agent-socket-missing-grepped-continuation",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "95-orphaned-pod-error-in-the-middle-not-a-directory",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "96-containerd12-stop-signal-wait-ran-out",
        runs: &[Run {
            runtime: &["runtime.log"],
            never: &[K::ContainerStopFailing],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "benign in what the lines show: containerd 1.2's 'An error occurs during waiting for container … to be stopped' is the stop signal's wait running out before SIGKILL (a grace period ending), once; the thread's fault (a TaskExit never published, so the stop never ends) shows only as the same wait again and again or the wait after the kill, which the excerpt does not hold",
    },
    Case {
        slug: "97-eks-stopcontainer-deadline-two-layers-one-call",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "98-dockerd-sigkill-not-obeyed-kill-again-later",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            runtime: &["runtime.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "99-containerd-stop-deadline-syslog-time-without-host",
        runs: &[Run {
            runtime: &["runtime.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "100-static-pod-blocked-by-old-pod-worker-grep-n",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "101-windows-kubelet-glog-file-header-benign",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "benign: a Windows kubelet starting: its log file's glog header (no records; its date gives the year) and start-up noise",
    },
    Case {
        slug: "102-isulad-sandbox-name-in-use-by-sandbox",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "103-dockertools-runcontainer-operation-timeout",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "104-kubelet-endpoint-serves-no-cri",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "105-containerd-go-fatal-error-crash",
        runs: &[Run {
            runtime: &["runtime.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "106-secret-unmount-teardown-device-busy",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "107-cinder-unmount-teardown-device-busy",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "108-kubelet-cgroupfs-runtime-systemd-cgroups",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "109-kubelet-exits-swap-on",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "110-kubelet-exits-swap-zh-locale",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "111-kubelet-node-object-deleted",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "112-image-pull-dns-timeout-backoff",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            never: &[K::SandboxCreateFailing, K::RuntimeUnhealthy],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "113-rancher-ui-prefix-node-deleted",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "114-static-pods-volume-wait-timeout",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            never: &[K::RuntimeUnhealthy, K::SandboxCreateFailing],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
    Case {
        slug: "115-static-scheduler-crash-loop-cut",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            never: &[K::RuntimeUnhealthy],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
    },
];

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/cases")
}

fn config() -> Config {
    Config {
        min_age: std::time::Duration::from_secs(600),
        failed_pod_min_age: std::time::Duration::from_secs(3600),
        assume_pods_deleted: false,
        slow_start: std::time::Duration::from_secs(180),
    }
}

/// Message-only text through the core pipeline (what [`read`] does, with
/// `ParseContext::message_only`).
fn read_messages(path: &Path) -> Vec<LoggedEvent> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut ctx = ParseContext::new(2025);
    ctx.message_only = true;
    read_text_with(ctx, LogKind::Kubelet, &path.display().to_string(), &text)
}

/// When every case's log file was last written, for the goldens: yearless times (klog,
/// syslog) take their year from it, and a first one after it is last year's. A checkout's own
/// time would make the goldens' years depend on the day they run.
const CASE_FILES_MODIFIED: &str = "2026-12-31T00:00:00Z";

/// Sets `path`'s modification time to [`CASE_FILES_MODIFIED`].
fn pin_modified(path: &Path) {
    let t: Timestamp = CASE_FILES_MODIFIED.parse().unwrap();
    let f = fs::File::options()
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    f.set_modified(std::time::SystemTime::from(t))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// The findings and the startup breakdowns of one run.
/// The findings, the startup breakdowns and the pasted sandboxes not judged of one run.
type Diagnosed = (
    Vec<Finding>,
    Vec<podcoroner_core::startup::Breakdown>,
    Vec<pasted::NotJudged>,
);

fn diagnose(dir: &Path, run: &Run) -> Diagnosed {
    let mut events = Vec::new();
    let mut sources = Vec::new();
    for (files, kind) in [
        (run.kubelet, LogKind::Kubelet),
        (run.runtime, LogKind::Runtime),
    ] {
        for f in files {
            pin_modified(&dir.join(f));
            sources.push((f.to_string(), Source::File(dir.join(f)), kind));
        }
    }
    // As `diagnose` reads: through the fold, the node's logs in the year and zone they show.
    let logs = sources.iter().map(|(f, s, k)| (f.clone(), s, *k)).collect();
    let reads = read_in_node_times(logs, |source, kind, read_as| {
        read_for_diagnosis(source, kind, None, read_as)
    })
    .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for log in reads {
        events.extend(log.read.events);
    }
    for f in run.messages {
        events.extend(read_messages(&dir.join(f)));
    }
    let mut view = NodeView::empty();
    view.node_name = run.node.to_string();
    let now: Timestamp = "2030-01-01T00:00:00Z".parse().unwrap();
    let mut d = diagnose_with_logs(&view, &events, &config(), now);
    let mut not_judged = Vec::new();
    if run.pastes().next().is_some() {
        // What `diagnose --offline --crictl-pods … --crictl-inspectp … --kubectl-pods …`
        // adds (crates/node/src/pasted.rs reads the same tables with the same readers).
        let text = |f: &str| fs::read_to_string(dir.join(f)).unwrap();
        let mut views = pasted::PastedViews::default();
        for f in run.crictl_pods {
            let got = pasted::crictl_pods_table(&text(f), f).unwrap_or_else(|e| panic!("{e}"));
            assert!(
                got.not_understood.is_empty(),
                "{f}: {:?}",
                got.not_understood
            );
            views.add_sandboxes(got.rows);
        }
        for f in run.crictl_inspectp {
            let got = pasted::crictl_inspectp(&text(f), f).unwrap_or_else(|e| panic!("{e}"));
            views.add_sandboxes(got.rows);
        }
        if !run.kubectl_pods.is_empty() {
            let mut pods = Vec::new();
            for f in run.kubectl_pods {
                let got = pasted::kubectl_pods_table(&text(f), f).unwrap_or_else(|e| panic!("{e}"));
                assert!(
                    got.not_understood.is_empty(),
                    "{f}: {:?}",
                    got.not_understood
                );
                pods.extend(got.rows);
            }
            views.pods = Some((
                pods,
                format!("kubectl get pods {}", run.kubectl_pods.join(", ")),
            ));
        }
        // As the CLI without --node-name: NODE is read against the node the paste infers.
        views.node = views.infer_node();
        let (mut found, unjudged) = pasted::judge_all(&views, config().min_age, now);
        not_judged = unjudged;
        // As the CLI: only when a log was read.
        if !(run.kubelet.is_empty() && run.runtime.is_empty() && run.messages.is_empty()) {
            pasted::add_logs(&mut found, &views, &events, config().min_age, now);
        }
        assert!(
            found.iter().all(|f| !f.gc_eligible),
            "offline never deletes"
        );
        d.findings.extend(found);
        d.findings.sort_by(podcoroner_core::rules::report_order);
    }
    // Offline, the state rules say they were skipped.
    assert!(
        d.skipped.iter().any(|s| s.kind == K::LeakedSandbox),
        "the skipped state rules are listed"
    );
    (d.findings, d.startup, not_judged)
}

fn show(f: &Finding) -> String {
    let pod = f.pod.as_ref().map_or(String::new(), |p| {
        format!(" pod={}/{} uid={}", p.namespace, p.name, p.uid)
    });
    format!(
        "{} {}{pod} sandbox={:?} container={:?}\n      {}",
        f.kind,
        f.severity.as_str(),
        f.sandbox_id,
        f.container_id,
        f.summary
    )
}

/// Whole (64 hex, UUID, 32-hex static UID) or a hex prefix ending in `…`.
fn well_formed(id: &str) -> bool {
    let hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
    match id.strip_suffix('…') {
        Some(prefix) => hex(prefix) && prefix.len() >= 8,
        None => {
            (id.len() == 64 || id.len() == 32) && id.bytes().all(|b| b.is_ascii_hexdigit())
                || (id.len() == 36 && hex(id))
        }
    }
}

#[test]
fn every_case_folder_has_a_row() {
    let on_disk: BTreeSet<String> = fs::read_dir(cases_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let listed: BTreeSet<String> = CASES.iter().map(|c| c.slug.to_owned()).collect();
    assert_eq!(on_disk, listed);
}

#[test]
fn cases_diagnosed_offline() {
    let mut failures = Vec::new();
    for case in CASES {
        let dir = cases_dir().join(case.slug);
        // Every file is a log of some run or is said not to be one.
        let on_disk: BTreeSet<String> = fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| {
                !["source.txt", "expected.md", "findings.txt", "startup.txt"].contains(&n.as_str())
            })
            .collect();
        let used: BTreeSet<String> = case
            .runs
            .iter()
            .flat_map(|r| {
                r.kubelet
                    .iter()
                    .chain(r.runtime)
                    .chain(r.messages)
                    .chain(r.pastes())
            })
            .chain(case.not_logs.iter().map(|(f, _)| f))
            .map(|f| f.to_string())
            .collect();
        assert_eq!(on_disk, used, "{}: every file has a role", case.slug);
        assert!(
            case.not_logs.iter().all(|(_, why)| !why.is_empty()),
            "{}",
            case.slug
        );
        let text: String = on_disk
            .iter()
            .map(|f| fs::read_to_string(dir.join(f)).unwrap())
            .collect();
        let unwrapped = text.replace('\n', "");

        let prefix = format!("{}/", dir.display());
        let mut golden = format!(
            "# {}: the findings of `diagnose --offline` (UPDATE_EXPECT=1 cargo test -p \
             podcoroner-logs --test case_findings writes this file; expected.md is the human reading)\n",
            case.slug
        );
        let mut any = false;
        // The startup breakdowns and profile of the runs whose logs give any: startup.txt.
        let mut startup = format!(
            "# {}: the pod start breakdowns and the startup profile of `diagnose --offline` \
             (UPDATE_EXPECT=1 cargo test -p podcoroner-logs --test case_findings writes this file)\n",
            case.slug
        );
        let mut any_start = false;
        for (n_run, run) in case.runs.iter().enumerate() {
            let (found, breakdowns, not_judged) = diagnose(&dir, run);
            if !breakdowns.is_empty() {
                any_start = true;
                startup.push_str(&format!(
                    "\n## run {n_run}: --kubelet-log {:?} --runtime-log {:?} messages {:?}\n",
                    run.kubelet, run.runtime, run.messages
                ));
                for b in &breakdowns {
                    startup.push_str(&b.to_text(&prefix));
                }
                startup.push_str("profile:\n");
                startup.push_str(&podcoroner_core::startup::profile(&breakdowns).to_text());
            }
            let here = format!("{} run {n_run}", case.slug);
            any |= !found.is_empty();
            golden.push_str(&format!(
                "\n## run {n_run}: --kubelet-log {:?} --runtime-log {:?} messages {:?}\n",
                run.kubelet, run.runtime, run.messages
            ));
            if run.pastes().next().is_some() {
                golden.push_str(&format!(
                    "   --crictl-pods {:?} --crictl-inspectp {:?} --kubectl-pods {:?}\n",
                    run.crictl_pods, run.crictl_inspectp, run.kubectl_pods
                ));
            }
            for f in &found {
                golden.push_str(&f.to_text(&prefix));
            }
            // The report's NOT JUDGED block: a pasted sandbox read but not judged is said.
            for n in &not_judged {
                golden.push_str(&format!(
                    "- not judged: pod sandbox {} of {:?} ({}): {}\n",
                    n.sandbox_id, n.pod, n.at, n.why
                ));
            }
            any |= !not_judged.is_empty();
            for f in &found {
                if run.never.contains(&f.kind) {
                    failures.push(format!("{here}: ruled out by expected.md: {}", show(f)));
                }
                let ids = [
                    f.sandbox_id.as_deref(),
                    f.container_id.as_deref(),
                    f.pod
                        .as_ref()
                        .map(|p| p.uid.as_str())
                        .filter(|u| !u.is_empty()),
                ];
                for id in ids.into_iter().flatten() {
                    // A hard-wrapped line may split an ID (case 34): its lines joined hold it.
                    let bare = id.trim_end_matches('…');
                    if !well_formed(id) || !(text.contains(bare) || unwrapped.contains(bare)) {
                        failures.push(format!(
                            "{here}: ID {id:?} is not whole or not in the case: {}",
                            show(f)
                        ));
                    }
                }
                // Evidence from a view comes from a pasted file, and names it.
                if f.evidence.iter().any(|e| {
                    !matches!(
                        e.source,
                        EvidenceSource::KubeletLog | EvidenceSource::RuntimeLog
                    ) && !run.pastes().any(|p| e.detail().contains(*p))
                }) {
                    failures.push(format!("{here}: offline evidence from a view: {}", show(f)));
                }
            }
        }
        if !any && case.offline_gap.is_empty() {
            failures.push(format!(
                "{}: no finding offline, and the case does not say why",
                case.slug
            ));
        }
        expect_file![dir.join("findings.txt")].assert_eq(&golden);
        if any_start {
            expect_file![dir.join("startup.txt")].assert_eq(&startup);
        } else if dir.join("startup.txt").exists() {
            failures.push(format!(
                "{}: startup.txt, but the logs give no start breakdown",
                case.slug
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A troubled node logs the same records again and again. Each case's logs repeated
/// [`REPEATS`] times over (the lines of every repetition the same, as the `diagnose_offline`
/// bench's troubled log is) are diagnosed through the fold, as `diagnose` reads, and from every
/// record (`read`, as `explain` reads): the findings and start breakdowns must be the same, so
/// the fold keeps what the rules read, counts included, while it keeps a bounded number of the
/// repeats.
#[test]
fn repeated_logs_diagnose_the_same_through_the_fold() {
    const REPEATS: usize = 40;
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let (mut read_total, mut kept_total) = (0usize, 0usize);
    for case in CASES {
        let dir = cases_dir().join(case.slug);
        for (n_run, run) in case.runs.iter().enumerate() {
            if run.kubelet.is_empty() && run.runtime.is_empty() {
                continue;
            }
            let (mut folded, mut whole) = (Vec::new(), Vec::new());
            for (files, kind) in [
                (run.kubelet, LogKind::Kubelet),
                (run.runtime, LogKind::Runtime),
            ] {
                for f in files {
                    let text = fs::read_to_string(dir.join(f)).unwrap();
                    let text = if text.ends_with('\n') {
                        text
                    } else {
                        format!("{text}\n")
                    };
                    let here = tmp.path().join(format!("{}-{n_run}", case.slug));
                    fs::create_dir_all(&here).unwrap();
                    let path = here.join(f);
                    fs::write(&path, text.repeat(REPEATS)).unwrap();
                    pin_modified(&path);
                    let source = Source::File(path);
                    let got = read_for_diagnosis(&source, kind, None, Default::default()).unwrap();
                    let all = podcoroner_logs::read(&source, kind, None).unwrap();
                    assert_eq!(
                        got.events.len() as u64 + got.folded,
                        all.events.len() as u64,
                        "{} {f}",
                        case.slug
                    );
                    // Each kept record stands for itself and its folded repeats; a run's
                    // folded middle stands for nothing.
                    let stand_for: u64 = got.events.iter().map(LoggedEvent::records).sum();
                    assert!(stand_for <= all.events.len() as u64, "{} {f}", case.slug);
                    read_total += all.events.len();
                    kept_total += got.events.len();
                    folded.extend(got.events);
                    whole.extend(all.events);
                }
            }
            let mut view = NodeView::empty();
            view.node_name = run.node.to_string();
            let now: Timestamp = "2030-01-01T00:00:00Z".parse().unwrap();
            let a = diagnose_with_logs(&view, &folded, &config(), now);
            let b = diagnose_with_logs(&view, &whole, &config(), now);
            let text = |d: &podcoroner_core::Diagnosis| {
                let mut s: String = d.findings.iter().map(|f| f.to_text("")).collect();
                for b in &d.startup {
                    s.push_str(&b.to_text(""));
                }
                s
            };
            let (a, b) = (text(&a), text(&b));
            if a != b {
                failures.push(format!(
                    "{} run {n_run}:\n--- through the fold\n{a}\n--- every record\n{b}",
                    case.slug
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} runs differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The repeats fold: a bounded number of each is kept.
    assert!(
        kept_total * 3 < read_total,
        "{kept_total} of {read_total} records kept"
    );
}
