//! Static pods: `StaticPodNotRemoved` (state), `StaticPodRemovalBlocked` and `StaticPodRemoved`
//! (logs).

#[allow(unused_imports)]
use super::logs::*;
use super::mirror_pods::{split_pod, static_uid};
#[allow(unused_imports)]
use super::*;

impl Ctx<'_> {
    /// `config/file.go`: the file source re-lists the manifest directory and a pod whose file is
    /// gone is REMOVEd, which makes its pod worker kill the sandbox; `config/http.go` does the
    /// same for a pod the static pod URL no longer serves (each read is a SET of the source's
    /// pods). A READY static sandbox its source no longer declares, past `min_age`, means that
    /// removal never happened.
    ///
    /// A file pod is judged when the manifest directory can be read; an HTTP pod when the URL
    /// given by `--manifest-url` was read (an unreachable URL or a body the kubelet rejects makes
    /// the kubelet keep what it last read: those pods are left unjudged and the rule says so).
    pub(super) fn static_pods_not_removed(
        &self,
        out: &mut Vec<Finding>,
        skipped: &mut Vec<SkippedRule>,
    ) {
        if let Some(why) = self.missing(&[View::Cri]) {
            skipped.push(skip(FindingKind::StaticPodNotRemoved, &why));
            return;
        }
        let (mut judged, mut unjudged_http, mut unjudged_file) = (0usize, 0usize, 0usize);
        for group in self.sandboxes_by_uid.values() {
            for &s in group {
                if s.state != SandboxState::Ready || !self.past_min_age(s.created_at) {
                    continue;
                }
                let (ns, name, uid) = (&s.pod.namespace, &s.pod.name, &s.pod.uid);
                let source = match s.config_source() {
                    Some("file") if self.manifests_unusable.is_some() => {
                        unjudged_file += 1;
                        continue;
                    }
                    Some("file") if self.manifest_for(ns, name, uid).is_some() => {
                        judged += 1;
                        continue;
                    }
                    Some("file") => {
                        let n_files = self.view.manifests.as_ref().map_or(0, |m| m.files.len());
                        Evidence::new(
                            EvidenceSource::Manifest,
                            format!(
                                "none of the {n_files} files in {} declares pod {ns}/{name} (name + \
                                 \"-\" + node {})",
                                self.manifest_dir(),
                                self.view.node_name
                            ),
                        )
                    }
                    Some("http") => match self.url_declares(ns, name, uid) {
                        None => {
                            unjudged_http += 1;
                            continue;
                        }
                        Some(true) => {
                            judged += 1;
                            continue;
                        }
                        Some(false) => Evidence::new(
                            EvidenceSource::Manifest,
                            format!(
                                "none of the {} pods the static pod URL {} serves is {ns}/{name} \
                                 (name + \"-\" + node {})",
                                self.url_pods.map_or(0, <[_]>::len),
                                self.manifest_url(),
                                self.view.node_name
                            ),
                        ),
                    },
                    _ => continue,
                };
                judged += 1;
                let http = s.config_source() == Some("http");
                out.push(Finding {
                    kind: FindingKind::StaticPodNotRemoved,
                    severity: Severity::Critical,
                    summary: if http {
                        format!(
                            "static pod {ns}/{name} still runs (sandbox {} READY for {}) but the static \
                             pod URL {} no longer serves it",
                            short(&s.id),
                            human(self.age(s.created_at)),
                            self.manifest_url()
                        )
                    } else {
                        format!(
                            "static pod {ns}/{name} still runs (sandbox {} READY for {}) but its \
                             manifest is gone",
                            short(&s.id),
                            human(self.age(s.created_at))
                        )
                    },
                    pod: Some(s.pod.clone()),
                    sandbox_id: Some(s.id.clone()),
                    container_id: None,
                    path: None,
                    evidence: vec![self.sandbox_evidence(s), source],
                    kubelet_rule: if http {
                        "config/http.go: each read of the static pod URL SETs the HTTP source's pods, so \
                         a pod the URL no longer serves is REMOVEd and its pod worker kills the sandbox \
                         (pod_workers.go SyncPodKill); kubelet.go HandlePodRemoves holds the removal \
                         back while sources are not ready (\"skipping delete because sources aren't \
                         ready yet\")"
                    } else {
                        "config/file.go: a static pod whose manifest file disappears is \
                         REMOVEd and its pod worker kills the sandbox (pod_workers.go \
                         SyncPodKill); kubelet.go HandlePodRemoves holds the removal back \
                         while sources are not ready (\"skipping delete because sources \
                         aren't ready yet\")"
                    }
                    .into(),
                    remediation: format!(
                        "journalctl -u kubelet | grep -e 'sources aren' -e {name}; if the {what} was \
                         removed on purpose: crictl stopp {id} && crictl rmp {id}, then systemctl \
                         restart kubelet",
                        what = if http { "pod" } else { "manifest" },
                        name = sh(name),
                        id = sh(&s.id)
                    ),
                    gc_eligible: false,
                });
            }
        }
        // What could not be judged, and why: one entry for the rule.
        let mut reasons: Vec<String> = Vec::new();
        if let Some(why) = &self.manifests_unusable
            && (unjudged_file > 0 || self.view.manifests.is_none() || judged == 0)
        {
            reasons.push(why.clone());
        }
        if unjudged_http > 0 {
            reasons.push(match &self.url_unusable {
                Some(why) => {
                    format!("{why} ({unjudged_http} HTTP static pod sandbox(es) not judged)")
                }
                None => format!(
                    "no --manifest-url given: {unjudged_http} HTTP static pod sandbox(es) \
                     (config.source=http) were not judged against the kubelet's staticPodURL"
                ),
            });
        }
        if !reasons.is_empty() {
            skipped.push(SkippedRule {
                kind: FindingKind::StaticPodNotRemoved,
                partial: judged > 0,
                reason: reasons.join("; "),
            });
        }
    }

    // === MissingMirrorPod, StaleMirrorPod, OrphanedMirrorPod ===
}

// === StaticPodRemovalBlocked ===

/// How long a kubelet's config sources may take to sync at its start (the API source's first
/// list): housekeeping skipped for longer holds back removals.
const SOURCES_SYNC: SignedDuration = SignedDuration::from_mins(1);
/// Housekeeping runs every 2 s: its skips further apart than this are two waits.
const SOURCES_GAP: SignedDuration = SignedDuration::from_secs(30);

/// `kubelet.go` `HandlePodRemoves` / housekeeping: "skipping delete because sources aren't ready
/// yet" (the API source has not synced, usually an unreachable API server).
///
/// Not a finding: `SyncLoop (housekeeping, skipped): sources aren't ready yet` for less than
/// [`SOURCES_SYNC`] (a kubelet's start) with no removal skipped.
pub(super) fn static_pod_removal_blocked(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    let group: Vec<&LoggedEvent> = logs
        .all
        .iter()
        .filter(|e| {
            matches!(
                e.event.kind,
                EventKind::SkippingDeleteSourcesNotReady
                    | EventKind::HousekeepingSkippedSourcesNotReady
            )
        })
        .collect();
    // Housekeeping skipped while the sources sync is every kubelet's start (`SyncLoop
    // (housekeeping, skipped)`, V(4), until the API source has listed once): only a removal
    // skipped, or housekeeping skipped for a minute, is the kubelet holding back.
    let skipped_housekeeping: Vec<&LoggedEvent> = group
        .iter()
        .copied()
        .filter(|e| e.event.kind == EventKind::HousekeepingSkippedSourcesNotReady)
        .collect();
    let removal_skipped = group.len() > skipped_housekeeping.len();
    if !removal_skipped && longest_run(&skipped_housekeeping, SOURCES_GAP) < SOURCES_SYNC {
        return;
    }
    // The sources the log shows delivering pods (a `SyncLoop` op from it): not the one that has
    // not synced.
    let delivering: BTreeSet<&str> = logs
        .all
        .iter()
        .filter(|e| matches!(e.event.kind, EventKind::SyncLoop(_)))
        .filter_map(|e| {
            e.event.config_source.map(|s| match s {
                ConfigSource::Api => "api",
                ConfigSource::File => "file",
                ConfigSource::Http => "http",
            })
        })
        .collect();
    let (note, fix) = if delivering.contains("api") {
        (
            format!(
                "; the log shows the {} source{} delivering pods, so the one not ready is another \
                 (the static pod directory's file source, or the static pod URL's http source)",
                delivering.iter().copied().collect::<Vec<_>>().join(" and "),
                if delivering.len() == 1 { "" } else { "s" }
            ),
            "check the kubelet's other config sources: the static pod directory (staticPodPath, \
             --pod-manifest-path) must exist and be readable, the static pod URL (--manifest-url) \
             must answer; an embedding kubelet (a mesos executor, k3s) may hold its own source \
             unready; once every source has synced the removal proceeds"
                .to_string(),
        )
    } else {
        (
            String::new(),
            "check the kubelet's connection to the API server (journalctl -u kubelet | grep -i -e \
             'connection refused' -e Unauthorized); once the API source syncs the removal proceeds"
                .to_string(),
        )
    };
    let mut f = finding(
        FindingKind::StaticPodRemovalBlocked,
        Severity::Warning,
        format!(
            "the kubelet skips pod removal and housekeeping because its config sources are not ready ({}{}){note}",
            plural(records(&group), "record", "records"),
            over(&group)
        ),
        "kubelet.go HandlePodRemoves and syncLoopIteration: until every config source (file, http, api) has \
         synced, removals are skipped (\"skipping delete because sources aren't ready yet\") so a removed static \
         pod keeps running",
        fix,
    );
    f.pod = logs.pod_of(&NodeView::empty(), &group, None, None);
    f.evidence = quote(&group);
    out.push(f);
}

// === StaticPodRemoved ===

/// How soon after a static pod's REMOVE an ADD of the same name from the same source makes it
/// a replacement (a changed manifest), not a removal: the source sends both in one update, so
/// they are logged within milliseconds; 5 s.
const REPLACED_WITHIN: SignedDuration = SignedDuration::from_secs(5);

/// `config/file.go` (and `config/http.go`): a static pod whose manifest left the directory is
/// REMOVEd (`SyncLoop REMOVE source="file"`; legacy `SyncLoop (REMOVE, "file")`), its pod
/// worker kills it with the pod's grace period and housekeeping deletes its mirror pod
/// (`kubelet_pods.go` `HandlePodCleanups`, `mirror_client.go` "Deleting a mirror pod"). A
/// lifecycle note (info), saying when the mirror pod went; kubelets before the graceful static
/// pod deletion (k/k #90999, #98103) delete it at once, before the containers have stopped. A
/// REMOVE followed within [`REPLACED_WITHIN`] by an ADD of the same pod from the same source is
/// a changed manifest, said so (the pod was replaced, not removed).
///
/// Not reported when a finding about the same pod says more (`StaticPodNotRemoved`,
/// `StuckPodWorker`).
pub(super) fn static_pod_removed(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    let mut done: BTreeSet<String> = BTreeSet::new();
    // The pods a finding already says more of, by UID and by (namespace, name).
    let mut told_uids: HashSet<String> = HashSet::new();
    let mut told_names: HashSet<(String, String)> = HashSet::new();
    for f in out.iter().filter(|f| {
        matches!(
            f.kind,
            FindingKind::StaticPodNotRemoved | FindingKind::StuckPodWorker
        )
    }) {
        if let Some(p) = &f.pod {
            if !p.uid.is_empty() {
                told_uids.insert(p.uid.clone());
            }
            told_names.insert((p.namespace.clone(), p.name.clone()));
        }
    }
    for remove in logs.of(&[EventKind::SyncLoop(SyncOp::Remove)]).filter(|e| {
        matches!(
            e.event.config_source,
            Some(ConfigSource::File | ConfigSource::Http)
        )
    }) {
        let Some(name) = pod_name_key(remove) else {
            continue;
        };
        if !done.insert(name.clone()) {
            continue;
        }
        let named: Vec<&LoggedEvent> = logs.of_name(&name).iter().map(|&i| &logs.all[i]).collect();
        let uid = own_uid(remove)
            .or_else(|| static_uid(logs, &name))
            .or_else(|| {
                named
                    .iter()
                    .filter(|e| !after(remove, e))
                    .find_map(|e| own_uid(e))
            });
        let mut pod = split_pod(&name);
        pod.uid = uid.clone().unwrap_or_default();
        let told = told_uids.contains(&pod.uid)
            || told_names.contains(&(pod.namespace.clone(), pod.name.clone()));
        if told {
            continue;
        }
        let later = |e: &LoggedEvent| !after(remove, e);
        let mirror_deleted = named
            .iter()
            .copied()
            .find(|e| e.event.kind == EventKind::MirrorPodDeleting && later(e));
        let mirror_api: Vec<&LoggedEvent> = named
            .iter()
            .copied()
            .filter(|e| {
                matches!(
                    e.event.kind,
                    EventKind::SyncLoop(SyncOp::Delete) | EventKind::SyncLoop(SyncOp::Remove)
                ) && e.event.config_source == Some(ConfigSource::Api)
                    && later(e)
            })
            .collect();
        let pending = uid
            .as_deref()
            .map_or(&[][..], |u| logs.of_uid(u))
            .iter()
            .map(|&i| &logs.all[i])
            .filter(|e| e.event.kind == EventKind::OrphanedPodPendingVolumes && later(e));
        let mirror_uid = mirror_api
            .iter()
            .filter_map(|e| own_uid(e))
            .find(|u| Some(u) != uid.as_ref());
        let mirror_note = match mirror_deleted {
            Some(m) => {
                let dt = match (remove.time, m.time) {
                    (Some(a), Some(b)) => Some(b.duration_since(a)),
                    _ => None,
                };
                let early = dt.is_some_and(|d| d < SignedDuration::from_secs(30));
                format!(
                    "; its mirror pod{} was deleted{}{}",
                    mirror_uid
                        .as_deref()
                        .map_or(String::new(), |u| format!(" (API UID {u})")),
                    dt.map_or(String::new(), |d| format!(" {} later", dur(d))),
                    if early {
                        ", before the containers' grace period could run out (k/k #90999: older kubelets \
                         delete it without waiting)"
                    } else {
                        ""
                    }
                )
            }
            None => String::new(),
        };
        let source = match remove.event.config_source {
            Some(ConfigSource::Http) => "http",
            _ => "file",
        };
        // A changed manifest is a REMOVE of the old pod and an ADD of the new in one update of
        // the source (`config/config.go` `podStorage.merge`): replaced, not removed.
        let added_again = named.iter().copied().find(|e| {
            e.event.kind == EventKind::SyncLoop(SyncOp::Add)
                && e.event.config_source == remove.event.config_source
                && later(e)
                && e.time
                    .zip(remove.time)
                    .is_none_or(|(a, r)| a.duration_since(r) <= REPLACED_WITHIN)
        });
        let what = if added_again.is_some() {
            format!(
                "was replaced: its manifest changed, so the {source} source REMOVEd the old pod and ADDed the new one"
            )
        } else {
            format!("was removed from its {source} source")
        };
        let mut f = finding(
            FindingKind::StaticPodRemoved,
            Severity::Info,
            format!(
                "static pod {name}{} {what}{}{mirror_note}",
                uid.as_deref().map_or(String::new(), |u| format!(" ({u})")),
                remove.time.map_or(String::new(), |t| format!(" at {t}")),
            ),
            "config/file.go: a static pod whose manifest left the directory is REMOVEd; its pod worker kills it \
             with the pod's grace period and housekeeping deletes its mirror pod (kubelet_pods.go \
             HandlePodCleanups); graceful static pod deletion came with k/k #98103",
            format!(
                "none if the manifest was removed on purpose (otherwise put it back); if its containers still run \
                 after the grace period: crictl pods --name {} (that is StaticPodNotRemoved)",
                sh(&pod.name)
            ),
        );
        f.pod = Some(pod);
        let mut quoted: Vec<&LoggedEvent> = vec![remove];
        quoted.extend(added_again);
        quoted.extend(mirror_deleted);
        quoted.extend(pending);
        quoted.extend(mirror_api);
        f.evidence = quote(&quoted);
        out.push(f);
    }
}

/// The registry's runner of `StaticPodRemovalBlocked`.
pub(super) fn run_removal_blocked(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    static_pod_removal_blocked(input.logs, out);
}

/// The registry's runner of `StaticPodRemoved`: after the rules whose findings say more of the
/// same pod (`StaticPodNotRemoved`, `StuckPodWorker`), which it reads in `out`.
pub(super) fn run_removed(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    static_pod_removed(input.logs, out);
}
