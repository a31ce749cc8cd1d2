//! Pod, sandbox and container identities named by a log line, from its fields and its text.
//!
//! Field shapes: `containerID="containerd://<id>"`, `containerID="<id>"`,
//! `containerID={"Type":"containerd","ID":"<id>"}`, `podSandboxID={Type:containerd ID:<id>}`,
//! `pod="ns/name"`, `pods=[ns/name]`, `pods=["ns/name"]`, JSON `{"name":…,"namespace":…}`,
//! `podUID=<uid>`, `event=&{ID:<uid> Type:… Data:<id>}`, containerd's `id=<id>`.
//!
//! Text shapes: 64-hex IDs are typed by the words before them (`sandbox "<id>"`,
//! `StopPodSandbox for \"<id>\"`, `find container \\\"<id>\\\"`, `Data:<id>`; quotes and
//! backslashes of any escaping depth are skipped); UUIDs (and 32-hex static pod UIDs after a pod
//! word) are pod UIDs, as are `/pod<uid>` cgroup paths; legacy pod full names
//! `"name_namespace(uid)"`; runtime names `k8s_POD_<name>_<ns>_<uid>_<attempt>`,
//! `k8s_<container>_<name>_<ns>_<uid>_<attempt>` and sandbox names
//! `<name>_<ns>_<uid>_<attempt>`. An ID cut by the end of a truncated line is kept as a
//! [`PartialId`], never as a full ID.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::json;
use super::record::{FieldValue, ParsedLine};

/// A pod named by a line: `namespace/name` (structured), `name_namespace(uid)` (legacy), a
/// runtime name, or a bare name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PodName<'p> {
    /// Namespace, when the line gives it.
    pub namespace: Option<Cow<'p, str>>,
    /// Pod name.
    pub name: Cow<'p, str>,
    /// Pod UID, when the line gives it next to the name.
    pub uid: Option<Cow<'p, str>>,
}

impl PodName<'_> {
    /// Copies the borrowed parts.
    pub fn into_owned(self) -> PodName<'static> {
        PodName {
            namespace: self.namespace.map(|n| Cow::Owned(n.into_owned())),
            name: Cow::Owned(self.name.into_owned()),
            uid: self.uid.map(|u| Cow::Owned(u.into_owned())),
        }
    }
}

/// What kind of object an ID names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdKind {
    /// A pod UID: a UUID, or the 32-hex config hash of a static pod.
    PodUid,
    /// A CRI pod sandbox ID (64 hex).
    Sandbox,
    /// A CRI container ID (64 hex).
    Container,
    /// A container or sandbox ID the line does not say which (containerd `id=` on shim events).
    Object,
}

/// An ID known only by its start, because the line was cut inside it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PartialId<'p> {
    /// What the ID names.
    pub kind: IdKind,
    /// The characters that survived. Match it as a prefix; never report it as a whole ID.
    pub prefix: Cow<'p, str>,
}

/// The identities one line names. Each slot holds the first one found; fields come before text.
///
/// The identities few records name (an ID of unstated kind, a container name, a cut ID) are
/// kept apart in one box, read through [`Ids::object_id`], [`Ids::container_name`] and
/// [`Ids::partial`]: a diagnosis keeps most records of a troubled node's log, and a record that
/// names none of them costs one pointer for the three.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Ids<'p> {
    /// Pods named by name (the SyncLoop lists, `pod=`, legacy full names).
    pub pods: Vec<PodName<'p>>,
    /// Pod UID.
    pub pod_uid: Option<Cow<'p, str>>,
    /// Pod sandbox ID (64 hex).
    pub sandbox_id: Option<Cow<'p, str>>,
    /// Container ID (64 hex).
    pub container_id: Option<Cow<'p, str>>,
    /// The rarely named identities; `None` when the line names none of them.
    rare: Option<Box<RareIds<'p>>>,
}

/// The identities of [`Ids`] few lines name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct RareIds<'p> {
    /// A container or sandbox ID of unstated kind (64 hex).
    object_id: Option<Cow<'p, str>>,
    /// Container name (`containerName=`, the container part of a `k8s_…` runtime name).
    container_name: Option<Cow<'p, str>>,
    /// IDs cut by the end of a truncated line.
    partial: Vec<PartialId<'p>>,
}

impl std::fmt::Debug for Ids<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ids")
            .field("pods", &self.pods)
            .field("pod_uid", &self.pod_uid)
            .field("sandbox_id", &self.sandbox_id)
            .field("container_id", &self.container_id)
            .field("object_id", &self.object_id())
            .field("container_name", &self.container_name())
            .field("partial", &self.partial())
            .finish()
    }
}

impl<'p> Ids<'p> {
    /// Whether no identity at all was found.
    pub fn is_empty(&self) -> bool {
        self.pods.is_empty()
            && self.pod_uid.is_none()
            && self.sandbox_id.is_none()
            && self.container_id.is_none()
            && self.object_id().is_none()
            && self.container_name().is_none()
            && self.partial().is_empty()
    }

    /// A container or sandbox ID of unstated kind (64 hex): containerd's `id=` on shim events.
    pub fn object_id(&self) -> Option<&str> {
        self.rare.as_ref()?.object_id.as_deref()
    }

    /// Container name (`containerName=`, the container part of a `k8s_…` runtime name).
    pub fn container_name(&self) -> Option<&str> {
        self.rare.as_ref()?.container_name.as_deref()
    }

    /// IDs cut by the end of a truncated line, in the order found.
    pub fn partial(&self) -> &[PartialId<'p>] {
        self.rare.as_ref().map_or(&[], |r| &r.partial)
    }

    /// The rare slots, made when first written.
    fn rare_mut(&mut self) -> &mut RareIds<'p> {
        self.rare.get_or_insert_with(Box::default)
    }

    /// Sets the container name unless one is set.
    pub(crate) fn set_container_name(&mut self, name: &'p str) {
        let r = self.rare_mut();
        if r.container_name.is_none() {
            r.container_name = Some(Cow::Borrowed(name));
        }
    }

    /// Copies the borrowed parts.
    pub fn into_owned(self) -> Ids<'static> {
        let own = |o: Option<Cow<'p, str>>| o.map(|c| Cow::Owned(c.into_owned()));
        Ids {
            pods: self.pods.into_iter().map(PodName::into_owned).collect(),
            pod_uid: own(self.pod_uid),
            sandbox_id: own(self.sandbox_id),
            container_id: own(self.container_id),
            rare: self.rare.map(|r| {
                Box::new(RareIds {
                    object_id: own(r.object_id),
                    container_name: own(r.container_name),
                    partial: r
                        .partial
                        .into_iter()
                        .map(|p| PartialId {
                            kind: p.kind,
                            prefix: Cow::Owned(p.prefix.into_owned()),
                        })
                        .collect(),
                })
            }),
        }
    }

    /// Puts a full ID of `kind` in its slot unless the slot is taken. A container ID equal to the
    /// sandbox ID (Docker names the pause container by the sandbox ID) is not repeated.
    pub(crate) fn set(&mut self, kind: IdKind, id: &'p str) {
        let slot = match kind {
            IdKind::PodUid => &mut self.pod_uid,
            IdKind::Sandbox => &mut self.sandbox_id,
            IdKind::Container => &mut self.container_id,
            IdKind::Object => &mut self.rare_mut().object_id,
        };
        if slot.is_none() {
            *slot = Some(Cow::Borrowed(id));
        }
        if self.container_id.is_some() && self.container_id == self.sandbox_id {
            self.container_id = None;
        }
        if let Some(r) = &mut self.rare
            && r.object_id.is_some()
            && (r.object_id == self.sandbox_id || r.object_id == self.container_id)
        {
            r.object_id = None;
            if **r == RareIds::default() {
                self.rare = None;
            }
        }
    }

    fn set_id(&mut self, kind: IdKind, id: &'p str, cut: bool) {
        if is_full_id(id) || (kind == IdKind::PodUid && is_pod_uid(id)) {
            self.set(kind, id);
        } else if cut && id.len() >= 8 && id.bytes().all(|c| c.is_ascii_hexdigit() || c == b'-') {
            self.add_partial(kind, id);
        }
    }

    fn add_partial(&mut self, kind: IdKind, prefix: &'p str) {
        // A prefix of an ID the line names in full adds nothing (case 01 cuts a Docker path
        // holding the sandbox ID).
        let known = [
            self.pod_uid.as_deref(),
            self.sandbox_id.as_deref(),
            self.container_id.as_deref(),
            self.object_id(),
        ];
        if known
            .iter()
            .any(|f| f.is_some_and(|f| f.starts_with(prefix)))
        {
            return;
        }
        let partial = &mut self.rare_mut().partial;
        if !partial.iter().any(|p| p.kind == kind && p.prefix == prefix) {
            partial.push(PartialId {
                kind,
                prefix: Cow::Borrowed(prefix),
            });
        }
    }

    fn add_pod(&mut self, pod: PodName<'p>) {
        if self.pod_uid.is_none()
            && let Some(uid) = &pod.uid
        {
            self.pod_uid = Some(uid.clone());
        }
        if !self.pods.contains(&pod) {
            // Most records name one pod, and a kept record keeps this vector's room (its owned
            // copy is collected in place): room for one, not the four a first push makes.
            if self.pods.is_empty() {
                self.pods.reserve_exact(1);
            }
            self.pods.push(pod);
        }
    }
}

/// Whether `s` is a full CRI container or sandbox ID: 64 lowercase hex digits.
pub fn is_full_id(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// Whether `s` is a pod UID: a UUID (`8-4-4-4-12` hex) or a static pod's 32-hex config hash.
pub fn is_pod_uid(s: &str) -> bool {
    is_uuid(s) || (s.len() == 32 && s.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')))
}

fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                c == b'-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

/// The ID inside a container or sandbox reference: `containerd://<id>`, `docker://<id>`,
/// `cri-o://<id>`, `{"Type":"containerd","ID":"<id>"}`, `{Type:containerd ID:<id>}`, or a bare
/// `<id>`.
pub fn container_ref(v: &str) -> &str {
    let v = v.trim();
    if let Some(at) = v.find("://") {
        return &v[at + 3..];
    }
    if v.starts_with('{') || v.starts_with("&{") {
        for key in ["\"ID\":\"", "ID:", "Id:"] {
            if let Some(at) = v.find(key) {
                let rest = &v[at + key.len()..];
                let end = rest
                    .find(|c: char| !c.is_ascii_hexdigit())
                    .unwrap_or(rest.len());
                return &rest[..end];
            }
        }
    }
    v
}

/// Pods in a `pod=`/`pods=` value: `ns/name`, `[ns/name ns2/name2]`, `["ns/name"]`,
/// `{"name":…,"namespace":…}` or a JSON array of those.
pub fn pods_value(v: &str) -> Vec<PodName<'_>> {
    let mut out = Vec::new();
    let v = v.trim();
    if v.starts_with('{') || (v.starts_with('[') && v[1..].trim_start().starts_with('{')) {
        let mut i = 0;
        while let Some(off) = v[i..].find('{') {
            let at = i + off;
            let Some(obj) = json::object(v, at) else {
                break;
            };
            let get = |k: &str| {
                obj.members
                    .iter()
                    .find(|(key, _)| key == k)
                    .map(|(_, val)| match val {
                        FieldValue::Quoted(c)
                        | FieldValue::Bare(c)
                        | FieldValue::Json(c)
                        | FieldValue::Block(c) => c.clone(),
                    })
            };
            if let Some(name) = get("name") {
                out.push(PodName {
                    namespace: get("namespace"),
                    name,
                    uid: get("uid"),
                });
            }
            i = obj.end.max(at + 1);
        }
        return out;
    }
    let inner = v
        .strip_prefix('[')
        .map(|r| r.strip_suffix(']').unwrap_or(r))
        .unwrap_or(v);
    for item in inner.split([' ', ',']) {
        let item = item.trim_matches('"');
        if item.is_empty() {
            continue;
        }
        if let Some((ns, name)) = item.split_once('/')
            && is_dns(ns)
            && !name.is_empty()
        {
            out.push(PodName {
                namespace: Some(Cow::Borrowed(ns)),
                name: Cow::Borrowed(name),
                uid: None,
            });
        }
    }
    out
}

/// Whether `s` looks like a Kubernetes object name (RFC 1123: lowercase alphanumerics, `-`, `.`).
fn is_dns(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-' || c == b'.')
        && s.as_bytes()[0].is_ascii_alphanumeric()
}

/// Reads the identities in the fields of `line`. `default` types a bare `id=` value.
pub(crate) fn from_fields<'p>(
    line: &'p ParsedLine<'_>,
    default: Option<IdKind>,
    ids: &mut Ids<'p>,
) {
    let cut = line.truncated;
    for f in &line.fields {
        let v = f.value.as_str();
        match &*f.key {
            "containerID" | "containerId" | "ContainerID" => {
                ids.set_id(IdKind::Container, container_ref(v), cut)
            }
            "podSandboxID" | "sandboxID" | "podSandboxId" | "sandboxId" | "sandbox" => {
                ids.set_id(IdKind::Sandbox, container_ref(v), cut)
            }
            "podUID" | "podID" | "podUid" | "uid" | "pod_uid" => {
                ids.set_id(IdKind::PodUid, v.trim_matches('"'), cut)
            }
            // `object` names the pod of a pod event (`"Event occurred" object="ns/name"`).
            "pod" | "pods" | "object" => {
                for p in pods_value(v) {
                    ids.add_pod(p);
                }
            }
            "containerName" if ids.container_name().is_none() && !v.is_empty() => {
                ids.set_container_name(v);
            }
            "event" => {
                // PLEG event: &{ID:<pod uid> Type:… Data:<container id>} or its JSON form.
                if let Some(uid) = struct_member(v, "ID") {
                    ids.set_id(IdKind::PodUid, uid, cut);
                }
                if let Some(data) = struct_member(v, "Data") {
                    ids.set_id(IdKind::Container, data, cut);
                }
            }
            "id" if is_full_id(v) => ids.set(default.unwrap_or(IdKind::Object), v),
            _ => {}
        }
    }
}

/// The value of `key` in a Go `%+v` struct (`{ID:x Type:y}`) or JSON object (`{"ID":"x"}`).
pub(crate) fn struct_member<'v>(v: &'v str, key: &str) -> Option<&'v str> {
    let b = v.as_bytes();
    let mut from = 0;
    while let Some(off) = v[from..].find(key) {
        let at = from + off;
        from = at + key.len();
        let before = at.checked_sub(1).map(|i| b[i]);
        let quoted = before == Some(b'"');
        if !matches!(before, Some(b'{' | b' ' | b',' | b'"')) {
            continue;
        }
        let mut i = at + key.len();
        if quoted {
            if b.get(i) != Some(&b'"') {
                continue;
            }
            i += 1;
        }
        if b.get(i) != Some(&b':') {
            continue;
        }
        i += 1;
        if b.get(i) == Some(&b'"') {
            i += 1;
        }
        let end = b[i..]
            .iter()
            .position(|&c| matches!(c, b' ' | b'"' | b',' | b'}'))
            .map_or(b.len(), |o| i + o);
        return Some(&v[i..end]);
    }
    None
}

/// Context of an ID from the words before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Sandbox,
    Container,
    Pod,
    None,
}

/// The pod of a CRI `PodSandboxMetadata` printed with Go's `%+v` (`&PodSandboxMetadata{Name:<name>,
/// Uid:<uid>,Namespace:<namespace>,Attempt:0,}`), as containerd's CRI plugin logs it
/// (`instrumentedService.RunPodSandbox`: "RunPodSandbox for %+v", "RunPodSandbox for %+v failed,
/// error", "RunPodSandbox for %+v returns sandbox id %q", `GetConfig().GetMetadata()`; containerd
/// 1.x `pkg/cri/server/instrumented_service.go`, 2.x `internal/cri/instrument`): the pod's name,
/// namespace and UID, for the sandbox the line names; of a line cut inside the struct, the parts
/// a comma ends. `None` without the struct or its whole name.
fn sandbox_metadata(text: &str) -> Option<PodName<'_>> {
    let at = text.find("PodSandboxMetadata{")? + "PodSandboxMetadata{".len();
    let body = &text[at..];
    // A line cut inside the struct (a pager's or a terminal's cut): its parts that a comma
    // ends are whole, the last one may be cut.
    let body = match body.find('}') {
        Some(end) => &body[..end],
        None => &body[..body.rfind(',').unwrap_or(0)],
    };
    let (mut name, mut uid, mut namespace) = (None, None, None);
    for part in body.split(',') {
        match part.split_once(':') {
            Some(("Name", v)) if !v.is_empty() => name = Some(v),
            Some(("Uid", v)) if is_pod_uid(v) => uid = Some(v),
            Some(("Namespace", v)) if !v.is_empty() => namespace = Some(v),
            _ => {}
        }
    }
    Some(PodName {
        namespace: namespace.map(Cow::Borrowed),
        name: Cow::Borrowed(name?),
        uid: uid.map(Cow::Borrowed),
    })
}

/// Scans free text for IDs and pod names. `default` types 64-hex IDs whose context says
/// nothing; `cut` says the text was cut at its end (so an ID running into the end is partial).
pub(crate) fn scan_text<'p>(text: &'p str, default: Option<IdKind>, cut: bool, ids: &mut Ids<'p>) {
    if let Some(pod) = sandbox_metadata(text) {
        ids.add_pod(pod);
    }
    let b = text.as_bytes();
    let mut i = 0;
    // Word by word (a word is a run of `[A-Za-z0-9_-]`): an ID starts a word, or follows the
    // `/pod` of a cgroup path; `pvc-<uuid>`, `cni-<id>` and `k8s_…_<uid>` do not count.
    while i < b.len() {
        if !is_word(b[i]) {
            i += 1;
            continue;
        }
        let word_start = i;
        let mut start = i;
        let mut cgroup_pod = false;
        if b[i..].starts_with(b"pod") && i > 0 && b[i - 1] == b'/' {
            start = i + 3;
            cgroup_pod = true;
        }
        if b.get(start).is_some_and(u8::is_ascii_hexdigit) {
            let (end, shape) = token(b, start);
            let at_end = end >= b.len();
            let tok = &text[start..end];
            match shape {
                Shape::Uuid => ids.set(IdKind::PodUid, tok),
                Shape::Hex(32)
                    if cgroup_pod || matches!(context(b, start), Ctx::Pod | Ctx::Sandbox) =>
                {
                    ids.set(IdKind::PodUid, tok);
                }
                Shape::Hex(64) if !cgroup_pod => {
                    let kind = match context(b, start) {
                        Ctx::Sandbox => IdKind::Sandbox,
                        Ctx::Container => IdKind::Container,
                        Ctx::Pod | Ctx::None => default.unwrap_or(IdKind::Object),
                    };
                    ids.set(kind, tok);
                }
                Shape::PartialUuid if cut && at_end => ids.add_partial(IdKind::PodUid, tok),
                // Docker's short ID (`stringid.TruncateID`, 12 hex) after `container`: dockerd's
                // `Container 7873876b3310 failed to exit …`, a prefix of the full ID.
                Shape::Hex(12) if matches!(context(b, start), Ctx::Container) => {
                    ids.add_partial(IdKind::Container, tok);
                }
                Shape::Hex(n) if cut && at_end && n >= 8 => {
                    let kind = match context(b, start) {
                        Ctx::Sandbox => IdKind::Sandbox,
                        Ctx::Container => IdKind::Container,
                        Ctx::Pod => IdKind::PodUid,
                        Ctx::None => default.unwrap_or(IdKind::Object),
                    };
                    ids.add_partial(kind, tok);
                }
                _ => {}
            }
            i = end.max(word_start + 1);
        }
        // Skip the rest of the word.
        while i < b.len() && is_word(b[i]) {
            i += 1;
        }
    }
    // Both name shapes need underscores; most texts have none.
    let underscores = memchr::memchr_iter(b'_', b).take(3).count();
    if underscores >= 3 {
        runtime_names(text, ids);
    }
    if underscores >= 1 && memchr::memchr(b'"', b).is_some() {
        legacy_full_names(text, ids);
    }
}

/// `[A-Za-z0-9_-]`: the bytes of a word for [`scan_text`] (a table: this is the hot loop).
#[inline]
fn is_word(c: u8) -> bool {
    WORD[usize::from(c)]
}

static WORD: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
        c += 1;
    }
    t
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Uuid,
    PartialUuid,
    Hex(usize),
    Word,
}

/// Reads the hex token at `start`: a UUID, a (possibly cut) UUID, a hex run, or part of a word.
fn token(b: &[u8], start: usize) -> (usize, Shape) {
    let run = |from: usize| {
        b[from..]
            .iter()
            .take_while(|c| c.is_ascii_hexdigit())
            .count()
    };
    let n = run(start);
    let end = start + n;
    if n == 8 && b.get(end) == Some(&b'-') {
        // UUID groups 8-4-4-4-12
        let mut pos = end;
        let mut complete = true;
        for want in [4usize, 4, 4, 12] {
            if b.get(pos) != Some(&b'-') {
                complete = false;
                break;
            }
            pos += 1;
            let got = run(pos);
            pos += got;
            if got != want {
                complete = false;
                break;
            }
        }
        if complete
            && !b
                .get(pos)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            return (pos, Shape::Uuid);
        }
        if pos >= b.len() {
            return (pos, Shape::PartialUuid);
        }
        return (pos, Shape::Word);
    }
    if b.get(end)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        return (end, Shape::Word);
    }
    (end, Shape::Hex(n))
}

/// Types an ID by up to three words before it, skipping quotes, backslashes and punctuation.
fn context(b: &[u8], start: usize) -> Ctx {
    let mut i = start;
    for _ in 0..3 {
        // Skip separators, at most a few.
        let mut skipped = 0;
        while i > 0 && !b[i - 1].is_ascii_alphabetic() && skipped < 8 {
            i -= 1;
            skipped += 1;
        }
        let end = i;
        while i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
            i -= 1;
        }
        if i == end {
            return Ctx::None;
        }
        let w = &b[i..end];
        let lower = |s: &[u8]| w.eq_ignore_ascii_case(s);
        let has = |needle: &[u8]| {
            w.windows(needle.len())
                .any(|win| win.eq_ignore_ascii_case(needle))
        };
        if has(b"sandbox") {
            return Ctx::Sandbox;
        }
        // A runtime's name types nothing: the kubelet's `kubecontainer.ContainerID` prints as
        // `{"containerd" "<id>"}` for a sandbox as for a container (`Failed to stop sandbox
        // {"containerd" "<id>"}`), and `containerd` is no `container`.
        if [&b"containerd"[..], b"docker", b"cri", b"o"]
            .iter()
            .any(|r| lower(r))
        {
            continue;
        }
        if has(b"container") || lower(b"data") {
            return Ctx::Container;
        }
        if lower(b"pod") || lower(b"pods") || lower(b"poduid") || lower(b"podid") || lower(b"uid") {
            return Ctx::Pod;
        }
        let filler = [
            &b"for"[..],
            b"id",
            b"with",
            b"starting",
            b"of",
            b"is",
            b"returns",
            b"reserved",
            b"name",
            b"the",
            b"a",
        ];
        if !filler.iter().any(|f| lower(f)) {
            return Ctx::None;
        }
    }
    Ctx::None
}

/// Runtime names that encode a pod: dockershim / CRI-O `k8s_POD_<name>_<ns>_<uid>_<attempt>`,
/// `k8s_<container>_<name>_<ns>_<uid>_<attempt>`, CRI-O pod sandbox names
/// `k8s_<name>_<ns>_<uid>_<attempt>`, and containerd sandbox names `<name>_<ns>_<uid>_<attempt>`.
fn runtime_names<'p>(text: &'p str, ids: &mut Ids<'p>) {
    for tok in text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))) {
        if tok.bytes().filter(|&c| c == b'_').count() < 3 {
            continue;
        }
        let parts: Vec<&str> = tok.split('_').collect();
        let (container, rest) = match parts.as_slice() {
            ["k8s", container, rest @ ..] if rest.len() == 4 => (Some(*container), rest),
            // CRI-O's pod sandbox name.
            ["k8s", rest @ ..] if rest.len() == 4 => (None, rest),
            rest if rest.len() == 4 => (None, rest),
            _ => continue,
        };
        let [name, ns, uid, attempt] = rest else {
            continue;
        };
        let attempt_ok = !attempt.is_empty()
            && (attempt.bytes().all(|c| c.is_ascii_digit()) || container.is_some());
        if !(is_dns(name) && is_dns(ns) && is_pod_uid(uid) && attempt_ok) {
            continue;
        }
        if let Some(c) = container {
            let c = c.split('.').next().unwrap_or(c);
            if c != "POD" {
                ids.set_container_name(c);
            }
        }
        ids.add_pod(PodName {
            namespace: Some(Cow::Borrowed(ns)),
            name: Cow::Borrowed(name),
            uid: Some(Cow::Borrowed(uid)),
        });
    }
}

/// Legacy kubelet pod full names inside quotes: `"name_namespace(uid)"`, `"name_namespace"`,
/// comma-separated lists of them (`SyncLoop (ADD, "api"): "a_ns(u1), b_ns(u2)"`), and
/// `(uid (*types.UID)(nil))` forms where the UID is unknown.
fn legacy_full_names<'p>(text: &'p str, ids: &mut Ids<'p>) {
    let mut rest = text;
    while let Some(open) = rest.find('"') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('"') else { break };
        let quoted = after[..close].trim_end_matches('\\');
        for item in quoted.split(", ") {
            if let Some(pod) = full_name(item) {
                ids.add_pod(pod);
            }
        }
        rest = &after[close + 1..];
    }
}

/// `name_namespace(uid)` or `name_namespace`: the pod as the kubelet's legacy logs and the pod
/// worker's errors name it (`format.Pod`); `None` when a part is no DNS name or the UID no pod
/// UID.
pub(crate) fn full_name(item: &str) -> Option<PodName<'_>> {
    let (full, uid) = match item.strip_suffix(')') {
        Some(r) => {
            let open = r.rfind('(')?;
            let uid = &r[open + 1..];
            (&r[..open], (!uid.is_empty()).then_some(uid))
        }
        None => (item, None),
    };
    let (name, ns) = full.rsplit_once('_')?;
    if !is_dns(name) || !is_dns(ns) || ns.contains('.') {
        return None;
    }
    if uid.is_some_and(|u| !is_pod_uid(u)) {
        return None;
    }
    Some(PodName {
        namespace: Some(Cow::Borrowed(ns)),
        name: Cow::Borrowed(name),
        uid: uid.map(Cow::Borrowed),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SB: &str = "cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60";

    #[test]
    fn container_ref_table() {
        let id = "c65a0000000000000000000000000000000000000000000000000000000000ff";
        let cases = [
            format!("containerd://{id}"),
            format!("docker://{id}"),
            format!("cri-o://{id}"),
            format!(r#"{{"Type":"containerd","ID":"{id}"}}"#),
            format!("{{Type:containerd ID:{id}}}"),
            id.to_owned(),
        ];
        for c in &cases {
            assert_eq!(container_ref(c), id, "{c}");
        }
    }

    #[test]
    fn pods_value_table() {
        let pn = |ns: &str, name: &str| (Some(ns.to_owned()), name.to_owned());
        type Pods = Vec<(Option<String>, String)>;
        let cases: &[(&str, Pods)] = &[
            (
                "[default/test-sts-a-0]",
                vec![pn("default", "test-sts-a-0")],
            ),
            (
                "[team-ns/static-nginx-10.0.0.11]",
                vec![pn("team-ns", "static-nginx-10.0.0.11")],
            ),
            (r#"["default/nginx"]"#, vec![pn("default", "nginx")]),
            ("[a/b c/d]", vec![pn("a", "b"), pn("c", "d")]),
            (
                "default/mypod-127.0.0.1",
                vec![pn("default", "mypod-127.0.0.1")],
            ),
            (
                r#"[{"name":"nettools","namespace":"dev"}]"#,
                vec![pn("dev", "nettools")],
            ),
            (
                r#"{"name":"x","namespace":"kube-system"}"#,
                vec![pn("kube-system", "x")],
            ),
            ("[]", vec![]),
        ];
        for (v, want) in cases {
            let got: Vec<(Option<String>, String)> = pods_value(v)
                .into_iter()
                .map(|p| (p.namespace.map(|n| n.into_owned()), p.name.into_owned()))
                .collect();
            assert_eq!(&got, want, "{v}");
        }
    }

    fn scan(text: &str, default: Option<IdKind>, cut: bool) -> Ids<'_> {
        let mut ids = Ids::default();
        scan_text(text, default, cut, &mut ids);
        ids
    }

    #[test]
    fn sandbox_metadata_names_the_pod_of_its_sandbox() {
        // case 22: containerd's RunPodSandbox failure, the sandbox ID only in its error
        let t = format!(
            r#"RunPodSandbox for &PodSandboxMetadata{{Name:coredns-f5cb5585b-s2bxk,Uid:eeb63f47-d6af-45ef-b52a-f37fb5bc75d5,Namespace:kube-system,Attempt:0,}} failed, error: failed to setup network for sandbox "{SB}""#
        );
        let ids = scan(&t, None, false);
        assert_eq!(ids.sandbox_id.as_deref(), Some(SB));
        assert_eq!(
            ids.pods,
            vec![PodName {
                namespace: Some(Cow::Borrowed("kube-system")),
                name: Cow::Borrowed("coredns-f5cb5585b-s2bxk"),
                uid: Some(Cow::Borrowed("eeb63f47-d6af-45ef-b52a-f37fb5bc75d5")),
            }]
        );
        // cut after its name (kata-containers#2754's pager): the name, nothing cut
        assert_eq!(
            scan(
                "RunPodSandbox for &PodSandboxMetadata{Name:nginx-kata,Uid:c363f62b-812>",
                None,
                true
            )
            .pods,
            vec![PodName {
                namespace: None,
                name: Cow::Borrowed("nginx-kata"),
                uid: None,
            }]
        );
        // cut inside its name, or with no name: no pod
        assert!(
            scan(
                "RunPodSandbox for &PodSandboxMetadata{Name:web-",
                None,
                true
            )
            .pods
            .is_empty()
        );
        assert!(
            scan("PodSandboxMetadata{Name:,Namespace:shop,}", None, false)
                .pods
                .is_empty()
        );
    }

    #[test]
    fn a_runtime_type_before_an_id_types_nothing() {
        // kubelet 1.18 `killPodWithSyncResult` (case 83): `kubecontainer.ContainerID` of a sandbox
        for ty in ["containerd", "docker", "cri-o"] {
            let t = format!(r#"Failed to stop sandbox {{"{ty}" "{SB}"}}"#);
            let ids = scan(&t, None, false);
            assert_eq!(ids.sandbox_id.as_deref(), Some(SB), "{ty}");
            assert_eq!(ids.container_id, None, "{ty}");
        }
        let t = format!(r#"Failed to stop container {{"containerd" "{SB}"}}"#);
        assert_eq!(scan(&t, None, false).container_id.as_deref(), Some(SB));
    }

    #[test]
    fn scan_text_typed_by_context() {
        // case 21: unescaped quotes
        let t = format!(r#"StopPodSandbox for "{SB}" failed"#);
        assert_eq!(scan(&t, None, false).sandbox_id.as_deref(), Some(SB));
        // case 25: two escaping levels left after one unescape
        let t = format!(
            r#"failed to "KillPodSandbox" for "e1909e28-5731-4111-8031-3c989b5dc0cd" with KillPodSandboxError: "rpc error: code = Unknown desc = failed to destroy network for sandbox \"{SB}\": plugin""#
        );
        let ids = scan(&t, None, false);
        assert_eq!(ids.sandbox_id.as_deref(), Some(SB));
        assert_eq!(
            ids.pod_uid.as_deref(),
            Some("e1909e28-5731-4111-8031-3c989b5dc0cd")
        );
        // find container
        let t = format!(r#"an error occurred when try to find container \"{SB}\": not found"#);
        assert_eq!(scan(&t, None, false).container_id.as_deref(), Some(SB));
        // CRI-O
        let t = format!(
            "could not find container \"{SB}\": container with ID starting with {SB} not found: ID does not exist"
        );
        assert_eq!(scan(&t, None, false).container_id.as_deref(), Some(SB));
        // no context: the default, else an object ID
        let t = format!("cleaning up {SB}");
        assert_eq!(
            scan(&t, Some(IdKind::Sandbox), false).sandbox_id.as_deref(),
            Some(SB)
        );
        assert_eq!(scan(&t, None, false).object_id(), Some(SB));
        // volume names are not pod UIDs, pods/<uid>/ paths are
        let t = "/var/lib/kubelet/pods/f97942cf-337e-11e7-b2b1-005056b7dc12/volumes/kubernetes.io~vsphere-volume/pvc-f969cb9e-337e-11e7-b2b1-005056b7dc12";
        let ids = scan(t, None, false);
        assert_eq!(
            ids.pod_uid.as_deref(),
            Some("f97942cf-337e-11e7-b2b1-005056b7dc12")
        );
        // cgroup path of a static pod
        let ids = scan(
            "/kubepods/besteffort/pod7c0663d52f9e8c61c7a733304c23b60f",
            None,
            false,
        );
        assert_eq!(
            ids.pod_uid.as_deref(),
            Some("7c0663d52f9e8c61c7a733304c23b60f")
        );
        // a Go pointer is not an ID
        assert!(scan("Details:(*api.StatusDetails)(0xc208474c00)", None, true).is_empty());
    }

    #[test]
    fn partial_ids_only_at_a_cut() {
        // case 04: cut inside the ID
        let ids = scan(r#"ContainerStatus for "4b31f1c4af5594effb2cf9"#, None, true);
        assert_eq!(ids.container_id, None);
        assert_eq!(
            ids.partial(),
            [PartialId {
                kind: IdKind::Container,
                prefix: Cow::Borrowed("4b31f1c4af5594effb2cf9")
            }]
        );
        // case 08: cut inside a UUID
        let ids = scan(r#"Orphaned pod "0ea83064-3383-11e7-"#, None, true);
        assert_eq!(ids.pod_uid, None);
        assert_eq!(ids.partial()[0].kind, IdKind::PodUid);
        assert_eq!(ids.partial()[0].prefix, "0ea83064-3383-11e7-");
        // the same text, not cut: nothing partial
        assert!(
            scan(r#"Orphaned pod "0ea83064-3383-11e7-"#, None, false)
                .partial()
                .is_empty()
        );
    }

    #[test]
    fn names_in_text() {
        // case 30: CRI-O infra container name
        let ids = scan(
            "failed to stop container k8s_POD_app-1-0_f48db403-dcfd-5852-90f9-dd8210f46a9e_6abac9df-1ac3-4ec1-8375-66bdead3b596_0: ttrpc: closed",
            None,
            false,
        );
        assert_eq!(ids.pods[0].name, "app-1-0");
        assert_eq!(
            ids.pods[0].namespace.as_deref(),
            Some("f48db403-dcfd-5852-90f9-dd8210f46a9e")
        );
        assert_eq!(
            ids.pod_uid.as_deref(),
            Some("6abac9df-1ac3-4ec1-8375-66bdead3b596")
        );
        // case 36: containerd sandbox name
        let ids = scan(
            "Name:prometheus-85dfb696c7-sm9g8_team-ns_2302e97a-03d2-11e9-9447-005056911476_0 Config",
            None,
            false,
        );
        assert_eq!(ids.pods[0].name, "prometheus-85dfb696c7-sm9g8");
        assert_eq!(ids.pods[0].namespace.as_deref(), Some("team-ns"));
        // case 14 / 17: legacy full names
        let ids = scan(
            r#"Deleting mirror pod "kube-controller-manager-node-a_kube-system(d4746eba-4156-11e8-84f4-0050569b7580)" because it is outdated"#,
            None,
            false,
        );
        assert_eq!(
            ids.pods,
            vec![PodName {
                namespace: Some(Cow::Borrowed("kube-system")),
                name: Cow::Borrowed("kube-controller-manager-node-a"),
                uid: Some(Cow::Borrowed("d4746eba-4156-11e8-84f4-0050569b7580")),
            }]
        );
        assert_eq!(
            ids.pod_uid.as_deref(),
            Some("d4746eba-4156-11e8-84f4-0050569b7580")
        );
        // case 16: name without UID; case 23: inside an error
        let ids = scan(
            r#"NetworkPlugin cni failed to teardown pod "app-1-3391168842-1cbzd_debug" network"#,
            None,
            false,
        );
        assert_eq!(ids.pods[0].namespace.as_deref(), Some("debug"));
        assert_eq!(ids.pods[0].uid, None);
        // not pod names
        assert!(
            scan(r#"[pod_container_deletor] "a_b_c" "Foo_Bar""#, None, false)
                .pods
                .is_empty()
        );
    }

    #[test]
    fn struct_member_table() {
        let v = "&{ID:ab7e1b0b-453f-4627-a749-47e48c2265a6 Type:ContainerDied Data:6cf7}";
        assert_eq!(
            struct_member(v, "ID"),
            Some("ab7e1b0b-453f-4627-a749-47e48c2265a6")
        );
        assert_eq!(struct_member(v, "Type"), Some("ContainerDied"));
        assert_eq!(struct_member(v, "Data"), Some("6cf7"));
        let v = r#"{"ID":"u","Type":"ContainerStarted","Data":"c"}"#;
        assert_eq!(struct_member(v, "Type"), Some("ContainerStarted"));
        assert_eq!(struct_member(v, "Data"), Some("c"));
        let v = r#"&pleg.PodLifecycleEvent{ID:"u1", Type:"ContainerDied", Data:"c1"}"#;
        assert_eq!(struct_member(v, "ID"), Some("u1"));
        assert_eq!(struct_member(v, "Type"), Some("ContainerDied"));
    }
}
