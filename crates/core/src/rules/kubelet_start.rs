//! `KubeletStartFailing`: the kubelet exits as it starts, and the log ends with it not running.

#[allow(unused_imports)]
use super::logs::*;
#[allow(unused_imports)]
use super::*;

/// How long after its last exit the kubelet's own records must go on for it to count as
/// running again: systemd restarts it 10 s after an exit (kubeadm's drop-in, `RestartSec=10`),
/// and a kubelet that exits at start does so within seconds of its `Kubelet version` line.
const RUNNING_AGAIN: SignedDuration = SignedDuration::from_mins(1);

/// `cmd/kubelet/app/server.go` `Run` and `kubelet.go` `initializeRuntimeDependentModules`: the
/// kubelet's `KubeletExited` records (`"command failed" err="failed to run Kubelet: …"`, the
/// `F…] failed to run Kubelet: …` of kubelets before 1.20, `Failed to start ContainerManager`),
/// with no record of the kubelet's more than [`RUNNING_AGAIN`] after the last: the kubelet is
/// not running where the log ends, so no pod on the node is started, stopped or reported, and
/// the node goes NotReady. Critical; a warning when the kubelet has no config file yet (`kubeadm
/// init` or `join` writes it: until then the crash loop is expected). An exit the runtime caused
/// (`validate service connection`) is `RuntimeUnhealthy`'s: classified `RuntimeCallFailed`.
pub(super) fn kubelet_start_failing(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    let exits: Vec<&LoggedEvent> = logs
        .of(&[EventKind::KubeletExited])
        .filter(|e| kubelets_exit(e))
        .collect();
    if exits.is_empty() || kubelet_goes_on_after(logs, &exits, RUNNING_AGAIN) {
        return;
    }
    // A kubelet that registered its Node or saw a container's life (the PLEG) after the last
    // exit runs again, however soon the log ends after.
    let last_exit = record_times(&exits).max();
    if logs.all.iter().any(|e| {
        matches!(e.event.kind, EventKind::NodeRegistered | EventKind::Pleg(_)) && e.time > last_exit
    }) {
        return;
    }
    // systemd's `Main process exited` is the same exit as the kubelet's own record of it, which
    // says why: systemd's count only when the log holds none of the kubelet's.
    let (own, unit): (Vec<&LoggedEvent>, Vec<&LoggedEvent>) =
        exits.iter().partition(|e| !by_systemd(e));
    // The kubelet's own exit record classified as its cause's (an exit on the runtime's
    // endpoint is RuntimeUnhealthy's): systemd's word of the same exit is not this kind's.
    if own.is_empty() && logs.all.iter().any(own_exit_of_another_kind) {
        return;
    }
    let exits = if own.is_empty() { unit } else { own };
    let restarts = restart_counter(logs);
    let last = exits
        .iter()
        .copied()
        .max_by_key(|e| e.time)
        .unwrap_or(exits[0]);
    // transport.go's exit is a message, no error: its words, not the whole line.
    let error = if by_systemd(last) {
        let t = &last.text;
        format!("systemd: {}", &t[systemd_exit_at(t).unwrap_or(0)..])
    } else if certificate_check(last) {
        "no valid client certificate, the API server answering: it exits to bootstrap a new one"
            .to_string()
    } else {
        super::teardown::error_quote(last)
    };
    let (mut severity, why, mut fix) = cause(&super::teardown::error_text(last));
    // systemd's word alone of one exit, its restart counter low: it may have been restarted by
    // hand, or be starting now; a warning until it repeats.
    if by_systemd(last) && records(&exits) < 2 && restarts.is_none_or(|(n, _)| n < 3) {
        severity = Severity::Warning;
    }
    // bootstrap.go's word, at this start, that the kubeconfig's client certificate expired:
    // why the kubelet needed its bootstrap kubeconfig at all.
    // Only for an exit for want of the bootstrap kubeconfig: an exit of another cause (swap,
    // the cgroup driver) after a bootstrap that went through is that cause's.
    let wants_bootstrap = {
        let err = super::teardown::error_text(last);
        err.contains("bootstrap-kubelet.conf") || err.contains("unable to load bootstrap")
    };
    let expired = logs
        .of(&[EventKind::BootstrapCertificateExpired])
        .filter(|_| wants_bootstrap)
        .filter(|e| match (e.time, last.time) {
            (Some(a), Some(b)) => a <= b && b.duration_since(a) <= RUNNING_AGAIN,
            _ => e.origin == last.origin,
        })
        .last();
    let why = match expired {
        Some(e) => {
            fix = format!(
                "the client certificate in the kubelet's kubeconfig expired ({}), and a new one is \
                 bootstrapped only with a bootstrap kubeconfig: on kubeadm, make a new kubeconfig \
                 on a control plane node (kubeadm kubeconfig user --org system:nodes --client-name \
                 system:node:<node> > kubelet.conf), put it at /etc/kubernetes/kubelet.conf, \
                 systemctl restart kubelet, then point it at \
                 /var/lib/kubelet/pki/kubelet-client-current.pem so it rotates from then on \
                 (rotateCertificates: true); or kubeadm join the node again",
                expiry_of(e).unwrap_or("its expiry is in the record")
            );
            " (its kubeconfig's client certificate expired, see the first record)"
        }
        None => why,
    };
    let mut f = finding(
        FindingKind::KubeletStartFailing,
        severity,
        format!(
            "the kubelet exits as it starts ({error}; {}{}{}), and nothing after shows it running: \
             no pod on this node is started, stopped or reported while it does not run{why}",
            plural(records(&exits), "exit", "exits"),
            over(&exits),
            match restarts {
                Some((n, _)) => format!("; systemd's restart counter at {n}"),
                None => String::new(),
            },
        ),
        "cmd/kubelet/app/server.go Run (`failed to run Kubelet: …`) and kubelet.go \
         initializeRuntimeDependentModules (`Failed to start ContainerManager`): the kubelet returns \
         the error and exits; systemd starts it again after RestartSec and it fails the same way \
         until the cause is fixed; the node's lease lapses and the node goes NotReady",
        fix,
    );
    f.evidence = quote(&exits);
    if let Some((_, e)) = restarts {
        f.evidence.push(line(e));
    }
    if let Some(e) = expired {
        f.evidence.insert(0, line(e));
    }
    out.push(f);
}

/// Whether `e` is the kubelet's own exit record classified as another kind (its cause's:
/// `"command failed" err="failed to run Kubelet: validate service connection: …"` is a
/// `RuntimeCallFailed`).
fn own_exit_of_another_kind(e: &LoggedEvent) -> bool {
    e.event.kind != EventKind::KubeletExited
        && (e.text.contains("failed to run Kubelet") || e.text.contains("\"command failed\""))
}

/// Whether the exit record is systemd's (`kubelet.service: Main process exited, …`), not the
/// kubelet's own.
fn by_systemd(e: &LoggedEvent) -> bool {
    systemd_exit_at(&e.text).is_some()
}

/// Where systemd's `Main process exited` (systemd 219: `main process exited`) after the
/// kubelet's unit name begins in `text`.
fn systemd_exit_at(text: &str) -> Option<usize> {
    [
        "kubelet.service: Main process exited",
        "kubelet.service: main process exited",
    ]
    .iter()
    .find_map(|w| text.find(w))
    .map(|at| at + "kubelet.service: ".len())
}

/// systemd's last `restart counter is at <n>` for the kubelet's unit, with its record: how many
/// times the unit restarted the kubelet since it was last started by hand.
fn restart_counter<'l>(logs: &Logs<'l>) -> Option<(u64, &'l LoggedEvent)> {
    logs.of(&[EventKind::KubeletRestartScheduled])
        .filter_map(|e| {
            let at = e.text.find("restart counter is at ")? + "restart counter is at ".len();
            let digits: String = e.text[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            Some((digits.parse().ok()?, e))
        })
        .max_by_key(|(_, e)| e.time)
}

/// The expiry bootstrap.go names: the text after `is expired: ` up to a quote (`2020-12-06
/// 18:55:55 +0000 UTC`).
fn expiry_of(e: &LoggedEvent) -> Option<&str> {
    let at = e.text.find("is expired: ")? + "is expired: ".len();
    let rest = &e.text[at..];
    let t = rest[..rest.find(['"', '\\']).unwrap_or(rest.len())].trim();
    (!t.is_empty()).then_some(t)
}

/// Whether an exit record is the kubelet's: component-base's `"command failed"` is every
/// component's (kube-proxy's, kube-scheduler's in a journal beside the kubelet's), so it counts
/// under the kubelet's identifier (or none) or when its error is the kubelet's own; the
/// kubelet's wordings (`failed to run Kubelet`) count under any identifier (a wrapper's,
/// minikube's `localkube`).
fn kubelets_exit(e: &LoggedEvent) -> bool {
    let own = [
        "failed to run Kubelet",
        "Kubelet config file",
        "kubelet config file",
        "kubelet flag",
        "Failed to start ContainerManager",
        "Failed to run kubelet",
        "No valid client certificate",
        "client certificate has expired",
        // systemd's word of the kubelet's unit.
        "kubelet.service: ",
    ];
    own.iter().any(|w| e.text.contains(w))
        || matches!(
            e.event.component,
            None | Some(crate::logs::Component::Kubelet)
        )
}

/// Whether `e` is a record of the kubelet's client certificate check (`transport.go`
/// `addCertRotation`: its certificate expired or removed), the exit or the `not responsive`
/// record NodeStatusUpdateFailing reads.
pub(super) fn certificate_check(e: &LoggedEvent) -> bool {
    e.text.contains("No valid client certificate")
        || e.text.contains("client certificate has expired")
}

/// The severity, what the summary adds and the fix, from the exit's error.
fn cause(err: &str) -> (Severity, &'static str, String) {
    use crate::logs::catalogue::contains_words;
    let restart = "; then systemctl restart kubelet";
    if contains_words(err, "running with swap on is not supported") {
        return (
            Severity::Critical,
            "",
            format!(
                "swap is on and the kubelet refuses it (failSwapOn): swapoff -a and remove the swap \
                 line from /etc/fstab (or set failSwapOn: false, with memorySwap's swapBehavior on \
                 1.28+){restart}"
            ),
        );
    }
    if err.contains("cgroup driver") || err.contains("cgroupDriver") {
        return (
            Severity::Critical,
            "",
            format!(
                "the kubelet's cgroup driver must be the runtime's: set cgroupDriver in \
                 /var/lib/kubelet/config.yaml (--cgroup-driver) to what the runtime uses (docker info \
                 | grep -i cgroup; containerd's SystemdCgroup in /etc/containerd/config.toml){restart}"
            ),
        );
    }
    let config = contains_words(err, "failed to load kubelet config file")
        || contains_words(err, "failed to load Kubelet config file");
    // `failed to read kubelet config file "<path>", error: open <path>: no such file or
    // directory`, often cut after `open` by journalctl's pager.
    if config && (err.contains("no such file or directory") || err.contains("error: open ")) {
        return (
            Severity::Warning,
            " (it cannot open its config file: before kubeadm init or join writes it, this crash \
             loop is expected)",
            format!(
                "the kubelet's config file is missing or unreadable: on a kubeadm node, kubeadm init or kubeadm \
                 join writes /var/lib/kubelet/config.yaml (kubeadm init phase kubelet-start on a \
                 node that was set up); elsewhere, the --config path in the kubelet's unit is wrong \
                 (systemctl cat kubelet){restart}"
            ),
        );
    }
    if config {
        return (
            Severity::Critical,
            "",
            format!(
                "the kubelet's config file does not load: the error names the file and the field \
                 (kubelet --config=<file> checks it); fix it{restart}"
            ),
        );
    }
    if err.contains("bootstrap-kubelet.conf") || contains_words(err, "unable to load bootstrap") {
        return (
            Severity::Critical,
            "",
            format!(
                "the kubelet has no bootstrap kubeconfig to join the cluster with: kubeadm join \
                 writes /etc/kubernetes/bootstrap-kubelet.conf (a fresh token: kubeadm token create \
                 --print-join-command){restart}"
            ),
        );
    }
    if err.contains("No valid client certificate") || err.contains("client certificate has expired")
    {
        return (
            Severity::Critical,
            "",
            format!(
                "the kubelet's client certificate expired or was removed: openssl x509 -enddate \
                 -noout -in /var/lib/kubelet/pki/kubelet-client-current.pem; the new one it asks \
                 for waits as a CSR (kubectl get csr; kubectl certificate approve <csr>), or the \
                 bootstrap kubeconfig it would ask with is missing or expired (kubeadm join the \
                 node again){restart}"
            ),
        );
    }
    if contains_words(err, "unknown flag") || contains_words(err, "failed to parse kubelet flag") {
        return (
            Severity::Critical,
            "",
            format!(
                "a flag the kubelet no longer has (1.24 removed the dockershim's, --network-plugin \
                 among them): remove it from the unit's arguments (systemctl cat kubelet; \
                 /var/lib/kubelet/kubeadm-flags.env){restart}"
            ),
        );
    }
    (
        Severity::Critical,
        "",
        format!(
            "read the error: it names what the kubelet could not set up (journalctl -u kubelet -b \
             | grep -m1 -B5 -E 'command failed|failed to run Kubelet'); fix it{restart}"
        ),
    )
}

/// The registry's runner.
pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    kubelet_start_failing(input.logs, out);
}
