//! Every real case in `testdata/cases/` through the log-line layer: each physical line of each
//! log file goes through [`LineAssembler`], [`parse`] and [`classify`].
//!
//! Per file the test pins how many records were parsed and which were not (by their first line
//! number): unparsed records are allowed only where the text is not a log line (shell prompts,
//! command echoes, crictl/docker tables, `ls` output, crictl's plain stdout), and each file says
//! why. Per case it pins the key events `expected.md` names (kind and IDs, exact count) and the
//! event kinds it rules out. A case folder without an entry here fails the test.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use podcoroner_core::logs::{
    Cause, CniFailure, ConfigSource, Event, EventKind, Format, LineAssembler, ParseContext,
    PlegType, SyncOp, classify, event_kind, parse,
};

/// One log file of a case.
struct File {
    name: &'static str,
    /// Year hint for yearless timestamps (from `source.txt`, or the UUIDv1 dates in the lines).
    year: i32,
    /// The source is message-only text (read with [`ParseContext::message_only`]).
    message_only: bool,
    /// Records after joining wrapped lines.
    records: usize,
    /// First line numbers of the records that fit no shape.
    unparsed: &'static [u64],
    /// Why those are not log lines.
    why: &'static str,
}

const FILE: File = File {
    name: "",
    year: 0,
    message_only: false,
    records: 0,
    unparsed: &[],
    why: "",
};

/// An event the case must produce `n` times (fields left `None` are not compared).
struct Want {
    kind: EventKind,
    uid: Option<&'static str>,
    sandbox: Option<&'static str>,
    container: Option<&'static str>,
    object: Option<&'static str>,
    /// (namespace, name)
    pod: Option<(&'static str, &'static str)>,
    partial: Option<&'static str>,
    cause: Option<Cause>,
    count: Option<u32>,
    source: Option<ConfigSource>,
    time: Option<&'static str>,
    n: usize,
}

const WANT: Want = Want {
    kind: EventKind::ErrorSyncingPod,
    uid: None,
    sandbox: None,
    container: None,
    object: None,
    pod: None,
    partial: None,
    cause: None,
    count: None,
    source: None,
    time: None,
    n: 1,
};

struct Case {
    slug: &'static str,
    files: &'static [File],
    events: &'static [Want],
    /// Event kinds `expected.md` rules out for this case.
    absent: &'static [EventKind],
}

const PROMPT: &str = "shell prompts and command echoes";

const SB_CAE5: &str = "cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60";
const SB_D2A2: &str = "d2a22654e52de76722e6d3548dc4817df1f4ea5a3fe0227e9db9b058bd296718";
const SB_463C: &str = "463c9db192540a2d697772a72db4853c92ff73a1fa85b56b7b1a145ae8505118";
const SB_4285: &str = "4285ab7ef1b33097068f6e2dfbf2a71c96129f45d0d6655d47d3dc80db5f0399";
const SB_8599: &str = "859999c1d8d33e2f9fc54e2011ed3ce02122eb6e4725a3e9825ecfb6e621a38c";
const SB_73E5: &str = "73e56b55f18f947a4cd6712987777888cb4087674f8ad36193df3b6b88296c21";
const C_6CF7: &str = "6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0";
const C_9429: &str = "9429919f1fba524a457f4b8d913c24bfcdc550bcdacf7fe0901858d15bb966d4";

const CASES: &[Case] = &[
    Case {
        slug: "01-docker-dead-sandbox-shm-busy",
        files: &[File {
            name: "kubelet.log",
            year: 2017,
            records: 2,
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::RemovePodSandboxFailed,
                sandbox: Some(SB_D2A2),
                cause: Some(Cause::RuntimeBusy),
                time: Some("2017-08-29T19:33:49.707741Z"),
                ..WANT
            },
            Want {
                kind: EventKind::RemoveSandboxFailed,
                sandbox: Some(SB_D2A2),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "03-notready-sandbox-left-after-shim-disconnect",
        files: &[
            File {
                name: "containerd.log",
                year: 2023,
                records: 3,
                unparsed: &[1, 3],
                why: PROMPT,
                ..FILE
            },
            File {
                name: "crictl-inspectp.txt",
                year: 2023,
                records: 3,
                unparsed: &[1, 3],
                why: PROMPT,
                ..FILE
            },
            File {
                name: "crictl-logs.txt",
                year: 2023,
                records: 3,
                unparsed: &[1],
                why: PROMPT,
                ..FILE
            },
            File {
                name: "crictl-pods.txt",
                year: 2023,
                records: 4,
                unparsed: &[1, 2, 3, 4],
                why: "prompts and a crictl pods table (the pasted CRI view: core::pasted, --crictl-pods)",
                ..FILE
            },
            File {
                name: "crictl-rmp.txt",
                year: 2023,
                records: 8,
                unparsed: &[1, 2, 3, 4, 5, 6, 8],
                why: "prompts and crictl's stdout (`Removed sandbox …`)",
                ..FILE
            },
            File {
                name: "messages.log",
                year: 2023,
                records: 5,
                unparsed: &[1, 3, 4],
                why: PROMPT,
                ..FILE
            },
        ],
        events: &[
            // containerd's only word on the sandbox, in the journal and in /var/log/messages
            Want {
                kind: EventKind::ShimDisconnected,
                object: Some("06f0eea7928b1a540bcf0a8c1a90497200faf30b4dec4858e046e80a970db1a5"),
                time: Some("2023-01-20T12:26:08.948042485Z"),
                n: 2,
                ..WANT
            },
            // crictl called with a pod name: the NotFound lines name no ID at all
            Want {
                kind: EventKind::SandboxNotFound,
                ..WANT
            },
            Want {
                kind: EventKind::ContainerStatusFailed,
                cause: Some(Cause::NotFound),
                ..WANT
            },
            // the kubelet's event recorder: the pod stopped, its UID in the rejected event's dump
            // (wrapped mid-word and cut at the end)
            Want {
                kind: EventKind::PodStopRecorded,
                uid: Some("f60d3b37-9704-4142-8dc7-430a4725ecfe"),
                pod: Some(("team-ns", "app-1-0")),
                ..WANT
            },
        ],
        // no StopPodSandbox / RemovePodSandbox attempts by the kubelet
        absent: &[
            EventKind::StopPodSandboxStarted,
            EventKind::StopPodSandboxFailed,
            EventKind::RemovePodSandboxStarted,
            EventKind::RemovePodSandboxFailed,
            EventKind::StopSandboxBeforeRemoveFailed,
            EventKind::RemoveSandboxFailed,
        ],
    },
    Case {
        slug: "04-containerd-containerstatus-notfound-hourly",
        files: &[File {
            name: "containerd.log",
            year: 2025,
            records: 5,
            unparsed: &[1],
            why: "a `# journalctl` command echo",
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::ContainerStatusFailed,
                container: Some("a168cc42e01b7c518230afa4c00675c2538d0449974e9a27b4657f53592fe3c2"),
                cause: Some(Cause::NotFound),
                time: Some("2025-03-14T06:34:57.527007174Z"),
                ..WANT
            },
            Want {
                kind: EventKind::ContainerStatusFailed,
                container: Some("03f5320bfb0963761a0db2c059902280993479f705369e35ca7d4a1252c39c12"),
                cause: Some(Cause::NotFound),
                ..WANT
            },
            Want {
                kind: EventKind::ContainerStatusFailed,
                container: Some("164ee1aee3ab2113df05566528f7f186b68df4bedbe73b309856b8730376890d"),
                cause: Some(Cause::NotFound),
                ..WANT
            },
            // cut inside the ID: a prefix, never a full ID
            Want {
                kind: EventKind::ContainerStatusFailed,
                partial: Some("4b31f1c4af5594effb2cf9"),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "05-kubelet-gc-containerstatus-notfound",
        files: &[File {
            name: "kubelet.log",
            year: 2022,
            records: 4,
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::GcContainerStatusFailed,
                container: Some("72871aad1084fcbb0c3e6a1ec2eb29c3aff1c75b1e173426d435b9b10f49419f"),
                cause: Some(Cause::NotFound),
                ..WANT
            },
            Want {
                kind: EventKind::GcContainerStatusFailed,
                container: Some(C_9429),
                cause: Some(Cause::NotFound),
                ..WANT
            },
            Want {
                kind: EventKind::ContainerStatusFailed,
                container: Some(C_9429),
                cause: Some(Cause::NotFound),
                ..WANT
            },
            // the last line is cut in its message: known by its start, no ID
            Want {
                kind: EventKind::ContainerStatusFailed,
                cause: Some(Cause::Other),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "06-delete-race-removecontainer-twice",
        files: &[
            File {
                name: "cilium-cni.log",
                year: 2023,
                records: 1,
                ..FILE
            },
            File {
                name: "kubelet.log",
                year: 2023,
                records: 7,
                ..FILE
            },
        ],
        events: &[
            Want {
                kind: EventKind::SyncLoop(SyncOp::Delete),
                pod: Some(("default", "test-sts-a-0")),
                ..WANT
            },
            Want {
                kind: EventKind::KillingContainer,
                uid: Some("ab7e1b0b-453f-4627-a749-47e48c2265a6"),
                container: Some(C_6CF7),
                ..WANT
            },
            Want {
                kind: EventKind::Pleg(PlegType::ContainerDied),
                uid: Some("ab7e1b0b-453f-4627-a749-47e48c2265a6"),
                container: Some(C_6CF7),
                ..WANT
            },
            Want {
                kind: EventKind::Pleg(PlegType::ContainerDied),
                uid: Some("ab7e1b0b-453f-4627-a749-47e48c2265a6"),
                container: Some("ebfe0fdb1389bfc563110a52a4c5d74faa4ce4b60481ba9f1f8a2724020af8ec"),
                ..WANT
            },
            Want {
                kind: EventKind::RemoveContainer,
                container: Some(C_6CF7),
                n: 2,
                ..WANT
            },
            Want {
                kind: EventKind::ContainerStatusFailed,
                cause: Some(Cause::NotFound),
                ..WANT
            },
        ],
        // the Cilium empty-netns warning is noise: no teardown failure
        absent: &[
            EventKind::StopPodSandboxFailed,
            EventKind::DestroyNetworkFailed,
        ],
    },
    Case {
        slug: "08-orphaned-pod-vsphere-k8s16",
        files: &[File {
            name: "kubelet.log",
            year: 2017,
            records: 7,
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::OrphanedPodVolumes,
                uid: Some("0ea83064-3383-11e7-b2b1-005056b7dc12"),
                ..WANT
            },
            Want {
                kind: EventKind::OrphanedPodVolumes,
                uid: Some("f97942cf-337e-11e7-b2b1-005056b7dc12"),
                ..WANT
            },
            Want {
                kind: EventKind::OrphanedPodVolumes,
                partial: Some("0ea83064-3383-11e7-"),
                ..WANT
            },
            Want {
                kind: EventKind::VolumeReconstructionFailed,
                uid: Some("f97942cf-337e-11e7-b2b1-005056b7dc12"),
                n: 2,
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "09-orphaned-pod-volume-paths-multi-version",
        files: &[
            File {
                name: "kubelet-1.14.3-journald.log",
                year: 2020,
                records: 1,
                ..FILE
            },
            // a message wrapped after `found,`: two lines, one record
            File {
                name: "kubelet-1.14.8-wrapped.log",
                year: 2020,
                records: 1,
                ..FILE
            },
            File {
                name: "kubelet-2018-description.log",
                year: 2018,
                records: 1,
                ..FILE
            },
            File {
                name: "messages-1.14.3.log",
                year: 2019,
                records: 2,
                ..FILE
            },
            File {
                name: "pod-dir-listing.txt",
                year: 2020,
                records: 2,
                unparsed: &[1, 2],
                why: "an `ls` command and its output",
                ..FILE
            },
        ],
        events: &[
            Want {
                kind: EventKind::OrphanedPodVolumes,
                uid: Some("2815f27a-219b-11e8-8a2a-ec0d9a3a445a"),
                count: Some(1),
                time: Some("2018-03-09T16:46:30.42977Z"),
                ..WANT
            },
            Want {
                kind: EventKind::OrphanedPodVolumes,
                uid: Some("5da3387d-ad1c-11ea-a025-525400767782"),
                count: Some(1),
                ..WANT
            },
            Want {
                kind: EventKind::OrphanedPodVolumes,
                uid: Some("2b363d17-e69d-11ea-bda2-44a842186bcd"),
                count: Some(1),
                ..WANT
            },
            Want {
                kind: EventKind::OrphanedPodVolumes,
                partial: Some("0fbdedac-ebfe-11e9-a2b6-00"),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "11-orphaned-pod-configmap-dir-not-empty",
        files: &[File {
            name: "kubelet.log",
            year: 2022,
            records: 4,
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::OrphanedPodVolumes,
                uid: Some("6ac9044e-b7ca-44d1-9bb3-90d50093f6d8"),
                count: Some(2),
                n: 2,
                ..WANT
            },
            // the I-line detail, without numErrs
            Want {
                kind: EventKind::OrphanedPodVolumes,
                uid: Some("6ac9044e-b7ca-44d1-9bb3-90d50093f6d8"),
                count: None,
                n: 3,
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "12-orphaned-pod-subpath-forker-out-of-order",
        files: &[File {
            name: "kubelet.log",
            year: 2023,
            records: 2,
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::OrphanedPodVolumesCleaned,
                uid: Some("11cfbe01-0e47-4835-97e4-dbf46dfccd66"),
                time: Some("2023-06-06T04:10:32.99738Z"),
                ..WANT
            },
            Want {
                kind: EventKind::OrphanedPodVolumes,
                uid: Some("11cfbe01-0e47-4835-97e4-dbf46dfccd66"),
                count: Some(3),
                time: Some("2023-06-06T04:10:31.000747Z"),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "14-mirror-pod-outdated-delete-loop",
        files: &[File {
            name: "kubelet.log",
            year: 2018,
            records: 7,
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::MirrorPodOutdatedDeleted,
                pod: Some(("kube-system", "kube-controller-manager-node-a")),
                n: 2,
                ..WANT
            },
            Want {
                kind: EventKind::MirrorPodOutdatedDeleted,
                uid: Some("d4746eba-4156-11e8-84f4-0050569b7580"),
                ..WANT
            },
            Want {
                kind: EventKind::MirrorPodOutdatedDeleted,
                uid: Some("d5e29b69-4156-11e8-84f4-0050569b7580"),
                ..WANT
            },
            Want {
                kind: EventKind::MirrorPodOutdatedDeleted,
                pod: Some(("kube-system", "etcd-node-a")),
                n: 2,
                ..WANT
            },
            Want {
                kind: EventKind::MirrorPodOutdatedDeleted,
                uid: Some("d50d021a-4156-11e8-84f4-0050569b7580"),
                ..WANT
            },
            Want {
                kind: EventKind::MirrorPodOutdatedDeleted,
                uid: Some("d6d6c835-4156-11e8-84f4-0050569b7580"),
                ..WANT
            },
            Want {
                kind: EventKind::MirrorPodOutdatedDeleted,
                pod: Some(("kube-system", "kube-scheduler-node-a")),
                uid: Some("d52b8124-4156-11e8-84f4-0050569b7580"),
                ..WANT
            },
            Want {
                kind: EventKind::MirrorPodOutdatedDeleted,
                pod: Some(("kube-system", "kube-apiserver-node-a")),
                uid: Some("d5a59d14-4156-11e8-84f4-0050569b7580"),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "16-mirror-pod-create-alreadyexists-2015",
        files: &[
            File {
                name: "docker-ps.txt",
                year: 2015,
                records: 3,
                unparsed: &[1, 2, 3],
                why: "a prompt and a docker ps table",
                ..FILE
            },
            File {
                name: "kubelet.log",
                year: 2015,
                records: 1,
                ..FILE
            },
        ],
        events: &[Want {
            kind: EventKind::MirrorPodCreateFailed,
            pod: Some(("default", "etcd-server-kubernetes-master")),
            cause: Some(Cause::AlreadyExists),
            ..WANT
        }],
        absent: &[],
    },
    Case {
        slug: "17-static-pod-removed-mirror-deleted-no-grace",
        files: &[File {
            name: "kubelet.log",
            year: 2019,
            records: 5,
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::SyncLoop(SyncOp::Remove),
                uid: Some("60d66dd8b81c2a4756d2e2f69ec1e3fc"),
                pod: Some(("openshift-kube-apiserver", "kube-apiserver-node-a")),
                source: Some(ConfigSource::File),
                ..WANT
            },
            Want {
                kind: EventKind::MirrorPodDeleting,
                pod: Some(("openshift-kube-apiserver", "kube-apiserver-node-a")),
                ..WANT
            },
            Want {
                kind: EventKind::OrphanedPodPendingVolumes,
                uid: Some("60d66dd8b81c2a4756d2e2f69ec1e3fc"),
                ..WANT
            },
            Want {
                kind: EventKind::SyncLoop(SyncOp::Delete),
                uid: Some("08b81ce8-b243-11e9-a38f-fa163e8871d1"),
                source: Some(ConfigSource::Api),
                ..WANT
            },
            Want {
                kind: EventKind::SyncLoop(SyncOp::Remove),
                uid: Some("08b81ce8-b243-11e9-a38f-fa163e8871d1"),
                source: Some(ConfigSource::Api),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "18-static-pod-not-removed-killpodsandbox-cni",
        files: &[File {
            name: "kubelet.log",
            year: 2021,
            records: 3,
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::SyncLoop(SyncOp::Remove),
                pod: Some(("team-ns", "static-nginx-10.0.0.11")),
                source: Some(ConfigSource::File),
                ..WANT
            },
            Want {
                kind: EventKind::KillingContainer,
                uid: Some("5d6d2cc2c526ec6310afc8c64fac7052"),
                container: Some("7d0f1944976c8b4d75f44226e5f1ae59d08da416e4d776f47a2a265a2015548a"),
                ..WANT
            },
            // cut at `failed to destr`: still a CNI teardown
            Want {
                kind: EventKind::ErrorSyncingPod,
                uid: Some("5d6d2cc2c526ec6310afc8c64fac7052"),
                cause: Some(Cause::CniTeardown(CniFailure::DestroyNetwork)),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "19-static-pod-recreate-1.22-regression",
        files: &[
            File {
                name: "kubelet-part1.log",
                year: 2021,
                records: 4,
                ..FILE
            },
            File {
                name: "kubelet-part2.log",
                year: 2021,
                records: 5,
                ..FILE
            },
        ],
        events: &[
            Want {
                kind: EventKind::SyncLoop(SyncOp::Remove),
                pod: Some(("default", "mypod-127.0.0.1")),
                ..WANT
            },
            Want {
                kind: EventKind::PodMustBeKilled,
                uid: Some("7c0663d52f9e8c61c7a733304c23b60f"),
                ..WANT
            },
            Want {
                kind: EventKind::ContainerNotFoundInPod,
                container: Some("143f0e3bb4dadbdc224e518719d475acc7c3fe2792105323ea9f5627b786d6ee"),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "21-cni-teardown-aws-vpc-del-failed-bottlerocket",
        files: &[File {
            name: "node-journal.log",
            year: 2019,
            records: 4,
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::StopPodSandboxStarted,
                sandbox: Some(SB_CAE5),
                ..WANT
            },
            // containerd's and the kubelet CRI client's
            Want {
                kind: EventKind::StopPodSandboxFailed,
                sandbox: Some(SB_CAE5),
                cause: Some(Cause::CniTeardown(CniFailure::DestroyNetwork)),
                n: 2,
                ..WANT
            },
            Want {
                kind: EventKind::StopSandboxBeforeRemoveFailed,
                sandbox: Some(SB_CAE5),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "23-cni-teardown-empty-netns-sriov-dockershim",
        files: &[File {
            name: "kubelet.log",
            year: 2017,
            records: 5,
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::DestroyNetworkFailed,
                cause: Some(Cause::CniTeardown(CniFailure::MissingNetns)),
                ..WANT
            },
            Want {
                kind: EventKind::KillPodSandboxFailed,
                sandbox: Some(SB_463C),
                cause: Some(Cause::NotFound),
                ..WANT
            },
            Want {
                kind: EventKind::StopPodSandboxFailed,
                sandbox: Some(SB_463C),
                pod: Some(("debug", "app-1-3391168842-1cbzd")),
                cause: Some(Cause::CniTeardown(CniFailure::MissingNetns)),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "24-cni-teardown-plugin-missing-flannel-dockershim",
        files: &[File {
            name: "messages.log",
            year: 2018,
            records: 3,
            ..FILE
        }],
        events: &[Want {
            kind: EventKind::StopSandboxBeforeRemoveFailed,
            sandbox: Some("636f41863b1e9b0da2c3a72bbe55f937f71197a20253fd1c6128019403e1ad3a"),
            pod: Some(("jaeger", "es-master-7fb4d9447d-bj7z8")),
            cause: Some(Cause::CniTeardown(CniFailure::PluginMissing)),
            ..WANT
        }],
        absent: &[],
    },
    Case {
        slug: "25-cni-teardown-flannel-netconf-empty-nested-escaping",
        files: &[File {
            name: "kubelet.log",
            year: 2022,
            records: 4,
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::ErrorSyncingPod,
                uid: Some("e1909e28-5731-4111-8031-3c989b5dc0cd"),
                sandbox: Some("ff252b2872f45846e140c96bb096d5a23100dcd13bd25cecbf858655b336093e"),
                pod: Some(("team-ns", "pvc-tester-mqwqq")),
                cause: Some(Cause::CniTeardown(CniFailure::EmptyCachedResult)),
                ..WANT
            },
            Want {
                kind: EventKind::OrphanedPodVolumes,
                uid: Some("04bd08f8-a895-4a4a-939b-e6521d5f17d0"),
                count: Some(34),
                n: 2,
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "26-cni-teardown-weave-journalctl-truncated",
        files: &[File {
            name: "kubelet.log",
            year: 2022,
            records: 5,
            unparsed: &[1],
            why: PROMPT,
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::ErrorSyncingPod,
                uid: Some("a6b466fa-60e6-4ced-9eef-380d0e41d63f"),
                sandbox: Some("6b2a4b9e5ea9c3afbe2774a8fcbe40602d50af24066356ebd314f1d0dfe4b024"),
                cause: Some(Cause::CniTeardown(CniFailure::DestroyNetwork)),
                ..WANT
            },
            Want {
                kind: EventKind::StopPodSandboxFailed,
                sandbox: Some(SB_8599),
                cause: Some(Cause::CniTeardown(CniFailure::PluginMissing)),
                ..WANT
            },
            Want {
                kind: EventKind::KillPodSandboxFailed,
                sandbox: Some(SB_8599),
                ..WANT
            },
            Want {
                kind: EventKind::KillPodFailed,
                uid: Some("d8f03fbd-0add-47eb-b972-491f9a465ad1"),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "28-stuck-terminating-empty-cni-cache-aws",
        files: &[
            File {
                name: "cni-results-ls.txt",
                year: 2023,
                records: 2,
                unparsed: &[1, 2],
                why: "a prompt and `ls -l` output",
                ..FILE
            },
            File {
                name: "containerd.log",
                year: 2023,
                records: 2,
                ..FILE
            },
            // a `kubectl describe` event row, read as message text
            File {
                name: "kubectl-describe-event.txt",
                year: 2023,
                message_only: true,
                records: 1,
                ..FILE
            },
        ],
        events: &[
            Want {
                kind: EventKind::StopPodSandboxStarted,
                sandbox: Some(SB_4285),
                ..WANT
            },
            Want {
                kind: EventKind::StopPodSandboxFailed,
                sandbox: Some(SB_4285),
                cause: Some(Cause::CniTeardown(CniFailure::PluginNotInitialized)),
                ..WANT
            },
            Want {
                kind: EventKind::KillPodFailed,
                uid: Some("a7ea2280-7361-4329-8566-89975485b20e"),
                sandbox: Some(SB_4285),
                cause: Some(Cause::CniTeardown(CniFailure::EmptyCachedResult)),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "29-blog-talos-stoppodsandbox-empty-cni-cache",
        files: &[
            File {
                name: "cni-results-ls.txt",
                year: 2025,
                records: 15,
                unparsed: &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
                why: "an `ls -la` command, blank line and listing",
                ..FILE
            },
            File {
                name: "crictl-session.txt",
                year: 2025,
                records: 12,
                unparsed: &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
                why: "kubectl/crictl commands, blank lines and crictl's stdout",
                ..FILE
            },
            // exported from Loki: message text only
            File {
                name: "kubelet-message.txt",
                year: 2025,
                message_only: true,
                records: 1,
                ..FILE
            },
        ],
        events: &[Want {
            kind: EventKind::StopPodSandboxFailed,
            sandbox: Some("055b221e44a28ce8d9120f771d5e1ef201f2457ce49c58999a0147104cca2708"),
            cause: Some(Cause::CniTeardown(CniFailure::EmptyCachedResult)),
            ..WANT
        }],
        absent: &[],
    },
    Case {
        slug: "30-stuck-terminating-crio-kata-stop-infra-loop",
        files: &[
            File {
                name: "crictl.txt",
                year: 2021,
                records: 4,
                unparsed: &[1, 2, 3, 4],
                why: "crictl commands, their stdout and a blank line",
                ..FILE
            },
            File {
                name: "node-a-journal.log",
                year: 2021,
                records: 2,
                ..FILE
            },
            // ten physical lines hard-wrapped at ~100 columns: two records
            File {
                name: "node-b-kubelet-wrapped.log",
                year: 2021,
                records: 2,
                ..FILE
            },
        ],
        events: &[
            Want {
                kind: EventKind::StopPodSandboxStarted,
                sandbox: Some("5b457b6bb989b9aad8157831100599811765823793722e7ab0c3b42cb8b31607"),
                time: Some("2021-06-29T15:14:10.292290977Z"),
                ..WANT
            },
            Want {
                kind: EventKind::StopPodSandboxFailed,
                sandbox: Some("5b457b6bb989b9aad8157831100599811765823793722e7ab0c3b42cb8b31607"),
                ..WANT
            },
            Want {
                kind: EventKind::StopPodSandboxFailed,
                sandbox: Some(SB_73E5),
                uid: Some("6abac9df-1ac3-4ec1-8375-66bdead3b596"),
                pod: Some(("f48db403-dcfd-5852-90f9-dd8210f46a9e", "app-1-0")),
                ..WANT
            },
            Want {
                kind: EventKind::KillPodFailed,
                sandbox: Some(SB_73E5),
                uid: Some("6abac9df-1ac3-4ec1-8375-66bdead3b596"),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "32-node-shutdown-stuck-talos-kubelet-json",
        files: &[
            File {
                name: "kubelet-part1.jsonl",
                year: 2025,
                records: 5,
                ..FILE
            },
            File {
                name: "kubelet-part2.jsonl",
                year: 2025,
                records: 5,
                ..FILE
            },
        ],
        events: &[
            Want {
                kind: EventKind::RuntimeCallFailed,
                cause: Some(Cause::Timeout),
                n: 2,
                ..WANT
            },
            // two whole, one cut at `PLEG is not h`
            Want {
                kind: EventKind::PlegUnhealthy,
                n: 3,
                ..WANT
            },
            Want {
                kind: EventKind::PlegUnhealthy,
                time: Some("2025-09-04T18:24:43.2114668Z"),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "36-sandbox-name-reserved-after-hard-reboot-ts-skew",
        files: &[
            // the Go struct dump is wrapped inside the UID: two lines, one record
            File {
                name: "containerd.log",
                year: 2019,
                records: 1,
                ..FILE
            },
            File {
                name: "kubelet.log",
                year: 2019,
                records: 6,
                ..FILE
            },
        ],
        events: &[
            Want {
                kind: EventKind::SandboxLoaded,
                sandbox: Some("02b3441253939c078d100ac6a5a5c63e5bb308d5904c36b3903ddd6b800e5c07"),
                uid: Some("2302e97a-03d2-11e9-9447-005056911476"),
                pod: Some(("team-ns", "prometheus-85dfb696c7-sm9g8")),
                ..WANT
            },
            Want {
                kind: EventKind::RuntimeCallFailed,
                cause: Some(Cause::Timeout),
                time: Some("2019-01-02T06:32:23.862407Z"),
                ..WANT
            },
            // klog's time, not journald's 06:50:10
            Want {
                kind: EventKind::PlegUnhealthy,
                time: Some("2019-01-02T06:42:00.569834Z"),
                ..WANT
            },
            Want {
                kind: EventKind::RuntimeCallFailed,
                time: Some("2019-01-02T06:43:18.110305Z"),
                ..WANT
            },
        ],
        absent: &[],
    },
    // Cases 02 … 37 below were added with the prefix layer (issue 12): logs behind grep,
    // Markdown quotes, talosctl, k3s and kubenswrapper identifiers, French month names.
    Case {
        slug: "02-sandbox-not-gc-until-kubelet-restart",
        files: &[
            File {
                name: "crictl-pods.txt",
                year: 2022,
                records: 7,
                unparsed: &[1, 2, 3, 4, 5, 6, 7],
                why: "a prompt and a crictl pods table (the pasted CRI view: core::pasted, --crictl-pods)",
                ..FILE
            },
            File {
                name: "kubectl-get-pods.txt",
                year: 2022,
                records: 6,
                unparsed: &[1, 2, 3, 4, 5, 6],
                why: "a comment, a prompt and a kubectl table (the pasted API view: core::pasted, --kubectl-pods)",
                ..FILE
            },
            // `2149: ` grep -n prefix before the journald line.
            File {
                name: "kubelet-grep-n.log",
                year: 2022,
                records: 1,
                ..FILE
            },
            File {
                name: "kubelet.log",
                year: 2022,
                records: 7,
                unparsed: &[4],
                why: "the reporter's `#` comment",
                ..FILE
            },
        ],
        events: &[
            Want {
                kind: EventKind::PodOrphanedTornDown,
                uid: Some("68aaedee-7ebd-44fd-ad66-0febb9a0b509"),
                ..WANT
            },
            Want {
                kind: EventKind::PodSyncedFirstTime,
                pod: Some(("default", "nginx-75cd7474f-tt7b8")),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "07-crio-deletecontainer-id-does-not-exist",
        files: &[File {
            name: "kubelet.log",
            year: 2024,
            records: 1,
            ..FILE
        }],
        events: &[Want {
            kind: EventKind::DeleteContainerFailed,
            container: Some("11f958631d8e575f086c6499b2ca431eb875f9f2f8e253f5882b06d69798d7e6"),
            ..WANT
        }],
        absent: &[],
    },
    Case {
        slug: "10-orphaned-pod-k3s-longhorn-vol-data-json",
        files: &[File {
            name: "k3s.log",
            year: 2021,
            records: 2,
            ..FILE
        }],
        events: &[Want {
            kind: EventKind::OrphanedPodVolumes,
            uid: Some("7c718603-7246-49e4-86df-c77a4a8fe868"),
            n: 2,
            ..WANT
        }],
        absent: &[],
    },
    Case {
        slug: "13-orphaned-pod-subpath-syslog-no-pid",
        files: &[File {
            name: "messages.log",
            year: 2021,
            records: 12,
            ..FILE
        }],
        events: &[Want {
            kind: EventKind::OrphanedPodVolumes,
            uid: Some("306a14d5-2c8f-44d8-bc13-857539fab97d"),
            n: 2,
            ..WANT
        }],
        absent: &[],
    },
    Case {
        slug: "15-mirror-pod-create-forbidden-psp",
        files: &[File {
            name: "kubelet.log",
            year: 2017,
            records: 2,
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::MirrorPodCreateFailed,
                uid: Some("35d2d3b729826258ed71101e688b6bf4"),
                cause: Some(Cause::Forbidden),
                ..WANT
            },
            Want {
                kind: EventKind::MirrorPodCreateFailed,
                uid: Some("2908bf33d480a29f35190eda0d4f912b"),
                cause: Some(Cause::Forbidden),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "20-static-pod-not-restarted-after-manifest-back",
        files: &[
            // `> ` Markdown quotes; line 1 is the code fence.
            File {
                name: "kubelet-quoted-comment.md",
                year: 2021,
                records: 4,
                unparsed: &[1],
                why: "a Markdown code fence",
                ..FILE
            },
            File {
                name: "kubelet.log",
                year: 2022,
                records: 6,
                ..FILE
            },
        ],
        events: &[
            Want {
                kind: EventKind::SyncLoop(SyncOp::Remove),
                pod: Some(("team-ns", "kube-apiserver-node-a")),
                ..WANT
            },
            Want {
                kind: EventKind::KillingContainer,
                container: Some("524779760c0050c8391419ea54295020f42460802cea89a2f11df8d08cb87f15"),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "22-cni-teardown-calico-killed-deadline",
        files: &[
            File {
                name: "containerd.log",
                year: 2023,
                records: 5,
                ..FILE
            },
            File {
                name: "kubelet.log",
                year: 2023,
                records: 5,
                ..FILE
            },
        ],
        events: &[
            Want {
                kind: EventKind::StopPodSandboxFailed,
                sandbox: Some("1977065b951e106cb8f86a5a3f30d11dd2bd3993d8be4056ed80f7d480705db1"),
                ..WANT
            },
            Want {
                kind: EventKind::StopSandboxBeforeRemoveFailed,
                sandbox: Some("b25b1fe9f0eae615534102c4a2d370897be12abe05d26408e6baed4556c3d1f1"),
                cause: Some(Cause::Timeout),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "27-crictl-stopp-calico-datastore-unreachable",
        files: &[File {
            name: "crictl-stopp.txt",
            year: 2018,
            records: 2,
            unparsed: &[1],
            why: "the crictl command echo",
            ..FILE
        }],
        events: &[Want {
            kind: EventKind::StopPodSandboxFailed,
            cause: Some(Cause::CniTeardown(CniFailure::DatastoreUnreachable)),
            ..WANT
        }],
        absent: &[],
    },
    Case {
        slug: "31-stuck-terminating-talos-containerd-json",
        files: &[File {
            name: "containerd.jsonl",
            year: 2024,
            records: 4,
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::StopContainerFailed,
                container: Some("a96e7dc6ce5cae0af965d63a71238f78932e00520f8103fc24850db7a7b94bb8"),
                cause: Some(Cause::Timeout),
                ..WANT
            },
            Want {
                kind: EventKind::StopContainerFailed,
                container: Some("3024c43549c33fa54cb9e128e853c92be71ef315ed6aae7cc2adfc4ebef5da35"),
                cause: Some(Cause::Timeout),
                ..WANT
            },
            Want {
                kind: EventKind::StopPodSandboxStarted,
                sandbox: Some("82de1b7fdbdb08e91d6210188b9da8e8dde20101a1350f60f5e66f8c5c42e5ae"),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "33-notready-sandboxes-after-reboot-crictl-inspectp",
        files: &[
            File {
                name: "crictl-inspectp-summary.txt",
                year: 2024,
                records: 5,
                unparsed: &[1, 2, 3, 4, 5],
                why: "the reporter's summary of crictl inspectp",
                ..FILE
            },
            File {
                name: "crictl-inspectp.json",
                year: 2024,
                records: 1,
                unparsed: &[1],
                why: "crictl inspectp JSON, cut (the pasted CRI view: core::pasted, --crictl-inspectp)",
                ..FILE
            },
            File {
                name: "find-empty-cni-files.txt",
                year: 2024,
                records: 2,
                unparsed: &[1, 2],
                why: "find output",
                ..FILE
            },
        ],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "34-removepodsandbox-no-such-id-wrapped-ids",
        files: &[File {
            name: "kubelet.log",
            year: 2023,
            records: 2,
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::RemoveSandboxFailed,
                sandbox: Some("549a709981c68792d4ddd6824af52ae1e7b662328c24ef196e373d4f3f0a055f"),
                ..WANT
            },
            Want {
                kind: EventKind::RemovePodSandboxFailed,
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "35-cni-teardown-calico-nodename-logpkg-blank-lines",
        files: &[File {
            name: "kubelet.log",
            year: 2025,
            records: 7,
            unparsed: &[2, 4, 6],
            why: "blank lines between the records",
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::StopPodSandboxFailed,
                ..WANT
            },
            Want {
                kind: EventKind::KillPodSandboxFailed,
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "37-find-container-race-french-locale-journald",
        files: &[File {
            name: "kubelet.log",
            year: 2018,
            records: 7,
            unparsed: &[1],
            why: "journalctl's `-- Logs begin at …` meta line",
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::RemoveContainerFailed,
                container: Some("3766a2d46a3d49391718d0f8ff919d1beec53f2179aa9101abf3177d5199773b"),
                time: Some("2018-09-20T16:41:05.744437Z"),
                ..WANT
            },
            Want {
                kind: EventKind::DeleteContainerFailed,
                n: 3,
                ..WANT
            },
            Want {
                kind: EventKind::CreateContainerFailed,
                cause: Some(Cause::Timeout),
                sandbox: Some("f09ac71b68bbe331c74f50786f22e164818997d0169d664188be130da3d40c06"),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "38-real-kubelet-cni-broken-pod-deleted-text-v1.34.4",
        files: &[
            File {
                name: "kubelet.log",
                year: 2026,
                records: 127,
                ..FILE
            },
            File {
                name: "containerd.log",
                year: 2026,
                records: 10,
                ..FILE
            },
        ],
        events: &[Want {
            kind: EventKind::KubeletStarted,
            ..WANT
        }],
        absent: &[],
    },
    Case {
        slug: "39-real-kubelet-cni-broken-pod-deleted-json-v1.34.4",
        files: &[
            File {
                name: "kubelet.log",
                year: 2026,
                records: 101,
                ..FILE
            },
            File {
                name: "containerd.log",
                year: 2026,
                records: 8,
                ..FILE
            },
        ],
        events: &[Want {
            kind: EventKind::KubeletStarted,
            ..WANT
        }],
        absent: &[],
    },
    Case {
        slug: "40-real-kubelet-healthy-node-restart-v1.34.4",
        files: &[File {
            name: "kubelet.log",
            year: 2026,
            records: 38,
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::KubeletStarted,
                n: 2,
                ..WANT
            },
            // The start-up "pleg has yet to be successful" of each start: an event, no finding.
            Want {
                kind: EventKind::PlegUnhealthy,
                n: 2,
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "41-real-kubelet-http-static-pod-removed-from-url-v1.34.4",
        files: &[
            File {
                name: "kubelet.log",
                year: 2026,
                records: 158,
                ..FILE
            },
            File {
                name: "containerd.log",
                year: 2026,
                records: 16,
                ..FILE
            },
        ],
        events: &[
            Want {
                kind: EventKind::KubeletStarted,
                n: 2,
                ..WANT
            },
            Want {
                kind: EventKind::SyncLoop(SyncOp::Add),
                source: Some(ConfigSource::Http),
                n: 3,
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "42-real-kubelet-sandbox-gc-stop-failing-after-restart-text-v1.34.4",
        files: &[
            File {
                name: "kubelet.log",
                year: 2026,
                records: 138,
                ..FILE
            },
            File {
                name: "containerd.log",
                year: 2026,
                records: 12,
                ..FILE
            },
        ],
        events: &[
            Want {
                kind: EventKind::KubeletStarted,
                n: 2,
                ..WANT
            },
            Want {
                kind: EventKind::StopSandboxBeforeRemoveFailed,
                sandbox: Some("3e48ed5fcab1001b644a5f3633a91651a266be3d1064743e591eacb75e9b2e72"),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "43-real-kubelet-sandbox-gc-stop-failing-after-restart-json-v1.34.4",
        files: &[
            File {
                name: "kubelet.log",
                year: 2026,
                records: 120,
                ..FILE
            },
            File {
                name: "containerd.log",
                year: 2026,
                records: 10,
                ..FILE
            },
        ],
        events: &[
            Want {
                kind: EventKind::KubeletStarted,
                n: 2,
                ..WANT
            },
            Want {
                kind: EventKind::StopSandboxBeforeRemoveFailed,
                sandbox: Some("7b1da9b3e06293564874f636212e07c90f545f62c77252c0d8f4c4df2f3fcdd8"),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "44-reserve-name-reverse-journal-containerd-12438",
        files: &[File {
            name: "kubelet.log",
            year: 2025,
            records: 7,
            unparsed: &[1, 2, 3],
            why: "the reporter's Markdown headings (`## …`) above the journal",
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "45-reserve-name-windows-grep-n-wrapped-107561",
        files: &[File {
            name: "kubelet.err.log",
            year: 2025,
            records: 2,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "46-stopcontainer-deadline-canceled-containerd-10755",
        files: &[File {
            name: "containerd.log",
            year: 2025,
            records: 3,
            unparsed: &[2],
            why: "a blank line between two excerpts",
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "47-stoppodsandbox-deadline-rke-docker-logs-7790",
        files: &[File {
            name: "kubelet.log",
            year: 2025,
            records: 4,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "48-stopcontainer-newest-first-containerd-1.2-2744",
        files: &[File {
            name: "containerd.logs",
            year: 2025,
            records: 7,
            unparsed: &[1, 2, 3, 4],
            why: PROMPT,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "49-pleg-eks-1.23-syslog-no-pid",
        files: &[File {
            name: "messages",
            year: 2025,
            records: 2,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "50-pleg-k3s-journald-klog-skew-2370",
        files: &[File {
            name: "k3s.log",
            year: 2025,
            records: 6,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "51-orphaned-pod-total-errors-1.x-134075",
        files: &[File {
            name: "kubelet.log",
            year: 2025,
            records: 3,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "52-orphaned-pod-not-a-directory-then-cleaned-105536",
        files: &[File {
            name: "kubelet.log",
            year: 2025,
            records: 2,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "53-slow-startup-markdown-quoted-kubestellar-2573",
        files: &[File {
            name: "journal.md",
            year: 2025,
            records: 1,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "54-benign-kubelet-startup-runtime-not-yet-crio-5549",
        files: &[File {
            name: "kubelet.log",
            year: 2025,
            records: 9,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "55-benign-cadvisor-404-crio-rfc3339-syslog-120988",
        files: &[File {
            name: "kubelet.log",
            year: 2025,
            records: 2,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "56-benign-crio-stop-long-grace-period-9754",
        files: &[File {
            name: "crio.log",
            year: 2025,
            records: 3,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "57-mirror-pod-webhook-denied-bottlerocket-1409",
        files: &[File {
            name: "kubelet.log",
            year: 2025,
            records: 3,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "58-mirror-pod-namespace-not-found-openshift-371",
        files: &[File {
            name: "kubelet.log",
            year: 2025,
            records: 5,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "59-benign-mirror-alreadyexists-after-kubelet-restart-22",
        files: &[File {
            name: "kubelet.log",
            year: 2025,
            records: 7,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "60-benign-single-cni-add-retry-cilium-kind-30820",
        files: &[File {
            name: "containerd-and-kubelet.log",
            year: 2025,
            records: 4,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "61-mirror-pod-already-exists-minikube-startup",
        files: &[File {
            name: "kubelet.log",
            year: 2024,
            records: 4,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "62-killpodsandbox-calico-kdd-json-eof-dockershim",
        files: &[File {
            name: "kubelet.log",
            year: 2017,
            records: 3,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "63-dockershim-stop-sandbox-no-such-container",
        files: &[File {
            name: "kubelet.log",
            year: 2017,
            records: 3,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "64-killcontainer-stop-timeout-reverse-journal-containerd",
        files: &[
            File {
                name: "kubelet.log",
                year: 2018,
                records: 3,
                ..FILE
            },
            File {
                name: "runtime.log",
                year: 2018,
                records: 4,
                ..FILE
            },
        ],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "65-podstatus-crio-id-does-not-exist-hyperkube",
        files: &[File {
            name: "kubelet.log",
            year: 2020,
            records: 6,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "66-orphaned-pod-journald-no-hostname",
        files: &[File {
            name: "kubelet.log",
            year: 2018,
            records: 1,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "67-benign-startup-runtime-down-2562047h-65843",
        files: &[File {
            name: "kubelet.log",
            year: 2018,
            records: 13,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "68-crio-name-reserved-kubeadm-static-8481",
        files: &[File {
            name: "runtime.log",
            year: 2024,
            records: 4,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "69-benign-mirror-connrefused-bootstrap-224",
        files: &[File {
            name: "kubelet.log",
            year: 2016,
            records: 6,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "70-containerd-stop-canceled-11984",
        files: &[File {
            name: "runtime.log",
            year: 2025,
            records: 3,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "71-flannel-subnet-env-add-once-46",
        files: &[File {
            name: "kubelet.log",
            year: 2023,
            records: 2,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "72-crio-multus-add-killed-cleanup-203",
        files: &[File {
            name: "runtime.log",
            year: 2021,
            records: 4,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "73-crio-status-image-not-set-5709",
        files: &[File {
            name: "kubelet.log",
            year: 2022,
            records: 4,
            unparsed: &[1],
            why: "the tail of a line cut before it, as posted (`containerID=\"f3aeb2…\"` alone)",
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "74-k3s-runpodsandbox-deadline-497",
        files: &[File {
            name: "kubelet.log",
            year: 2019,
            records: 4,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "75-microk8s-runpodsandbox-pager-cut-3458",
        files: &[
            File {
                name: "kubelet.log",
                year: 2022,
                records: 4,
                ..FILE
            },
            File {
                name: "runtime.log",
                year: 2022,
                records: 4,
                ..FILE
            },
        ],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "76-crio-stop-requests-unanswered-7053",
        files: &[File {
            name: "runtime.log",
            year: 2023,
            records: 4,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "77-containerd-no-runtime-handler-minikube-gvisor",
        files: &[File {
            name: "kubelet.log",
            year: 2019,
            records: 3,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "78-k3s-multus-add-markdown-bold-5672",
        files: &[File {
            name: "kubelet.log",
            year: 2022,
            records: 1,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "79-pleg-reinspection-docker-lower-id-47294",
        files: &[File {
            name: "kubelet.log",
            year: 2017,
            records: 4,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "80-orphaned-volumes-not-a-directory-csi-114698",
        files: &[File {
            name: "kubelet.log",
            year: 2023,
            records: 3,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "81-skip-delete-sources-not-ready-api-delivering-557",
        files: &[File {
            name: "kubelet.log",
            year: 2015,
            records: 3,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "82-dockershim-calico-del-pod-desc-1",
        files: &[File {
            name: "kubelet.log",
            year: 2019,
            records: 6,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "83-k3s-sandbox-does-not-exist-38344",
        files: &[File {
            name: "kubelet.log",
            year: 2020,
            records: 4,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "84-crio-118-error-reserving-pod-name-capitalised-3571",
        files: &[File {
            name: "runtime.log",
            year: 2020,
            records: 2,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "85-kubelet-13-docker-down-at-start-28577",
        files: &[File {
            name: "kubelet.log",
            year: 2016,
            records: 18,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "86-containerd-socket-refused-bottlerocket-2512",
        files: &[File {
            name: "kubelet.log",
            year: 2023,
            records: 2,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "87-mirror-pod-forbidden-service-account-103587",
        files: &[File {
            name: "kubelet.log",
            year: 2021,
            records: 3,
            unparsed: &[2],
            why: "a blank line between the records",
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "88-pod-syncs-deadline-exceeded-45419",
        files: &[File {
            name: "kubelet.log",
            year: 2020,
            records: 7,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "89-dockertools-termination-failed-within-grace-31219",
        files: &[File {
            name: "kubelet.log",
            year: 2016,
            records: 2,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "90-dockershim-calico-add-netns-gone-72044",
        files: &[File {
            name: "kubelet.log",
            year: 2018,
            records: 5,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "91-crio-del-cniversion-missing-9557",
        files: &[File {
            name: "runtime.log",
            year: 2019,
            records: 5,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "92-rfc5424-syslog-runpodsandbox-timeout",
        files: &[File {
            name: "kubelet.log",
            year: 2024,
            records: 7,
            unparsed: &[2, 4, 6],
            why: "blank lines between the records",
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "93-crio-ctr-name-reserved-create-still-running",
        files: &[File {
            name: "runtime.log",
            year: 2025,
            records: 2,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "94-cilium-agent-socket-missing-grepped-continuation",
        files: &[File {
            name: "kubelet.log",
            year: 2026,
            records: 3,
            unparsed: &[1, 2],
            why: "the `journalctl … | grep` command pasted without a prompt, and a blank line",
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "95-orphaned-pod-error-in-the-middle-not-a-directory",
        files: &[File {
            name: "kubelet.log",
            year: 2026,
            records: 4,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "96-containerd12-stop-signal-wait-ran-out",
        files: &[File {
            name: "runtime.log",
            year: 2019,
            records: 4,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "97-eks-stopcontainer-deadline-two-layers-one-call",
        files: &[File {
            name: "kubelet.log",
            year: 2026,
            records: 2,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "98-dockerd-sigkill-not-obeyed-kill-again-later",
        files: &[
            File {
                name: "kubelet.log",
                year: 2021,
                records: 8,
                unparsed: &[1],
                why: "journalctl's `-- Logs begin at …` meta line, pasted indented",
                ..FILE
            },
            File {
                name: "runtime.log",
                year: 2021,
                records: 1,
                ..FILE
            },
        ],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "99-containerd-stop-deadline-syslog-time-without-host",
        files: &[File {
            name: "runtime.log",
            year: 2024,
            records: 3,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "100-static-pod-blocked-by-old-pod-worker-grep-n",
        files: &[File {
            name: "kubelet.log",
            year: 2026,
            records: 16,
            unparsed: &[4, 5],
            why: "a tab alone and the reporter's comment line between the grep -n blocks",
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "101-windows-kubelet-glog-file-header-benign",
        files: &[File {
            name: "kubelet.log",
            year: 2020,
            records: 11,
            unparsed: &[1, 2, 3, 4],
            why: "the header glog writes atop a log file",
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "102-isulad-sandbox-name-in-use-by-sandbox",
        files: &[File {
            name: "kubelet.log",
            year: 2026,
            records: 2,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "103-dockertools-runcontainer-operation-timeout",
        files: &[File {
            name: "kubelet.log",
            year: 2026,
            records: 4,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "104-kubelet-endpoint-serves-no-cri",
        files: &[File {
            name: "kubelet.log",
            year: 2019,
            records: 5,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "105-containerd-go-fatal-error-crash",
        files: &[File {
            name: "runtime.log",
            year: 2020,
            records: 12,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "106-secret-unmount-teardown-device-busy",
        files: &[File {
            name: "kubelet.log",
            year: 2018,
            records: 2,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "107-cinder-unmount-teardown-device-busy",
        files: &[File {
            name: "kubelet.log",
            year: 2016,
            records: 1,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "108-kubelet-cgroupfs-runtime-systemd-cgroups",
        files: &[File {
            name: "kubelet.log",
            year: 2021,
            records: 2,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "109-kubelet-exits-swap-on",
        files: &[File {
            name: "kubelet.log",
            year: 2026,
            records: 9,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "110-kubelet-exits-swap-zh-locale",
        files: &[File {
            name: "kubelet.log",
            year: 2018,
            records: 7,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "111-kubelet-node-object-deleted",
        files: &[File {
            name: "kubelet.log",
            year: 2019,
            records: 7,
            ..FILE
        }],
        events: &[],
        absent: &[],
    },
    Case {
        slug: "112-image-pull-dns-timeout-backoff",
        files: &[File {
            name: "kubelet.log",
            year: 2019,
            records: 3,
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::ErrorSyncingPod,
                uid: Some("ef093916-1f66-4e98-95fe-bc954320e74e"),
                pod: Some(("kube-system", "tiller-deploy-767d9b9584-ckgsv")),
                n: 2,
                ..WANT
            },
            // The CRI client's failed pull before 1.21 (it was read as a pull starting).
            Want {
                kind: EventKind::ImagePullFailed,
                time: Some("2019-07-27T17:30:05.22001Z"),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "113-rancher-ui-prefix-node-deleted",
        files: &[File {
            name: "kubelet.log",
            year: 2016,
            records: 7,
            ..FILE
        }],
        events: &[
            // Every line read past the viewer's glued time, the retries exhausted among them.
            Want {
                kind: EventKind::NodeStatusUpdateFailed,
                n: 7,
                ..WANT
            },
            Want {
                kind: EventKind::NodeStatusUpdateFailed,
                time: Some("2016-04-28T16:31:27.398119Z"),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "114-static-pods-volume-wait-timeout",
        files: &[File {
            name: "kubelet.log",
            year: 2023,
            records: 3,
            ..FILE
        }],
        events: &[
            Want {
                kind: EventKind::VolumeMountWaitFailed,
                pod: Some(("kube-system", "etcd-k8s-02.intern")),
                time: Some("2023-04-27T16:27:26.004278Z"),
                ..WANT
            },
            Want {
                kind: EventKind::VolumeMountWaitFailed,
                pod: Some(("kube-system", "kube-apiserver-k8s-02.intern")),
                ..WANT
            },
        ],
        absent: &[],
    },
    Case {
        slug: "115-static-scheduler-crash-loop-cut",
        files: &[File {
            name: "kubelet.log",
            year: 2024,
            records: 3,
            ..FILE
        }],
        events: &[
            // Cut before its `pod=` field: the pod is in the back-off's own text.
            Want {
                kind: EventKind::ErrorSyncingPod,
                time: Some("2024-06-02T22:26:55.681326Z"),
                ..WANT
            },
        ],
        absent: &[],
    },
];

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/cases")
}

/// Parses and classifies one file; returns the owned events, the record count and the first
/// lines of unparsed records.
fn run(path: &Path, f: &File) -> (Vec<Event<'static>>, usize, Vec<u64>) {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut ctx = ParseContext::new(f.year);
    ctx.message_only = f.message_only;
    let mut asm = LineAssembler::new();
    let mut events = Vec::new();
    let mut records = 0;
    let mut unparsed = Vec::new();
    let mut lines_seen = 0u64;
    let mut take = |text: &str, first: u64, lines: u32, ctx: &mut ParseContext| {
        records += 1;
        lines_seen += u64::from(lines);
        let p = parse(text, ctx);
        if p.format == Format::Unparsed {
            assert_eq!(p.msg, text, "unparsed text is kept as it was");
            unparsed.push(first);
        }
        let event = classify(&p);
        assert_eq!(
            event_kind(&p),
            event.as_ref().map(|e| e.kind),
            "event_kind agrees: {text}"
        );
        if let Some(e) = event {
            events.push(e.into_owned());
        }
    };
    for line in text.lines() {
        if let Some(r) = asm.push(line) {
            take(r.text, r.first_line, r.lines, &mut ctx);
        }
    }
    if let Some(r) = asm.finish() {
        take(r.text, r.first_line, r.lines, &mut ctx);
    }
    assert_eq!(
        lines_seen,
        text.lines().count() as u64,
        "{}: every line in one record",
        path.display()
    );
    (events, records, unparsed)
}

fn matches(e: &Event<'_>, w: &Want) -> bool {
    let eq = |got: Option<&str>, want: Option<&str>| want.is_none() || got == want;
    e.kind == w.kind
        && eq(e.ids.pod_uid.as_deref(), w.uid)
        && eq(e.ids.sandbox_id.as_deref(), w.sandbox)
        && eq(e.ids.container_id.as_deref(), w.container)
        && eq(e.ids.object_id(), w.object)
        && w.pod.is_none_or(|(ns, name)| {
            e.ids
                .pods
                .iter()
                .any(|p| p.namespace.as_deref() == Some(ns) && p.name == name)
        })
        && w.partial
            .is_none_or(|pre| e.ids.partial().iter().any(|p| p.prefix == pre))
        && (w.cause.is_none() || e.cause == w.cause)
        && (w.count.is_none() || e.count() == w.count)
        && (w.source.is_none() || e.config_source == w.source)
        && w.time
            .is_none_or(|t| e.time.map(|x| x.to_string()).as_deref() == Some(t))
}

#[test]
fn every_case_folder_has_an_entry() {
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
fn cases() {
    let mut failures = Vec::new();
    for case in CASES {
        let dir = cases_dir().join(case.slug);
        // provenance is kept
        let source = fs::read_to_string(dir.join("source.txt")).unwrap();
        assert!(
            // `URL: https://…`, or `URL (what it holds): https://…` when it has several.
            source.starts_with("URL")
                && source
                    .lines()
                    .next()
                    .is_some_and(|l| l.contains(": https://")),
            "{}: source.txt provenance",
            case.slug
        );
        assert!(dir.join("expected.md").is_file(), "{}", case.slug);
        // every log file of the folder is listed
        let on_disk: BTreeSet<String> = fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| {
                !["source.txt", "expected.md", "findings.txt", "startup.txt"].contains(&n.as_str())
            })
            .collect();
        let listed: BTreeSet<String> = case.files.iter().map(|f| f.name.to_owned()).collect();
        assert_eq!(on_disk, listed, "{}: files", case.slug);

        let mut events = Vec::new();
        for f in case.files {
            let (evs, records, unparsed) = run(&dir.join(f.name), f);
            assert_eq!(
                (records, unparsed.as_slice()),
                (f.records, f.unparsed),
                "{}/{}: (records, unparsed first lines); unparsed allowed for: {}",
                case.slug,
                f.name,
                if f.why.is_empty() { "nothing" } else { f.why },
            );
            events.extend(evs);
        }
        for w in case.events {
            let n = events.iter().filter(|e| matches(e, w)).count();
            if n != w.n {
                failures.push(format!(
                    "{}: {:?} uid={:?} sandbox={:?} container={:?} pod={:?} partial={:?}: {n} events, want {}",
                    case.slug, w.kind, w.uid, w.sandbox, w.container, w.pod, w.partial, w.n
                ));
            }
        }
        for kind in case.absent {
            if events.iter().any(|e| e.kind == *kind) {
                failures.push(format!("{}: {kind:?} ruled out by expected.md", case.slug));
            }
        }
        // no partial ID is ever reported as a full one
        for e in &events {
            for p in e.ids.partial() {
                let full = [
                    e.ids.pod_uid.as_deref(),
                    e.ids.sandbox_id.as_deref(),
                    e.ids.container_id.as_deref(),
                    e.ids.object_id(),
                ];
                assert!(
                    !full.iter().any(|f| *f == Some(&*p.prefix)),
                    "{}: {p:?}",
                    case.slug
                );
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
