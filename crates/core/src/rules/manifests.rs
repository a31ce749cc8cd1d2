//! `InvalidStaticPodManifest`: a file in the manifest directory the kubelet cannot turn into a pod.

#[allow(unused_imports)]
use super::logs::*;
#[allow(unused_imports)]
use super::*;

impl Ctx<'_> {
    /// `config/file.go` `extractFromFile`: a file that does not decode into one valid Pod is
    /// skipped ("Can't process manifest file"), so its static pod never starts.
    pub(super) fn invalid_manifests(&self, out: &mut Vec<Finding>, skipped: &mut Vec<SkippedRule>) {
        let Some(crate::model::ManifestView { dir, files, .. }) = &self.view.manifests else {
            skipped.push(skip(
                FindingKind::InvalidStaticPodManifest,
                "the static pod manifest view is unavailable",
            ));
            return;
        };
        for m in files {
            let Err(error) = &m.pod else { continue };
            out.push(Finding {
                kind: FindingKind::InvalidStaticPodManifest,
                severity: Severity::Warning,
                summary: format!("static pod manifest {} cannot be read by the kubelet: {error}", m.path),
                pod: None,
                sandbox_id: None,
                container_id: None,
                path: Some(m.path.clone()),
                evidence: vec![Evidence::new(EvidenceSource::Manifest, format!("{}: {error}", m.path))],
                kubelet_rule: "config/file.go extractFromFile: a file in the static pod directory that \
                               does not decode to one valid Pod is skipped (\"Can't process manifest \
                               file\"), so the pod it defines never starts"
                    .into(),
                remediation: format!(
                    "fix {path}, or move it out of {dir} (editor backups belong elsewhere: every \
                     non-hidden file there is read); check with kubectl create --dry-run=client -f {path}",
                    path = sh(&m.path),
                    dir = sh(dir)
                ),
                gc_eligible: false,
            });
        }
    }

    // === FailedPodNotCleaned ===
}
