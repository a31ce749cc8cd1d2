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

use jiff::Timestamp;
use podcoroner_core::log_rules::{LogKind, LoggedEvent, diagnose_with_logs};
use podcoroner_core::logs::{LineAssembler, ParseContext, classify, parse};
use podcoroner_core::{Config, EvidenceSource, Finding, FindingKind as K, NodeView, Severity as S};
use podcoroner_logs::{Source, read};

/// A finding the run must produce (fields left `None` or empty are not compared).
struct Want {
    kind: K,
    severity: S,
    /// (namespace, name)
    pod: Option<(&'static str, &'static str)>,
    /// The pod UID, or a cut one as `prefix…`.
    uid: Option<&'static str>,
    sandbox: Option<&'static str>,
    container: Option<&'static str>,
    /// Words the summary holds.
    says: &'static [&'static str],
    /// Words some evidence line holds.
    shows: &'static [&'static str],
}

const WANT: Want = Want {
    kind: K::LeakedSandbox,
    severity: S::Warning,
    pod: None,
    uid: None,
    sandbox: None,
    container: None,
    says: &[],
    shows: &[],
};

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
    want: &'static [Want],
    /// Kinds `expected.md` rules out (already excluded by the exact match; listed for the reader).
    never: &'static [K],
}

const RUN: Run = Run {
    node: "",
    kubelet: &[],
    runtime: &[],
    messages: &[],
    want: &[],
    never: &[],
};

struct Case {
    slug: &'static str,
    runs: &'static [Run],
    /// Files that are not logs, and why the diagnosis goes without them.
    not_logs: &'static [(&'static str, &'static str)],
    /// What `expected.md` asks that the logs alone cannot show ("" when nothing).
    offline_gap: &'static str,
    /// What `expected.md` asks that the logs do show but podcoroner does not find yet ("" when
    /// nothing): the wanted findings are then what podcoroner finds today, pinned against
    /// regressions, and this says what is still missing.
    missed: &'static str,
}

const SB_D2A2: &str = "d2a22654e52de76722e6d3548dc4817df1f4ea5a3fe0227e9db9b058bd296718";
const SB_CAE5: &str = "cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60";
const SB_463C: &str = "463c9db192540a2d697772a72db4853c92ff73a1fa85b56b7b1a145ae8505118";
const SB_636F: &str = "636f41863b1e9b0da2c3a72bbe55f937f71197a20253fd1c6128019403e1ad3a";
const SB_FF25: &str = "ff252b2872f45846e140c96bb096d5a23100dcd13bd25cecbf858655b336093e";
const SB_6B2A: &str = "6b2a4b9e5ea9c3afbe2774a8fcbe40602d50af24066356ebd314f1d0dfe4b024";
const SB_8599: &str = "859999c1d8d33e2f9fc54e2011ed3ce02122eb6e4725a3e9825ecfb6e621a38c";
const SB_4285: &str = "4285ab7ef1b33097068f6e2dfbf2a71c96129f45d0d6655d47d3dc80db5f0399";
const SB_055B: &str = "055b221e44a28ce8d9120f771d5e1ef201f2457ce49c58999a0147104cca2708";
const SB_5B45: &str = "5b457b6bb989b9aad8157831100599811765823793722e7ab0c3b42cb8b31607";
const SB_73E5: &str = "73e56b55f18f947a4cd6712987777888cb4087674f8ad36193df3b6b88296c21";

const CRICTL: &str = "crictl output: the CRI view, which --offline does not read";

const CASES: &[Case] = &[
    Case {
        slug: "01-docker-dead-sandbox-shm-busy",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            // warning: a leak that grows; expected.md says warning.
            want: &[Want {
                kind: K::SandboxStopFailing,
                sandbox: Some(SB_D2A2),
                says: &["removing pod sandbox", "shm mount is busy", "GC retries"],
                shows: &["kuberuntime_gc.go:142", "remote_runtime.go:126"],
                ..WANT
            }],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "the pod: these lines name only the sandbox (the CRI view's labels would name it)",
        missed: "",
    },
    Case {
        slug: "03-notready-sandbox-left-after-shim-disconnect",
        runs: &[Run {
            node: "node-a",
            kubelet: &["messages.log"],
            runtime: &["containerd.log"],
            want: &[],
            // crictl called with a pod name is not a runtime problem.
            never: &[K::FindContainerRace, K::SandboxStopFailing],
            ..RUN
        }],
        not_logs: &[
            ("crictl-inspectp.txt", CRICTL),
            (
                "crictl-logs.txt",
                "crictl's own stderr (its klog line is crictl's, pid 19578, not the kubelet's)",
            ),
            ("crictl-pods.txt", CRICTL),
            (
                "crictl-rmp.txt",
                "crictl output and a grep of /var/log/messages for the sudo line",
            ),
        ],
        offline_gap: "LeakedSandbox 06f0eea7928b1 needs the CRI view (crictl pods -s NotReady shows it 2 days old); \
                      the logs hold only \"cleaning up after shim disconnected\", which every exiting sandbox logs, \
                      and the absence of GC attempts",
        missed: "",
    },
    Case {
        slug: "04-containerd-containerstatus-notfound-hourly",
        runs: &[Run {
            node: "node-a",
            runtime: &["containerd.log"],
            // info: benign, do not alert (expected.md).
            want: &[
                Want {
                    kind: K::FindContainerRace,
                    severity: S::Info,
                    container: Some(
                        "a168cc42e01b7c518230afa4c00675c2538d0449974e9a27b4657f53592fe3c2",
                    ),
                    says: &["benign"],
                    ..WANT
                },
                Want {
                    kind: K::FindContainerRace,
                    severity: S::Info,
                    container: Some(
                        "03f5320bfb0963761a0db2c059902280993479f705369e35ca7d4a1252c39c12",
                    ),
                    ..WANT
                },
                Want {
                    kind: K::FindContainerRace,
                    severity: S::Info,
                    container: Some(
                        "164ee1aee3ab2113df05566528f7f186b68df4bedbe73b309856b8730376890d",
                    ),
                    ..WANT
                },
                // cut inside the ID: reported as the prefix that survived
                Want {
                    kind: K::FindContainerRace,
                    severity: S::Info,
                    container: Some("4b31f1c4af5594effb2cf9…"),
                    says: &["cut before the error"],
                    ..WANT
                },
            ],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "",
    },
    Case {
        slug: "05-kubelet-gc-containerstatus-notfound",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            // info; the E and I lines of one lookup are one finding, and the last line (cut,
            // no ID) is left out rather than guessed.
            want: &[
                Want {
                    kind: K::FindContainerRace,
                    severity: S::Info,
                    container: Some(
                        "72871aad1084fcbb0c3e6a1ec2eb29c3aff1c75b1e173426d435b9b10f49419f",
                    ),
                    says: &["GC", "leftover log"],
                    ..WANT
                },
                Want {
                    kind: K::FindContainerRace,
                    severity: S::Info,
                    container: Some(
                        "9429919f1fba524a457f4b8d913c24bfcdc550bcdacf7fe0901858d15bb966d4",
                    ),
                    says: &["2 records"],
                    ..WANT
                },
            ],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "",
    },
    Case {
        slug: "06-delete-race-removecontainer-twice",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            // The CNI plugin's own log given as the runtime's: its "Unable to enter namespace"
            // warning is teardown noise, not a failure (no StopPodSandbox error follows).
            runtime: &["cilium-cni.log"],
            // info; the cut NotFound line names no ID and belongs to the RemoveContainer just
            // before it; ebfe0fdb (the second ContainerDied) has no error and no finding.
            want: &[Want {
                kind: K::FindContainerRace,
                severity: S::Info,
                pod: Some(("default", "test-sts-a-0")),
                uid: Some("ab7e1b0b-453f-4627-a749-47e48c2265a6"),
                container: Some("6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0"),
                says: &["removed twice"],
                shows: &["\"RemoveContainer\""],
                ..WANT
            }],
            never: &[K::SandboxStopFailing],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "",
    },
    Case {
        slug: "08-orphaned-pod-vsphere-k8s16",
        runs: &[Run {
            kubelet: &["kubelet.log"],
            // warning (expected.md); the cut `0ea83064-3383-11e7-` is the same pod, not a third.
            want: &[
                Want {
                    kind: K::OrphanedPodVolumes,
                    uid: Some("0ea83064-3383-11e7-b2b1-005056b7dc12"),
                    says: &["2 records"],
                    ..WANT
                },
                Want {
                    kind: K::OrphanedPodVolumes,
                    uid: Some("f97942cf-337e-11e7-b2b1-005056b7dc12"),
                    says: &["could not reconstruct its volumes"],
                    shows: &[
                        "left: /var/lib/kubelet/pods/f97942cf-337e-11e7-b2b1-005056b7dc12/volumes/kubernetes.io~vsphere-volume/pvc-f969cb9e-337e-11e7-b2b1-005056b7dc12",
                        "left: /var/lib/kubelet/pods/f97942cf-337e-11e7-b2b1-005056b7dc12/volumes/kubernetes.io~vsphere-volume/pvc-f94ac56f-337e-11e7-b2b1-005056b7dc12",
                    ],
                    ..WANT
                },
            ],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "whether a volume is still mounted (the escalation expected.md asks for) needs /proc/mounts",
        missed: "",
    },
    Case {
        slug: "09-orphaned-pod-volume-paths-multi-version",
        // Four pastes from different reporters and nodes: one diagnosis each. warning (expected.md).
        runs: &[
            Run {
                node: "node-a",
                kubelet: &["kubelet-1.14.3-journald.log"],
                want: &[Want {
                    kind: K::OrphanedPodVolumes,
                    uid: Some("5da3387d-ad1c-11ea-a025-525400767782"),
                    says: &["volume paths"],
                    ..WANT
                }],
                ..RUN
            },
            Run {
                kubelet: &["kubelet-1.14.8-wrapped.log"],
                want: &[Want {
                    kind: K::OrphanedPodVolumes,
                    uid: Some("2b363d17-e69d-11ea-bda2-44a842186bcd"),
                    says: &["volume subpaths"],
                    ..WANT
                }],
                ..RUN
            },
            Run {
                kubelet: &["kubelet-2018-description.log"],
                want: &[Want {
                    kind: K::OrphanedPodVolumes,
                    uid: Some("2815f27a-219b-11e8-8a2a-ec0d9a3a445a"),
                    ..WANT
                }],
                ..RUN
            },
            // the etcd line is another program's and gives nothing
            Run {
                node: "node-b",
                kubelet: &["messages-1.14.3.log"],
                want: &[Want {
                    kind: K::OrphanedPodVolumes,
                    uid: Some("0fbdedac-ebfe-11e9-a2b6-00…"),
                    ..WANT
                }],
                ..RUN
            },
        ],
        not_logs: &[(
            "pod-dir-listing.txt",
            "ls of the pod directory: confirms the volume-subpaths variant the wrapped line already names",
        )],
        offline_gap: "",
        missed: "",
    },
    Case {
        slug: "11-orphaned-pod-configmap-dir-not-empty",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            // warning; the repeats every 2 s are one finding; numErrs=2 → "at least 2".
            want: &[Want {
                kind: K::OrphanedPodVolumes,
                uid: Some("6ac9044e-b7ca-44d1-9bb3-90d50093f6d8"),
                says: &["at least 2 orphaned pods"],
                shows: &[
                    "left: /var/lib/kubelet/pods/6ac9044e-b7ca-44d1-9bb3-90d50093f6d8/volumes/kubernetes.io~configmap/config-volume",
                ],
                ..WANT
            }],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "",
    },
    Case {
        slug: "12-orphaned-pod-subpath-forker-out-of-order",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            want: &[Want {
                kind: K::OrphanedPodVolumes,
                uid: Some("11cfbe01-0e47-4835-97e4-dbf46dfccd66"),
                says: &[
                    "volume subpaths",
                    "at least 3",
                    "volumes/ directory was cleaned",
                ],
                shows: &[
                    "left: /var/lib/kubelet/pods/11cfbe01-0e47-4835-97e4-dbf46dfccd66/volume-subpaths/app-certs/kernel-module-injector/0",
                ],
                ..WANT
            }],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "",
    },
    Case {
        slug: "14-mirror-pod-outdated-delete-loop",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            // expected.md's rule: two "outdated" deletions of one pod within a minute are a
            // loop (its "error" → warning); a single one is normal (info). In this 5 s excerpt
            // kube-scheduler and kube-apiserver are deleted once each.
            want: &[
                Want {
                    kind: K::MirrorPodRecreateLoop,
                    pod: Some(("kube-system", "kube-controller-manager-node-a")),
                    says: &[
                        "d4746eba-4156-11e8-84f4-0050569b7580 → d5e29b69-4156-11e8-84f4-0050569b7580",
                        "loop",
                    ],
                    ..WANT
                },
                Want {
                    kind: K::MirrorPodRecreateLoop,
                    pod: Some(("kube-system", "etcd-node-a")),
                    says: &[
                        "d50d021a-4156-11e8-84f4-0050569b7580 → d6d6c835-4156-11e8-84f4-0050569b7580",
                    ],
                    ..WANT
                },
                Want {
                    kind: K::MirrorPodRecreateLoop,
                    severity: S::Info,
                    pod: Some(("kube-system", "kube-scheduler-node-a")),
                    says: &["d52b8124-4156-11e8-84f4-0050569b7580", "once"],
                    ..WANT
                },
                Want {
                    kind: K::MirrorPodRecreateLoop,
                    severity: S::Info,
                    pod: Some(("kube-system", "kube-apiserver-node-a")),
                    says: &["d5a59d14-4156-11e8-84f4-0050569b7580", "once"],
                    ..WANT
                },
            ],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "",
    },
    Case {
        slug: "16-mirror-pod-create-alreadyexists-2015",
        runs: &[Run {
            node: "kubernetes-master",
            kubelet: &["kubelet.log"],
            want: &[Want {
                kind: K::MirrorPodCreateFailed,
                pod: Some(("default", "etcd-server-kubernetes-master")),
                says: &["already exists"],
                ..WANT
            }],
            ..RUN
        }],
        not_logs: &[(
            "docker-ps.txt",
            "docker ps: the running container 2752cfc55b8c and the static pod hash in its name are runtime state",
        )],
        offline_gap: "the running container and the static pod hash (5f35d49b…) come from docker ps, not the log",
        missed: "",
    },
    Case {
        slug: "17-static-pod-removed-mirror-deleted-no-grace",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            // info: the lifecycle of a removed manifest, with its mirror pod deleted 278 ms
            // later (the missing grace period of k/k #90999); joined by full name.
            want: &[Want {
                kind: K::StaticPodRemoved,
                severity: S::Info,
                pod: Some(("openshift-kube-apiserver", "kube-apiserver-node-a")),
                uid: Some("60d66dd8b81c2a4756d2e2f69ec1e3fc"),
                says: &[
                    "08b81ce8-b243-11e9-a38f-fa163e8871d1",
                    "278ms later",
                    "grace period",
                ],
                shows: &["Reducing cpu to minimum"],
                ..WANT
            }],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "the warning case (containers still running past the grace period) needs the CRI view",
        missed: "",
    },
    Case {
        slug: "18-static-pod-not-removed-killpodsandbox-cni",
        runs: &[Run {
            node: "10.0.0.11",
            kubelet: &["kubelet.log"],
            // REMOVE source="file", then KillPodSandbox fails (the cut "failed to destr" is a
            // CNI teardown): expected.md's "error" → warning (from the logs the sandbox's state
            // is unknown; the state rule says critical when it sees it READY).
            want: &[Want {
                kind: K::StaticPodNotRemoved,
                pod: Some(("team-ns", "static-nginx-10.0.0.11")),
                uid: Some("5d6d2cc2c526ec6310afc8c64fac7052"),
                says: &["removed from its file source", "CNI teardown"],
                shows: &[
                    "7d0f1944976c8b4d75f44226e5f1ae59d08da416e4d776f47a2a265a2015548a",
                    "SyncLoop REMOVE",
                ],
                ..WANT
            }],
            never: &[K::StuckTerminatingPod, K::StaticPodRemoved],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "the sandbox ID is not in the excerpt (the remediation looks it up by the io.kubernetes.pod.uid \
                      label); whether the mirror pod stays needs the API view",
        missed: "",
    },
    Case {
        slug: "19-static-pod-recreate-1.22-regression",
        runs: &[Run {
            node: "127.0.0.1",
            kubelet: &["kubelet-part1.log", "kubelet-part2.log"],
            // What the two windows show is the removal (info). "Container not found in pod's
            // containers" is benign and not reported.
            want: &[Want {
                kind: K::StaticPodRemoved,
                severity: S::Info,
                pod: Some(("default", "mypod-127.0.0.1")),
                uid: Some("7c0663d52f9e8c61c7a733304c23b60f"),
                ..WANT
            }],
            never: &[K::FindContainerRace],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "StuckPodWorker (the re-add with the same UID) needs the SyncLoop ADD source=\"file\" that put the \
                      manifest back; neither window holds it (log_rules' unit test adds it to these lines)",
        missed: "",
    },
    Case {
        slug: "21-cni-teardown-aws-vpc-del-failed-bottlerocket",
        runs: &[Run {
            node: "node-a",
            // one journal: containerd and kubelet lines
            kubelet: &["node-journal.log"],
            // The 3 failure lines (containerd, remote_runtime, kuberuntime_gc) are one finding
            // with one attempt; the cause from the lines that still hold it. expected.md's
            // "error" → warning (one sandbox).
            want: &[Want {
                kind: K::SandboxStopFailing,
                sandbox: Some(SB_CAE5),
                says: &["CNI teardown", "1 attempt, 3 log records", "GC retries"],
                shows: &["del cmd: failed to process delete request"],
                ..WANT
            }],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "the pod: these lines name only the sandbox",
        missed: "",
    },
    Case {
        slug: "23-cni-teardown-empty-netns-sriov-dockershim",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            // warning (expected.md; error only once it repeats over GC periods). The ID-less
            // "Error deleting network" belongs to the stop failure next to it.
            want: &[Want {
                kind: K::SandboxStopFailing,
                pod: Some(("debug", "app-1-3391168842-1cbzd")),
                sandbox: Some(SB_463C),
                says: &["network namespace is gone", "3 log records"],
                ..WANT
            }],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "",
    },
    Case {
        slug: "24-cni-teardown-plugin-missing-flannel-dockershim",
        runs: &[Run {
            node: "node-a",
            kubelet: &["messages.log"],
            // critical: "every sandbox teardown on the node will fail the same way" (node-wide).
            // dockerd's "is already stopped" is a consequence, not a finding.
            want: &[Want {
                kind: K::SandboxStopFailing,
                severity: S::Critical,
                pod: Some(("jaeger", "es-master-7fb4d9447d-bj7z8")),
                sandbox: Some(SB_636F),
                says: &["plugin flannel", "every sandbox teardown"],
                ..WANT
            }],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "",
    },
    Case {
        slug: "25-cni-teardown-flannel-netconf-empty-nested-escaping",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            // Two findings: stuck-terminating by an empty flannel netconf ("error" → warning),
            // and the orphaned pod directory (warning), numErrs=34.
            want: &[
                Want {
                    kind: K::StuckTerminatingPod,
                    pod: Some(("team-ns", "pvc-tester-mqwqq")),
                    uid: Some("e1909e28-5731-4111-8031-3c989b5dc0cd"),
                    sandbox: Some(SB_FF25),
                    says: &["empty cached CNI result", "flannel"],
                    ..WANT
                },
                Want {
                    kind: K::OrphanedPodVolumes,
                    uid: Some("04bd08f8-a895-4a4a-939b-e6521d5f17d0"),
                    says: &["at least 34"],
                    ..WANT
                },
            ],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "",
    },
    Case {
        slug: "26-cni-teardown-weave-journalctl-truncated",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            // critical: "node-wide: every teardown will fail" (the weave-net binary cannot
            // run). d8f03fbd is tied to 859999c1 by adjacency ("Failed to stop sandbox", then
            // "killPodWithSyncResult failed"); a6b466fa's line is cut before the reason.
            want: &[
                Want {
                    kind: K::StuckTerminatingPod,
                    severity: S::Critical,
                    uid: Some("a6b466fa-60e6-4ced-9eef-380d0e41d63f"),
                    sandbox: Some(SB_6B2A),
                    says: &["weave-net", "every sandbox teardown"],
                    ..WANT
                },
                Want {
                    kind: K::StuckTerminatingPod,
                    severity: S::Critical,
                    uid: Some("d8f03fbd-0add-47eb-b972-491f9a465ad1"),
                    sandbox: Some(SB_8599),
                    says: &["plugin weave-net", "3 log records"],
                    ..WANT
                },
            ],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "",
    },
    Case {
        slug: "28-stuck-terminating-empty-cni-cache-aws",
        runs: &[
            // The logs alone: containerd's transient "cni plugin not initialized" (warning).
            Run {
                runtime: &["containerd.log"],
                want: &[Want {
                    kind: K::SandboxStopFailing,
                    sandbox: Some(SB_4285),
                    says: &["cni plugin not initialized"],
                    ..WANT
                }],
                ..RUN
            },
            // With the kubectl describe event read as message text (the API's copy of the
            // kubelet's KillPodSandbox error): one finding for the pod, the containerd line
            // joined by sandbox ID, the persistent cause (empty cache) over the transient one.
            // expected.md's "error" → warning.
            Run {
                runtime: &["containerd.log"],
                messages: &["kubectl-describe-event.txt"],
                want: &[Want {
                    kind: K::StuckTerminatingPod,
                    uid: Some("a7ea2280-7361-4329-8566-89975485b20e"),
                    sandbox: Some(SB_4285),
                    says: &["empty cached CNI result", "aws-cni"],
                    ..WANT
                }],
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
        missed: "",
    },
    Case {
        slug: "29-blog-talos-stoppodsandbox-empty-cni-cache",
        runs: &[Run {
            node: "node-a",
            messages: &["kubelet-message.txt"],
            // warning (expected.md).
            want: &[Want {
                kind: K::SandboxStopFailing,
                sandbox: Some(SB_055B),
                says: &["empty cached CNI result", "cbr0"],
                ..WANT
            }],
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
        missed: "",
    },
    Case {
        slug: "30-stuck-terminating-crio-kata-stop-infra-loop",
        runs: &[
            // node-a: CRI-O and kubelet in one journal; only the CRI client's line, no caller.
            // expected.md's "error" → warning.
            Run {
                node: "node-a",
                kubelet: &["node-a-journal.log"],
                want: &[Want {
                    kind: K::SandboxStopFailing,
                    sandbox: Some(SB_5B45),
                    shows: &["failed to stop infra container"],
                    ..WANT
                }],
                ..RUN
            },
            // node-b: hard-wrapped lines; the pod from the k8s_POD_… infra container name.
            Run {
                node: "node-b",
                kubelet: &["node-b-kubelet-wrapped.log"],
                want: &[Want {
                    kind: K::StuckTerminatingPod,
                    pod: Some(("f48db403-dcfd-5852-90f9-dd8210f46a9e", "app-1-0")),
                    uid: Some("6abac9df-1ac3-4ec1-8375-66bdead3b596"),
                    sandbox: Some(SB_73E5),
                    says: &["ttrpc: closed", "2 log records"],
                    ..WANT
                }],
                ..RUN
            },
        ],
        not_logs: &[("crictl.txt", CRICTL)],
        offline_gap: "node-a: StuckTerminatingPod needs the caller's line (KillPodSandbox), which the excerpt lacks, so \
                      the finding is the sandbox's; its pod name sits in a runtime name cut after it \
                      (k8s_POD_<name>_…) and is not extracted",
        missed: "",
    },
    Case {
        slug: "32-node-shutdown-stuck-talos-kubelet-json",
        runs: &[Run {
            node: "10.0.0.8",
            kubelet: &["kubelet-part1.jsonl", "kubelet-part2.jsonl"],
            // critical (expected.md): PLEG inactive 16h, runtime calls time out. The invalidated
            // token is a client's problem, not a finding.
            want: &[Want {
                kind: K::RuntimeUnhealthy,
                severity: S::Critical,
                says: &["last active 16h14m ago", "2 calls to the runtime timed out"],
                ..WANT
            }],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "",
    },
    Case {
        slug: "36-sandbox-name-reserved-after-hard-reboot-ts-skew",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            runtime: &["containerd.log"],
            // critical (expected.md): PLEG inactive 66h, the runtime down.
            want: &[Want {
                kind: K::RuntimeUnhealthy,
                severity: S::Critical,
                says: &["last active 2d18h ago", "container runtime is down"],
                ..WANT
            }],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "LeakedSandbox 02b34412… needs \"failed to reserve sandbox name\" (named in the issue title, not in \
                      the excerpt; the rule is unit-tested); \"Loaded sandbox\" alone is what containerd logs for every \
                      sandbox when it restarts",
        missed: "",
    },
    // Added with the prefix layer (issue 12).
    Case {
        slug: "02-sandbox-not-gc-until-kubelet-restart",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log", "kubelet-grep-n.log"],
            want: &[],
            ..RUN
        }],
        not_logs: &[
            ("crictl-pods.txt", CRICTL),
            (
                "kubectl-get-pods.txt",
                "kubectl output: the API view, which --offline does not read",
            ),
        ],
        offline_gap: "LeakedSandbox for the six NotReady nginx sandboxes needs the CRI view (crictl-pods.txt)",
        missed: "the mechanism signature expected.md asks for: a second syncTerminatingPod for \
                 default/nginx-75cd7474f-tt7b8 after \"Pod is orphaned and must be torn down\" (kubelet 1.23 before k/k #107731)",
    },
    Case {
        slug: "07-crio-deletecontainer-id-does-not-exist",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            // info: benign, CRI-O's wording (expected.md).
            want: &[Want {
                kind: K::FindContainerRace,
                severity: S::Info,
                container: Some("11f958631d8e575f086c6499b2ca431eb875f9f2f8e253f5882b06d69798d7e6"),
                ..WANT
            }],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "",
    },
    Case {
        slug: "10-orphaned-pod-k3s-longhorn-vol-data-json",
        runs: &[Run {
            node: "node-a",
            kubelet: &["k3s.log"],
            want: &[Want {
                kind: K::OrphanedPodVolumes,
                uid: Some("7c718603-7246-49e4-86df-c77a4a8fe868"),
                ..WANT
            }],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "",
    },
    Case {
        slug: "13-orphaned-pod-subpath-syslog-no-pid",
        runs: &[Run {
            node: "node-a",
            kubelet: &["messages.log"],
            want: &[Want {
                kind: K::OrphanedPodVolumes,
                uid: Some("306a14d5-2c8f-44d8-bc13-857539fab97d"),
                says: &["subpaths"],
                shows: &["/var/lib/data/kubelet/pods/306a14d5"],
                ..WANT
            }],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "",
    },
    Case {
        slug: "15-mirror-pod-create-forbidden-psp",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            // error in expected.md: control-plane pods invisible to the API (warning).
            want: &[
                Want {
                    kind: K::MirrorPodCreateFailed,
                    uid: Some("35d2d3b729826258ed71101e688b6bf4"),
                    pod: Some(("kube-system", "kube-controller-manager-node-a")),
                    ..WANT
                },
                Want {
                    kind: K::MirrorPodCreateFailed,
                    uid: Some("2908bf33d480a29f35190eda0d4f912b"),
                    pod: Some(("kube-system", "kube-proxy-node-a")),
                    ..WANT
                },
            ],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "",
    },
    Case {
        slug: "20-static-pod-not-restarted-after-manifest-back",
        runs: &[
            Run {
                node: "node-a",
                kubelet: &["kubelet.log"],
                want: &[Want {
                    kind: K::StaticPodRemoved,
                    severity: S::Info,
                    pod: Some(("team-ns", "kube-apiserver-node-a")),
                    ..WANT
                }],
                ..RUN
            },
            Run {
                node: "node-a",
                kubelet: &["kubelet-quoted-comment.md"],
                want: &[],
                ..RUN
            },
        ],
        not_logs: &[],
        offline_gap: "",
        missed: "static-pod-not-restarted (error) for team-ns/kube-apiserver-node-a: the NotFound of \
                 getPodContainerStatuses during termination turned fatal (kubelet 1.22 before k/k #107670); \
                 podcoroner has no finding for a static pod that does not come back with its manifest",
    },
    Case {
        slug: "22-cni-teardown-calico-killed-deadline",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            runtime: &["containerd.log"],
            // error in expected.md: a leak through the GC (warning).
            want: &[
                Want {
                    kind: K::SandboxStopFailing,
                    sandbox: Some(
                        "b25b1fe9f0eae615534102c4a2d370897be12abe05d26408e6baed4556c3d1f1",
                    ),
                    says: &["timeout"],
                    ..WANT
                },
                Want {
                    kind: K::SandboxStopFailing,
                    sandbox: Some(
                        "1977065b951e106cb8f86a5a3f30d11dd2bd3993d8be4056ed80f7d480705db1",
                    ),
                    says: &["CNI teardown"],
                    ..WANT
                },
                Want {
                    kind: K::SandboxStopFailing,
                    ..WANT
                },
            ],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "the third SandboxStopFailing names no sandbox (its line is cut inside err): it should join \
                 the b25b1fe9f0eae incident; the ADD failure of coredns-f5cb5585b-s2bxk is not reported",
    },
    Case {
        slug: "27-crictl-stopp-calico-datastore-unreachable",
        runs: &[Run {
            kubelet: &["crictl-stopp.txt"],
            want: &[],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "cni-teardown-failure for 5dc62a1a5e19c (datastore unreachable): crictl's FATA line is read \
                 (logrus text) but its message is not in the catalogue",
    },
    Case {
        slug: "31-stuck-terminating-talos-containerd-json",
        runs: &[Run {
            node: "node-a",
            runtime: &["containerd.jsonl"],
            // error in expected.md: the containers do not die (warning).
            want: &[
                Want {
                    kind: K::ContainerStopFailing,
                    container: Some(
                        "a96e7dc6ce5cae0af965d63a71238f78932e00520f8103fc24850db7a7b94bb8",
                    ),
                    says: &["SIGKILL was sent"],
                    ..WANT
                },
                Want {
                    kind: K::ContainerStopFailing,
                    container: Some(
                        "3024c43549c33fa54cb9e128e853c92be71ef315ed6aae7cc2adfc4ebef5da35",
                    ),
                    says: &["SIGKILL was sent"],
                    ..WANT
                },
            ],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "the containers' pods (CRI ContainerStatus labels)",
        missed: "",
    },
    Case {
        slug: "33-notready-sandboxes-after-reboot-crictl-inspectp",
        runs: &[],
        not_logs: &[
            (
                "crictl-inspectp-summary.txt",
                "the reporter's summary of crictl inspectp",
            ),
            ("crictl-inspectp.json", CRICTL),
            ("find-empty-cni-files.txt", "find output over /var/lib/cni"),
        ],
        offline_gap: "the NotReady sandbox cf46d31391b99 after a reboot (info) is in the CRI view only",
        missed: "",
    },
    Case {
        slug: "34-removepodsandbox-no-such-id-wrapped-ids",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            want: &[Want {
                kind: K::SandboxStopFailing,
                sandbox: Some("549a709981c68792d4ddd6824af52ae1e7b662328c24ef196e373d4f3f0a055f"),
                pod: Some(("calico-system", "csi-node-driver-ffgtk")),
                uid: Some("34eca578-c907-419e-9bfe-b76e298b8bf2"),
                ..WANT
            }],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "",
    },
    Case {
        slug: "35-cni-teardown-calico-nodename-logpkg-blank-lines",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            want: &[Want {
                kind: K::StuckTerminatingPod,
                sandbox: Some("e0f6665744e6f48928559cbfb3662c9d21a009331801da410c8152b2d37cdd0e"),
                uid: Some("96eaf81f-6e4f-4b5a-aacd-bfd065845a6f"),
                ..WANT
            }],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "expected.md says node-wide (every Calico teardown fails): critical, not warning",
    },
    Case {
        slug: "37-find-container-race-french-locale-journald",
        runs: &[Run {
            node: "node-a",
            kubelet: &["kubelet.log"],
            // info: benign (expected.md).
            want: &[
                Want {
                    kind: K::FindContainerRace,
                    severity: S::Info,
                    container: Some(
                        "3766a2d46a3d49391718d0f8ff919d1beec53f2179aa9101abf3177d5199773b",
                    ),
                    ..WANT
                },
                Want {
                    kind: K::FindContainerRace,
                    severity: S::Info,
                    container: Some(
                        "f9186829b2bbde3ac1745cdc32d5fd61b9df5cb1ea046675ad34852135f04067",
                    ),
                    ..WANT
                },
                Want {
                    kind: K::FindContainerRace,
                    severity: S::Info,
                    container: Some(
                        "9e08ba78d1e60a2ef8389518e9d95b100baea5880be04336bb4c8db3e35f7d0f",
                    ),
                    ..WANT
                },
                Want {
                    kind: K::FindContainerRace,
                    severity: S::Info,
                    container: Some(
                        "71b0eae0bec1cc1937097679c658e20f0cb7e87c781c29218bc245ad5b792c7b",
                    ),
                    ..WANT
                },
            ],
            ..RUN
        }],
        not_logs: &[],
        offline_gap: "",
        missed: "the warning for CreateContainer in sandbox f09ac71b68bbe DeadlineExceeded (Docker too slow)",
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
    }
}

/// Message-only text through the core pipeline (what [`read`] does, with
/// `ParseContext::message_only`).
fn read_messages(path: &Path) -> Vec<LoggedEvent> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut ctx = ParseContext::new(2025);
    ctx.message_only = true;
    let mut asm = LineAssembler::new();
    let mut out = Vec::new();
    let origin = path.display().to_string();
    let mut take = |text: &str, line: u64, ctx: &mut ParseContext| {
        let parsed = parse(text, ctx);
        if let Some(event) = classify(&parsed) {
            out.push(LoggedEvent {
                event: event.into_owned(),
                log: LogKind::Kubelet,
                origin: origin.clone(),
                line,
                text: text.to_string(),
            });
        }
    };
    for l in text.lines() {
        if let Some(r) = asm.push(l) {
            let (t, n) = (r.text.to_string(), r.first_line);
            take(&t, n, &mut ctx);
        }
    }
    if let Some(r) = asm.finish() {
        let (t, n) = (r.text.to_string(), r.first_line);
        take(&t, n, &mut ctx);
    }
    out
}

fn diagnose(dir: &Path, run: &Run) -> Vec<Finding> {
    let mut events = Vec::new();
    for (files, kind) in [
        (run.kubelet, LogKind::Kubelet),
        (run.runtime, LogKind::Runtime),
    ] {
        for f in files {
            let got =
                read(&Source::File(dir.join(f)), kind, None).unwrap_or_else(|e| panic!("{f}: {e}"));
            events.extend(got.events);
        }
    }
    for f in run.messages {
        events.extend(read_messages(&dir.join(f)));
    }
    let mut view = NodeView::empty();
    view.node_name = run.node.to_string();
    let now: Timestamp = "2030-01-01T00:00:00Z".parse().unwrap();
    let d = diagnose_with_logs(&view, &events, &config(), now);
    // Offline, the state rules say they were skipped.
    assert!(
        d.skipped.iter().any(|s| s.kind == K::LeakedSandbox),
        "the skipped state rules are listed"
    );
    d.findings
}

fn matches(f: &Finding, w: &Want) -> bool {
    let pod = f.pod.as_ref();
    f.kind == w.kind
        && f.severity == w.severity
        && w.pod
            .is_none_or(|(ns, name)| pod.is_some_and(|p| p.namespace == ns && p.name == name))
        && w.uid.is_none_or(|u| pod.is_some_and(|p| p.uid == u))
        && w.sandbox.is_none_or(|s| f.sandbox_id.as_deref() == Some(s))
        && w.container
            .is_none_or(|c| f.container_id.as_deref() == Some(c))
        && w.says.iter().all(|s| f.summary.contains(s))
        && w.shows
            .iter()
            .all(|s| f.evidence.iter().any(|e| e.detail.contains(s)))
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
            .filter(|n| n != "source.txt" && n != "expected.md")
            .collect();
        let used: BTreeSet<String> = case
            .runs
            .iter()
            .flat_map(|r| r.kubelet.iter().chain(r.runtime).chain(r.messages))
            .chain(case.not_logs.iter().map(|(f, _)| f))
            .map(|f| f.to_string())
            .collect();
        assert_eq!(on_disk, used, "{}: every file has a role", case.slug);
        assert!(
            case.not_logs.iter().all(|(_, why)| !why.is_empty()),
            "{}",
            case.slug
        );
        assert!(
            case.runs.iter().all(|r| !r.want.is_empty())
                || !case.offline_gap.is_empty()
                || !case.missed.is_empty(),
            "{}: a case without findings offline says why",
            case.slug
        );
        let text: String = on_disk
            .iter()
            .map(|f| fs::read_to_string(dir.join(f)).unwrap())
            .collect();
        let unwrapped = text.replace('\n', "");

        for (n_run, run) in case.runs.iter().enumerate() {
            let found = diagnose(&dir, run);
            let here = format!("{} run {n_run}", case.slug);
            let mut unmatched: Vec<&Finding> = found.iter().collect();
            for w in run.want {
                match unmatched.iter().position(|f| matches(f, w)) {
                    Some(at) => {
                        unmatched.remove(at);
                    }
                    None => failures.push(format!(
                        "{here}: no {:?} {:?} pod={:?} uid={:?} sandbox={:?} container={:?} says={:?} shows={:?}",
                        w.kind, w.severity, w.pod, w.uid, w.sandbox, w.container, w.says, w.shows
                    )),
                }
            }
            for f in &unmatched {
                failures.push(format!("{here}: unexpected {}", show(f)));
            }
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
                if f.evidence.iter().any(|e| {
                    !matches!(
                        e.source,
                        EvidenceSource::KubeletLog | EvidenceSource::RuntimeLog
                    )
                }) {
                    failures.push(format!("{here}: offline evidence from a view: {}", show(f)));
                }
            }
            if !failures.is_empty() && !unmatched.is_empty() {
                for f in &found {
                    failures.push(format!("{here}:   found {}", show(f)));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
