//! Pod directories: `OrphanedPodDirectory` (state) and `OrphanedPodVolumes` (logs).

#[allow(unused_imports)]
use super::logs::*;
#[allow(unused_imports)]
use super::*;

impl Ctx<'_> {
    /// `kubelet_volumes.go` `cleanupOrphanedPodDirs`, run by housekeeping every 2 s: a
    /// `pods/<uid>` directory of a pod neither desired nor running is removed once its volumes
    /// are unmounted; only empty volume directories are rmdir'ed, so a directory that stays
    /// holds a mounted or non-empty volume.
    pub(super) fn orphaned_pod_directories(
        &self,
        out: &mut Vec<Finding>,
        skipped: &mut Vec<SkippedRule>,
    ) {
        if let Some(why) = self.missing(&[View::PodDirs, View::Cri, View::Api, View::Manifests]) {
            skipped.push(skip(FindingKind::OrphanedPodDirectory, &why));
            return;
        }
        let (Some(dirs), Some(cri)) = (&self.view.pod_dirs, &self.view.cri) else {
            return;
        };
        let mut known: HashSet<&str> = self.api_uids.clone();
        known.extend(cri.sandboxes.iter().map(|s| s.pod.uid.as_str()));
        known.extend(cri.containers.iter().filter_map(Container::pod_uid));
        known.extend(self.node_mirrors.iter().filter_map(|m| m.mirror_hash()));
        known.extend(self.manifest_pods().filter_map(|(_, m)| m.uid.as_deref()));
        // A valid manifest without a sandbox or mirror pod has a UID (its config hash) that
        // podcoroner cannot compute; a static-looking directory may be that pod's.
        let unmatched_manifests: Vec<&str> = self
            .manifest_pods()
            .filter(|(_, m)| {
                let full = m.full_name(&self.view.node_name);
                m.uid.is_none()
                    && !cri
                        .sandboxes
                        .iter()
                        .any(|s| s.pod.namespace == m.namespace && s.pod.name == full)
                    && self.node_mirror_by_name(&m.namespace, &full).is_none()
            })
            .map(|(path, _)| path)
            .collect();
        for d in dirs {
            if known.contains(d.uid.as_str())
                || d.modified_at.is_some_and(|t| !self.past_min_age(t))
            {
                continue;
            }
            if looks_like_config_hash(&d.uid) && !unmatched_manifests.is_empty() {
                continue;
            }
            let left = if d.volume_dirs.is_empty() {
                format!(
                    "no volume directories left; entries: {}",
                    list_or_none(&d.entries)
                )
            } else {
                format!("volume directories left: {}", d.volume_dirs.join(", "))
            };
            out.push(Finding {
                kind: FindingKind::OrphanedPodDirectory,
                severity: Severity::Warning,
                summary: format!("pod directory {} belongs to no known pod; {left}", d.path),
                pod: Some(PodRef { namespace: String::new(), name: String::new(), uid: d.uid.clone() }),
                sandbox_id: None,
                container_id: None,
                path: Some(d.path.clone()),
                evidence: vec![
                    Evidence::new(
                        EvidenceSource::Filesystem,
                        format!(
                            "{} exists{}; {left}",
                            d.path,
                            d.modified_at.map_or(String::new(), |t| format!(", modified {t}"))
                        ),
                    ),
                    Evidence::new(
                        EvidenceSource::Apiserver,
                        format!(
                            "no pod with uid {} among {} pods from {}",
                            d.uid,
                            self.n_api_pods(),
                            self.api_origin()
                        ),
                    ),
                    Evidence::new(
                        EvidenceSource::Cri,
                        format!("no pod sandbox or container labelled io.kubernetes.pod.uid={}", d.uid),
                    ),
                ],
                kubelet_rule: "kubelet_volumes.go cleanupOrphanedPodDirs (housekeeping, every 2 s): the \
                               directory of a pod neither desired nor running is removed once its volumes \
                               are unmounted; only empty volume directories are removed (\"Orphaned pod \
                               found, but volume paths are still present on disk\")"
                    .into(),
                remediation: format!(
                    "grep {uid} /proc/mounts and umount what is listed; the kubelet then removes the \
                     directory at its next housekeeping, but only rmdirs volume directories: one that \
                     is unmounted yet not empty stays until you inspect and remove it (ls -la \
                     {path}/volumes/*/*)",
                    uid = sh(&d.uid),
                    path = sh(&d.path)
                ),
                gc_eligible: false,
            });
        }
    }

    // === InvalidStaticPodManifest ===
}

// === OrphanedPodVolumes ===

/// The paths under `pods/<uid>/` a text names.
pub(super) fn pod_paths(text: &str, uid: &str) -> Vec<String> {
    let needle = format!("/pods/{uid}/");
    let mut paths = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(&needle).map(|a| a + from) {
        let start = text[..at].rfind([' ', '"', '=', '\'']).map_or(0, |s| s + 1);
        let end = text[at..]
            .find([' ', '"', '\'', '\\'])
            .map_or(text.len(), |e| e + at);
        let path = text[start..end].trim_end_matches([':', '.', ',']);
        if path.starts_with('/') && !paths.iter().any(|p| p == path) {
            paths.push(path.to_string());
        }
        from = at + needle.len();
    }
    paths
}

/// `kubelet_volumes.go` `cleanupOrphanedPodDirs`: "Orphaned pod "<uid>" found, but volume paths
/// are still present on disk" (up to 1.20) and the roll-up "There were many similar errors"
/// carrying `orphaned pod "<uid>" found, but …` (later), every housekeeping (2 s). One finding
/// per UID, its repeats counted; `numErrs` says how many orphaned pods fail in all. A cut UID is
/// merged into the full one another line names. The volume manager's "Could not construct volume
/// information" for the same UID (after a kubelet restart) says why the volumes stay.
///
/// Not a finding: a UID whose directory the pod directory view no longer lists.
pub(super) fn orphaned_pod_volumes(logs: &Logs<'_>, view: &NodeView, out: &mut Vec<Finding>) {
    let mut groups: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in logs
        .all
        .iter()
        .filter(|e| e.event.kind == EventKind::OrphanedPodVolumes)
    {
        if let Some(key) = logs.uid_key(e) {
            groups.entry(key).or_default().push(e);
        }
    }
    for (uid, group) in groups {
        let full = !uid.ends_with('…');
        // The directory is gone now: healed.
        if let Some(dirs) = &view.pod_dirs
            && full
            && !dirs.iter().any(|d| d.uid == uid)
        {
            continue;
        }
        let related = |k: EventKind| -> Vec<&LoggedEvent> {
            if !full {
                return Vec::new();
            }
            logs.of_uid(&uid)
                .iter()
                .map(|&i| &logs.all[i])
                .filter(|e| e.event.kind == k)
                .collect()
        };
        let unreconstructed = related(EventKind::VolumeReconstructionFailed);
        let cleaned = related(EventKind::OrphanedPodVolumesCleaned);
        let at_least = group
            .iter()
            .filter_map(|e| e.event.count())
            .max()
            .unwrap_or(1);
        let subpaths = group.iter().any(|e| e.text.contains("subpath"));
        let what = if subpaths {
            "volume subpaths"
        } else {
            "volume paths"
        };
        let mut left: Vec<String> = Vec::new();
        if full {
            for e in group.iter().chain(unreconstructed.iter()) {
                for p in pod_paths(&e.text, &uid) {
                    if !left.contains(&p) {
                        left.push(p);
                    }
                }
            }
        }
        let root = left
            .iter()
            .find_map(|p| {
                p.find(&format!("/pods/{uid}/"))
                    .map(|at| p[..at].to_string())
            })
            .unwrap_or_else(|| "/var/lib/kubelet".to_string());
        let mut notes = String::new();
        if at_least > 1 {
            notes.push_str(&format!(
                "; at least {at_least} orphaned pods fail like this on the node, only this one is named"
            ));
        }
        // The kubelet removed the volumes directory after the last error, which was about
        // volumes/ (not volume-subpaths/, whose removal comes after it in the same pass), and
        // logged none since: what failed is gone (a stray file under volumes/,
        // kubernetes/kubernetes#105536).
        let last_error = group.iter().filter_map(|e| e.time).max();
        let healed_at = cleaned
            .iter()
            .filter_map(|e| e.time)
            .max()
            .filter(|&c| !subpaths && last_error.is_some_and(|t| c > t));
        if healed_at.is_none() && !cleaned.is_empty() {
            notes.push_str("; its volumes/ directory was cleaned up, what stays is elsewhere in the pod directory");
        }
        if !unreconstructed.is_empty() {
            notes.push_str(
                "; the kubelet could not reconstruct its volumes after a restart (\"Could not construct volume \
                 information\"), so it never unmounts or removes them",
            );
        }
        let (severity, summary) = match healed_at {
            Some(at) => (
                Severity::Info,
                format!(
                    "the kubelet could not remove the directory of orphaned pod {uid} ({}{}), then cleaned up its \
                     volumes directory at {at} and logged no error for it since: healed{notes}",
                    plural(records(&group), "record", "records"),
                    over(&group)
                ),
            ),
            None => {
                // kubelet 1.2-1.6 says why: `Failed to remove orphaned pod "<uid>" dir; err: …`.
                let failed = group
                    .iter()
                    .rev()
                    .filter(|e| e.text.contains("Failed to remove orphaned pod"))
                    .find_map(|e| {
                        e.text
                            .split_once("err: ")
                            .map(|(_, r)| r.trim().to_string())
                    });
                // Later kubelets say which removal failed: `orphaned pod "<uid>" found, but error
                // occurred when trying to remove the volumes dir: not a directory`.
                // Others put the error in the middle: `found, but error not a directory occurred
                // when trying to remove the volumes dir`; said the same way.
                let occurred = group.iter().rev().find_map(|e| {
                    let t = e.event.error.as_deref().unwrap_or(&e.text);
                    let (_, rest) = t.split_once("found, but error ")?;
                    let rest = rest
                        .split('"')
                        .next()
                        .unwrap_or(rest)
                        .trim_end_matches('\\')
                        .trim();
                    Some(match rest.strip_prefix("occurred ") {
                        Some(r) => format!("error occurred {r}"),
                        None => match rest.split_once(" occurred ") {
                            Some((err, when)) => format!("error occurred {when}: {err}"),
                            None => format!("error {rest}"),
                        },
                    })
                });
                let why = match failed.or(occurred) {
                    Some(err) if err.ends_with("not a directory") => format!(
                        "removing it fails: {err}: a file sits where the kubelet removes only \
                         empty directories (a CSI driver's vol_data.json left in \
                         volumes/kubernetes.io~csi/<volume>/?)"
                    ),
                    Some(err) => format!("removing it fails: {err}"),
                    None => format!("{what} are still present"),
                };
                (
                    Severity::Warning,
                    format!(
                        "the kubelet cannot remove the directory of orphaned pod {uid}: {why} ({}{}){notes}",
                        plural(records(&group), "record", "records"),
                        over(&group)
                    ),
                )
            }
        };
        let mut f = finding(
            FindingKind::OrphanedPodVolumes,
            severity,
            summary,
            "kubelet_volumes.go cleanupOrphanedPodDirs: the directory of a pod neither desired nor running is \
             removed once its volumes are unmounted, but only empty volume directories are removed (rmdir, \
             never a recursive delete); the error repeats every housekeeping (2 s)",
            format!(
                "grep {u} /proc/mounts and umount what is listed (never rm -rf a mounted volume: it deletes the \
                 volume's data); then ls -la {root}/pods/{u}/ and remove what is left by hand{}",
                if left.is_empty() {
                    String::new()
                } else {
                    " (the paths in the evidence)".to_string()
                },
                u = sh(uid.trim_end_matches('…'))
            ),
        );
        f.pod = Some(PodRef {
            namespace: String::new(),
            name: String::new(),
            uid: uid.clone(),
        });
        if full {
            f.path = Some(format!("{root}/pods/{uid}"));
        }
        for p in &left {
            f.evidence.push(Evidence::new(
                EvidenceSource::KubeletLog,
                format!("left: {p}"),
            ));
        }
        let mut quoted: Vec<&LoggedEvent> = unreconstructed;
        quoted.extend(cleaned);
        quoted.extend(group.iter().copied());
        f.evidence.extend(quote(&quoted));
        out.push(f);
    }
}

/// The registry's runner of `OrphanedPodVolumes`.
pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    orphaned_pod_volumes(input.logs, input.view, out);
}
