//! `NodeResourcePressure`: the node short of memory, disk or PIDs: the kubelet's eviction
//! manager reclaims them and refuses pods, or the image GC cannot free the image filesystem.

#[allow(unused_imports)]
use super::logs::*;
#[allow(unused_imports)]
use super::*;

/// How long the kubelet's log must go on without an eviction manager record for the pressure
/// to count as relieved: the manager checks every 10 s (`evictionMonitoringPeriod`) and logs
/// `attempting to reclaim` at each check whose threshold is still met.
const RELIEVED: SignedDuration = SignedDuration::from_mins(2);

/// [`RELIEVED`] for the image GC, which runs every 5 min (`ImageGCPeriod`): two of its runs.
const GC_RELIEVED: SignedDuration = SignedDuration::from_mins(11);

/// How long a GC run takes to say it failed: one that logged its start (`over the high
/// threshold`) and no failure this long after went through.
const GC_RUN: SignedDuration = SignedDuration::from_mins(1);

/// Records further apart than this are separate episodes (the image GC's period and more).
const EPISODE_GAP: SignedDuration = GC_RELIEVED;

/// The records of the node's pressure: the eviction manager's five (the first five, read by
/// [`outcome`]), its admission refusals, the image GC's failures.
const KINDS: [EventKind; 7] = [
    EventKind::EvictionReclaiming,
    EventKind::EvictionReclaimedWithoutEvicting,
    EventKind::EvictionMustEvict,
    EventKind::EvictionBlocked,
    EventKind::PodEvicted,
    EventKind::EvictionAdmitRejected,
    EventKind::ImageGcFailed,
];

/// The latest time a record stands for: its own, or the last of the repeats folded into it.
fn last_time(e: &LoggedEvent) -> Option<Timestamp> {
    let folded = e.folded.as_deref().and_then(|f| f.span).map(|(_, b)| b);
    e.time.max(folded)
}

/// The resource a record names: `resourceName="…"` (structured), else the word after
/// `to reclaim ` or `able to reduce ` (legacy: `attempting to reclaim ephemeral-storage`,
/// `able to reduce memory pressure`).
fn resource_of(text: &str) -> Option<&str> {
    fn word(rest: &str) -> Option<&str> {
        let rest = rest.trim_start_matches('"');
        let end = rest
            .find(|c: char| c.is_whitespace() || c == '"' || c == ',' || c == '.')
            .unwrap_or(rest.len());
        Some(&rest[..end]).filter(|w| !w.is_empty())
    }
    if let Some(at) = text.find("resourceName=") {
        return word(&text[at + "resourceName=".len()..]);
    }
    for key in ["to reclaim ", "able to reduce "] {
        if let Some(at) = text.find(key) {
            return word(&text[at + key.len()..]);
        }
    }
    None
}

/// The node condition a resource's threshold sets (`eviction/helpers.go` `signalToNodeCondition`):
/// memory `MemoryPressure`, PIDs `PIDPressure`, every filesystem signal (`ephemeral-storage`
/// since 1.8; `nodefs`, `imagefs` and their inodes before) `DiskPressure`.
fn condition_of(resource: &str) -> &'static str {
    match resource {
        "memory" => "MemoryPressure",
        "pids" => "PIDPressure",
        _ => "DiskPressure",
    }
}

/// How the eviction manager's last episode ends, by its records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// It can evict none: no pod active, none evicted, or every pod it last ranked said to be
    /// critical, and no pod evicted after.
    Blocked,
    /// Every pod it last ranked is a static pod (its UID a config hash) and none was evicted
    /// after: the kubelet does not evict critical pods, and a control plane's static pods are.
    OnlyStaticRanked,
    /// It must evict pods, and evicted or is evicting them.
    Evicting,
    /// The image and container GC freed enough each time (`able to reduce … pressure without
    /// evicting pods`).
    ReclaimedWithoutEvicting,
    /// Only that it attempts to reclaim (the log cut before it says more).
    Reclaiming,
    /// Pods evicted with no threshold met (no `attempting to reclaim`): `localStorageEviction`,
    /// which evicts a pod over its own `ephemeral-storage` limit or an emptyDir's `sizeLimit`
    /// before any threshold is judged. The pod's own, not the node's.
    OwnLimits,
}

/// The pods a record names: its structured `pod=`/`pods=[…]`, else the legacy full names
/// (`name_namespace(uid)`, `format.Pod`) among its words (`pods ranked for eviction: a_ns(uid),
/// b_ns(uid)`).
fn pods_of<'e>(e: &'e LoggedEvent) -> Vec<crate::logs::PodName<'e>> {
    if !e.event.ids.pods.is_empty() {
        return e.event.ids.pods.clone();
    }
    e.text
        .split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']')
        .filter_map(crate::logs::ids::full_name)
        .collect()
}

/// `ns/name` of a pod as the records name it (`name` alone when no namespace).
fn label(p: &crate::logs::PodName<'_>) -> String {
    match &p.namespace {
        Some(ns) => format!("{ns}/{}", p.name),
        None => p.name.to_string(),
    }
}

/// Whether the record says the eviction manager can evict no pod at all: `no pods are active
/// to evict`, `unable to evict any pods from the node` (not `cannot evict a critical pod`,
/// which is said of one pod before it goes on to the next one ranked).
fn evicts_none(e: &LoggedEvent) -> bool {
    e.event.kind == EventKind::EvictionBlocked
        && !e.text.contains("cannot evict a critical")
        && !e.text.contains("cannot get mirror pod")
}

fn outcome(episode: &[&LoggedEvent]) -> Outcome {
    use EventKind::*;
    let last = |kinds: &[EventKind]| episode.iter().rposition(|e| kinds.contains(&e.event.kind));
    let evicted = last(&[PodEvicted]);
    let relieved = last(&[EvictionReclaimedWithoutEvicting]);
    // What settles a check: a pod evicted, or the pressure relieved without evicting.
    let settled = evicted.max(relieved);
    if let Some(b) = episode.iter().rposition(|e| evicts_none(e))
        && settled.is_none_or(|p| p < b)
    {
        return Outcome::Blocked;
    }
    // The last ranking, and whether every pod in it is one the manager will not evict: a
    // static pod (its UID a config hash), or one it said is critical after ranking it.
    let ranked = episode
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, e)| e.event.kind == EvictionMustEvict)
        .map(|(i, e)| (i, pods_of(e)))
        .find(|(_, pods)| !pods.is_empty());
    if let Some((r, pods)) = ranked
        && settled.is_none_or(|p| p < r)
    {
        let critical: BTreeSet<String> = episode[r..]
            .iter()
            .filter(|e| e.event.kind == EvictionBlocked)
            .flat_map(|e| pods_of(e).iter().map(label).collect::<Vec<_>>())
            .collect();
        let all_static = pods
            .iter()
            .all(|p| p.uid.as_deref().is_some_and(super::looks_like_config_hash));
        if all_static {
            return Outcome::OnlyStaticRanked;
        }
        if pods.iter().all(|p| critical.contains(&label(p))) {
            return Outcome::Blocked;
        }
    }
    let evicting = last(&[EvictionMustEvict, PodEvicted, EvictionBlocked]);
    if relieved.is_some() && relieved >= evicting {
        return Outcome::ReclaimedWithoutEvicting;
    }
    if last(&[EvictionReclaiming, EvictionMustEvict]).is_none() && evicted.is_some() {
        return Outcome::OwnLimits;
    }
    if evicting.is_some() {
        return Outcome::Evicting;
    }
    Outcome::Reclaiming
}

/// `ns/name` of each pod the records name, in order, once each: of the pod evictions that
/// went through (`pod is evicted successfully`) or, `failed`, of those whose kill failed (`pod
/// failed to evict`: its memory or disk is not freed).
fn evicted(episode: &[&LoggedEvent], failed: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for e in episode.iter().filter(|e| {
        e.event.kind == EventKind::PodEvicted && e.text.contains("failed to evict") == failed
    }) {
        for p in &pods_of(e) {
            let label = label(p);
            if seen.insert(label.clone()) {
                out.push(label);
            }
        }
    }
    out
}

/// `bytes` as the kubelet's figures read best: `4.0 GiB`, `0 B`.
fn size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// What an image GC run freed of what it had to: `Wanted to free <n> bytes, but freed <m>
/// bytes` (`image_gc_manager.go` `GarbageCollect`, before 1.26), `Attempted to free <n> bytes,
/// but only found <m> bytes eligible to free.` (1.26+). A figure cut by the line's end (a
/// pager's `>`) is `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shortfall {
    wanted: Option<u64>,
    freed: Option<u64>,
}

/// The [`Shortfall`] an image GC failure gives; `None` when its error is another (the stats
/// not ready at a start, a runtime call failing) or when it freed what it had to (`… but freed
/// <m> bytes space with errors in image deletion`, `m` at least `n`: an image it could not
/// delete, the space freed all the same).
fn gc_shortfall(e: &LoggedEvent) -> Option<Shortfall> {
    let t = &*e.text;
    // A whole figure is followed by ` bytes`; one the line's end cut is not.
    let num = |s: &str| -> Option<u64> {
        let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
        s[digits.len()..]
            .starts_with(" bytes")
            .then(|| digits.parse().ok())
            .flatten()
    };
    let (at, freed_key) = if let Some(i) = t.find("anted to free ") {
        (i + "anted to free ".len(), "but freed ")
    } else {
        let i = t.find("ttempted to free ")?;
        (i + "ttempted to free ".len(), "but only found ")
    };
    let rest = &t[at..];
    let wanted = num(rest);
    let freed = rest
        .find(freed_key)
        .and_then(|i| num(&rest[i + freed_key.len()..]));
    if let (Some(w), Some(f)) = (wanted, freed)
        && f >= w
    {
        return None;
    }
    Some(Shortfall { wanted, freed })
}

/// A GC figure as said: its size, or `…` when the line cut it.
fn figure(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "… (the line is cut)".to_string(), size)
}

/// The image filesystem's usage and the GC's high threshold, in percent, from `"Disk usage on
/// image filesystem is over the high threshold, trying to free bytes down to the low threshold"
/// usage=89 highThreshold=85` (legacy `[imageGCManager]: Disk usage on image filesystem is at
/// 89% which is over the high threshold (85%)`).
fn image_fs_usage(e: &LoggedEvent) -> Option<(u32, u32)> {
    let t = &*e.text;
    let num = |s: &str| -> Option<u32> {
        s.trim_start_matches(['"', '('])
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .ok()
    };
    if let (Some(u), Some(h)) = (t.find("usage="), t.find("highThreshold=")) {
        return Some((num(&t[u + 6..])?, num(&t[h + 14..])?));
    }
    let u = t.find("filesystem is at ")? + "filesystem is at ".len();
    let h = t.find("high threshold (")? + "high threshold ".len();
    Some((num(&t[u..])?, num(&t[h..])?))
}

/// The node conditions an admission refusal names (`nodeCondition=[DiskPressure]`, `node has
/// conditions: [MemoryPressure]`).
fn admission_conditions(e: &LoggedEvent) -> impl Iterator<Item = &'static str> + '_ {
    ["MemoryPressure", "DiskPressure", "PIDPressure"]
        .into_iter()
        .filter(|c| e.text.contains(c))
}

/// `eviction/eviction_manager.go`: `synchronize` (an eviction threshold met past its grace
/// period: `attempting to reclaim <resource>` at each 10 s check; the node-level reclaim, image
/// and container GC, not enough: `must evict pod(s)`; pods ranked and evicted one per check by
/// `evictPod`, critical pods never: `cannot evict a critical pod`) and `Admit` (`Failed to admit
/// pod to node` while the node has a pressure condition); `image_gc_manager.go`
/// `GarbageCollect` (every 5 min: `Wanted to free <n> bytes, but freed <m> bytes`). One finding
/// for the last episode (records less than [`EPISODE_GAP`] apart): critical when the eviction
/// manager cannot relieve the pressure where the log ends (its last word that it can evict none,
/// or every pod it last ranked a static pod); a warning while it evicts or reclaims, refuses pods
/// at admission, or the image GC cannot free what it must; info when the GC freed enough each
/// time, or when the kubelet's log goes on without a record (the eviction manager's
/// [`RELIEVED`], the image GC's [`GC_RELIEVED`]: the pressure over).
pub(super) fn node_resource_pressure(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    let all: Vec<&LoggedEvent> = logs
        .of(&KINDS)
        .filter(|e| e.event.kind != EventKind::ImageGcFailed || gc_shortfall(e).is_some())
        .collect();
    // The last episode: back from the last record while the gaps stay under EPISODE_GAP.
    let mut start = all.len();
    while start > 0 {
        let joined = start == all.len()
            || match (last_time(all[start - 1]), all[start].time) {
                (Some(a), Some(b)) => b.duration_since(a) <= EPISODE_GAP,
                _ => true,
            };
        if !joined {
            break;
        }
        start -= 1;
    }
    let episode = &all[start..];
    if episode.is_empty() {
        return;
    }
    let of = |kinds: &[EventKind]| -> Vec<&LoggedEvent> {
        episode
            .iter()
            .copied()
            .filter(|e| kinds.contains(&e.event.kind))
            .collect()
    };
    let eviction = of(&KINDS[..5]);
    let admission = of(&[EventKind::EvictionAdmitRejected]);
    let mut image_gc = of(&[EventKind::ImageGcFailed]);
    // A later GC run that went through (`Image garbage collection succeeded`, which the kubelet
    // logs at V(1) after a failure; or an `over the high threshold` start no failure follows
    // within a minute): the image filesystem was brought down after all.
    if let Some(&failed) = image_gc.last() {
        let ran_after = |e: &&LoggedEvent| after(e, failed);
        let succeeded = logs
            .of(&[EventKind::ImageGcSucceeded])
            .any(|e| ran_after(&e));
        let started_clean = logs
            .of(&[EventKind::ImageFsOverThreshold])
            .filter(|e| ran_after(e))
            .any(|start| {
                kubelet_goes_on_after(logs, &[start], GC_RUN)
                    && !image_gc.iter().any(|f| after(f, start))
            });
        if succeeded || started_clean {
            image_gc.clear();
        }
    }
    if eviction.is_empty() && admission.is_empty() && image_gc.is_empty() {
        return;
    }
    // The usage the failing run started from: the last `over the high threshold` before it.
    let image_fs = image_gc.last().and_then(|failed| {
        logs.of(&[EventKind::ImageFsOverThreshold])
            .filter(|e| !after(e, failed))
            .filter_map(image_fs_usage)
            .last()
    });

    let mut resources: Vec<&str> = Vec::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for r in eviction.iter().filter_map(|e| resource_of(&e.text)) {
        if seen.insert(r) {
            resources.push(r);
        }
    }
    let mut conditions: BTreeSet<&str> = resources.iter().map(|r| condition_of(r)).collect();
    conditions.extend(admission.iter().flat_map(|e| admission_conditions(e)));
    // The image GC's high threshold is not an eviction signal: its failing says the image
    // filesystem fills, not that DiskPressure is set.
    let under = if !conditions.is_empty() {
        conditions.iter().copied().collect::<Vec<_>>().join(" and ")
    } else if !image_gc.is_empty() {
        "disk pressure on its image filesystem".to_string()
    } else {
        "resource pressure".to_string()
    };
    // Only the filesystem signals have node-level reclaim (the image and container GC;
    // `buildSignalToNodeReclaimFuncs`): memory and PIDs go straight to evicting pods.
    let gc_reclaims =
        resources.is_empty() || resources.iter().any(|r| condition_of(r) == "DiskPressure");
    let what = if resources.is_empty() {
        "a resource".to_string()
    } else {
        resources.join(" and ")
    };

    let quiet =
        |group: &[&LoggedEvent], gap| group.is_empty() || kubelet_goes_on_after(logs, group, gap);
    let over_now =
        quiet(&eviction, RELIEVED) && quiet(&admission, RELIEVED) && quiet(&image_gc, GC_RELIEVED);
    let outcome = (!eviction.is_empty()).then(|| outcome(&eviction));
    let blocked = matches!(outcome, Some(Outcome::Blocked | Outcome::OnlyStaticRanked));
    let own_limits_only =
        outcome == Some(Outcome::OwnLimits) && admission.is_empty() && image_gc.is_empty();

    let mut said: Vec<String> = Vec::new();
    if let Some(o) = outcome {
        let evicted_ok = evicted(&eviction, false);
        let not_killed = evicted(&eviction, true);
        let mut evicted_said = String::new();
        if !evicted_ok.is_empty() {
            evicted_said.push_str(&format!(
                ", evicted {}: {}",
                plural(evicted_ok.len(), "pod", "pods"),
                listed(&evicted_ok)
            ));
        }
        if !not_killed.is_empty() {
            evicted_said.push_str(&format!(
                ", could not kill {} it evicts (`pod failed to evict`: what it uses is not \
                 freed): {}",
                plural(not_killed.len(), "pod", "pods"),
                listed(&not_killed)
            ));
        }
        said.push(match o {
            Outcome::Blocked => format!(
                "the eviction manager must reclaim {what} and can evict none of its pods (only \
                 critical ones left, or none active){evicted_said}"
            ),
            Outcome::OnlyStaticRanked => format!(
                "the eviction manager must reclaim {what} and every pod it ranks is a static pod, \
                 which it does not evict when critical (a control plane's are){evicted_said}"
            ),
            Outcome::Evicting if gc_reclaims => format!(
                "the eviction manager reclaims {what}, the image and container GC not freeing \
                 enough, by evicting pods{evicted_said}"
            ),
            Outcome::Evicting => {
                format!("the eviction manager reclaims {what} by evicting pods{evicted_said}")
            }
            Outcome::OwnLimits => format!(
                "the eviction manager evicts pods for their own limits (an ephemeral-storage \
                 limit or an emptyDir's sizeLimit exceeded; no node threshold met){evicted_said}"
            ),
            Outcome::Reclaiming => {
                format!("the eviction manager attempts to reclaim {what}{evicted_said}")
            }
            Outcome::ReclaimedWithoutEvicting => format!(
                "the eviction manager meets its {what} threshold, and each time the image and \
                 container GC frees enough without evicting pods"
            ),
        });
    }
    if !admission.is_empty() {
        let mut pods: Vec<String> = Vec::new();
        let mut seen: BTreeSet<String> = BTreeSet::new();
        for p in admission.iter().flat_map(|e| pods_of(e)) {
            let l = label(&p);
            if seen.insert(l.clone()) {
                pods.push(l);
            }
        }
        let named = if pods.is_empty() {
            String::new()
        } else {
            format!(": {}", listed(&pods))
        };
        said.push(format!(
            "it refuses pods at admission ({}; a refused pod is Failed with reason Evicted, and \
             a DaemonSet makes its pod again){named}",
            plural(records(&admission), "refusal", "refusals")
        ));
    }
    if let Some(&last) = image_gc.last()
        && let Some(short) = gc_shortfall(last)
    {
        let fs = image_fs
            .map(|(usage, high)| format!(" (at {usage}%, over its high threshold of {high}%)"))
            .unwrap_or_default();
        said.push(format!(
            "the image GC cannot bring the image filesystem down{fs}: it wanted to free {}, \
             freed {} ({}: the space is not in unused images)",
            figure(short.wanted),
            figure(short.freed),
            plural(records(&image_gc), "run", "runs")
        ));
    }
    let span = format!(
        "{}{}",
        plural(records(episode), "record", "records"),
        over(episode)
    );
    let said = said.join("; ");
    let (severity, summary) = if own_limits_only {
        (
            Severity::Info,
            format!("{said} ({span}): the pods' own, not the node's"),
        )
    } else if over_now {
        (
            Severity::Info,
            format!(
                "the node was under {under}, and the kubelet's log goes on without it: {said} \
                 ({span})"
            ),
        )
    } else if blocked {
        (
            Severity::Critical,
            format!(
                "the kubelet cannot relieve the node's {under} where the log ends: {said} ({span})"
            ),
        )
    } else if outcome == Some(Outcome::ReclaimedWithoutEvicting)
        && admission.is_empty()
        && image_gc.is_empty()
    {
        (
            Severity::Info,
            format!("the node reaches its {under} threshold where the log ends: {said} ({span})"),
        )
    } else {
        (
            Severity::Warning,
            format!("the node is under {under} where the log ends: {said} ({span})"),
        )
    };
    let mut fix = String::new();
    if own_limits_only {
        fix.push_str(
            "the evicted pod's own limits: kubectl describe pod (the eviction message names the \
             limit: an emptyDir's sizeLimit or the containers' ephemeral-storage); what it writes \
             to its emptyDir, its writable layer and its logs",
        );
    } else if conditions.contains("DiskPressure") || conditions.is_empty() {
        fix.push_str(
            "disk: df -h and df -i on the kubelet's root (/var/lib/kubelet) and the runtime's \
             (/var/lib/containerd, /var/lib/docker); du -sh /var/log/pods /var/lib/kubelet/pods/* \
             (emptyDir volumes, container logs); crictl rmi --prune; give pods ephemeral-storage \
             limits",
        );
    }
    if conditions.contains("MemoryPressure") {
        if !fix.is_empty() {
            fix.push_str("; ");
        }
        fix.push_str(
            "memory: free -m; crictl stats (the containers using most); give pods memory \
             requests and limits, and the node systemReserved and kubeReserved",
        );
    }
    if conditions.contains("PIDPressure") {
        if !fix.is_empty() {
            fix.push_str("; ");
        }
        fix.push_str(
            "PIDs: ps -eLf | wc -l against kernel.pid_max; the pod forking most (crictl stats); \
             set the kubelet's podPidsLimit",
        );
    }
    if !image_gc.is_empty() {
        fix.push_str(
            "; the image GC frees only unused images: what fills the image filesystem is images \
             in use or other data on it (du -sh /var/lib/containerd/* or /var/lib/docker/*, \
             /var/log)",
        );
    }
    if blocked && !over_now {
        fix.push_str(
            "; the pods left are critical (static pods, priority system-node-critical or \
             system-cluster-critical), which the eviction manager never evicts: free the \
             resource by hand, or the node stays under pressure and its control plane at risk",
        );
    }
    fix.push_str(
        "; evicted and refused pods stay Failed (reason Evicted) until deleted: kubectl get pods \
         -A --field-selector spec.nodeName=<node>,status.phase=Failed",
    );
    let mut f = finding(
        FindingKind::NodeResourcePressure,
        severity,
        summary,
        "eviction/eviction_manager.go synchronize (every 10 s): a threshold met past its grace \
         period sets the node condition and reclaims the resource, first by the image and \
         container GC, then by evicting one pod per check in rank order; evictPod never evicts \
         a critical pod (kubelettypes.IsCriticalPod: static, mirror, or system priority); Admit \
         refuses pods while the node has the condition; image_gc_manager.go GarbageCollect (every \
         5 min) frees unused images down to its low threshold",
        fix,
    );
    f.evidence = quote(episode);
    out.push(f);
}

/// The registry's runner.
pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    node_resource_pressure(input.logs, out);
}
