//! `NodeStatusUpdateFailing`: the kubelet cannot update its Node's status.

#[allow(unused_imports)]
use super::logs::*;
#[allow(unused_imports)]
use super::*;

/// How long after its last failure the log must go on for the updates to count as going
/// through again: the kubelet updates its Node every `nodeStatusUpdateFrequency` (10 s), five
/// tries each, and logs each failed try.
const UPDATING_AGAIN: SignedDuration = SignedDuration::from_mins(1);

/// How long the API server may be out of reach before it is a finding: the node controller
/// marks the node NotReady after `node-monitor-grace-period` (40 s) and evicts its pods after
/// the `node.kubernetes.io/unreachable` toleration's 300 s; a control plane node's kubelet
/// fails for the first minute or two of every boot, until its static API server is up.
const UNREACHABLE: SignedDuration = SignedDuration::from_mins(5);

/// How long the node controller waits for a node's status before it marks the node NotReady
/// (`node-monitor-grace-period`, 40 s).
const NOT_READY: SignedDuration = SignedDuration::from_secs(40);

/// The tries of one `updateNodeStatus` (`nodeStatusUpdateRetry`): it logs `Error updating node
/// status, will retry` for each failed one, then `update node status exceeds retry count`.
const NODE_STATUS_UPDATE_RETRY: usize = 5;

/// The kubelet rule every `NodeStatusUpdateFailing` rests on.
const NODE_STATUS_RULE: &str = "kubelet_node_status.go updateNodeStatus (5 tries every \
     nodeStatusUpdateFrequency, 10 s) and syncNodeStatus; the node lifecycle controller marks a \
     node whose status and lease are not renewed NotReady and taints it, and pods are evicted \
     once their node.kubernetes.io/unreachable toleration (300 s) runs out; the node lease \
     controller renews the kubelet's Lease in kube-node-lease every 10 s (5 tries, then \
     ensureLease with a backoff up to 7 s)";

/// Why the updates fail, from the errors; the most telling first (`Ord`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Why {
    /// The API answers `nodes "<name>" not found`: the Node object was deleted. The kubelet
    /// registers it only when it starts. (The informer's `node "<name>" not found`, singular,
    /// is a kubelet that has not registered yet: every start logs it once.)
    NodeDeleted,
    /// The client's certificate expired, or its credentials are refused.
    Credentials,
    /// The API server does not answer (refused, no route, timeouts).
    Unreachable,
    /// Anything else.
    Other,
}

fn why_of(err: &str) -> Why {
    if err.contains("nodes \"") && err.contains("\" not found") {
        Why::NodeDeleted
    } else if err.contains("certificate has expired")
        || err.contains("No valid client certificate")
        || err.contains("Unauthorized")
        || err.contains("system:anonymous")
        || err.contains("x509: certificate signed by unknown authority")
        // The NodeRestriction admission plugin: a kubeconfig copied from another node.
        || err.contains("can only access node lease with the same name")
    {
        Why::Credentials
    } else if [
        "connection refused",
        "no route to host",
        "i/o timeout",
        "Client.Timeout",
        "TLS handshake timeout",
        "context deadline exceeded",
        "connection reset by peer",
        "net/http: request canceled",
        "EOF",
    ]
    .iter()
    .any(|p| err.contains(p))
    {
        Why::Unreachable
    } else {
        Why::Other
    }
}

/// Whether the record is the node lease controller's (`Failed to update lease`, `Failed to
/// ensure lease exists`), not `updateNodeStatus`'s.
fn renews_lease(e: &LoggedEvent) -> bool {
    e.text.contains("to update lease") || e.text.contains("lease exists")
}

/// Whether the kubelet started (`"Kubelet version"`) less than [`UNREACHABLE`] before the
/// first of `failed`: the updates of a boot, which fail until the API server is up.
fn starting(logs: &Logs<'_>, failed: &[&LoggedEvent]) -> bool {
    let Some(first) = failed.iter().filter_map(|e| e.time).min() else {
        return false;
    };
    logs.of(&[EventKind::KubeletStarted]).any(|e| {
        e.time
            .is_some_and(|t| t <= first && first.duration_since(t) < UNREACHABLE)
    })
}

/// `kubelet_node_status.go` `registerWithAPIServer`, `updateNodeStatus` and `syncNodeStatus`:
/// `Unable to register node with API server`, `Error updating node status, will retry` (each
/// try), `Unable to update node status` (`update node status exceeds retry count`) still
/// failing where the log ends (no [`UPDATING_AGAIN`] of the log after the
/// last failure). The node controller marks the node NotReady and, five minutes on, evicts its
/// pods (they show Terminating or Unknown in the API while their containers run on here).
/// Critical when the Node object was deleted (`nodes "<name>" not found`, twice or with the
/// retries exhausted): the kubelet never registers it again while it runs, so the API's pod
/// GC deletes the node's pods while their containers run on. A warning when the kubelet's
/// credentials are refused (twice), or the API server stays out of reach or the updates fail
/// otherwise for [`UNREACHABLE`]; an info when they failed for [`NOT_READY`] or the retries ran
/// out, for less, and the kubelet did not start just before ([`starting`]).
pub(super) fn node_status_update_failing(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    // transport.go's `… but the server is not responsive` before the kubelet's certificate exit
    // (`… and the server is responsive, exiting.`): the API server answered after all, and the
    // exit is KubeletStartFailing's to say.
    let certificate_exit = logs
        .of(&[EventKind::KubeletExited])
        .filter(|e| super::kubelet_start::certificate_check(e))
        .filter_map(|e| e.time)
        .max();
    let failed: Vec<&LoggedEvent> = logs
        .of(&[EventKind::NodeStatusUpdateFailed])
        .filter(|e| {
            !(super::kubelet_start::certificate_check(e)
                && certificate_exit.is_some_and(|x| e.time.is_none_or(|t| t <= x)))
        })
        .collect();
    if failed.is_empty() || kubelet_goes_on_after(logs, &failed, UPDATING_AGAIN) {
        return;
    }
    // The cause: the most telling an error names, the latest error of it (`exceeds retry
    // count` names none).
    let errors: Vec<&LoggedEvent> = failed
        .iter()
        .copied()
        .filter(|e| {
            !e.text.contains("exceeds retry count") && !e.text.contains("attempts to update lease")
        })
        .collect();
    let cause = errors
        .iter()
        .rev()
        .map(|e| (e, why_of(&super::teardown::error_text(e))))
        .min_by_key(|(_, w)| *w);
    let why = cause.map_or(Why::Other, |(_, w)| w);
    let exhausted = failed.iter().any(|e| {
        e.text.contains("exceeds retry count") || e.text.contains("attempts to update lease")
    });
    let n = records(&failed);
    let no_certificate = cause.is_some_and(|(e, _)| super::kubelet_start::certificate_check(e));
    // Registration fails before the Node exists: no pod is scheduled to the node at all.
    let registering = failed.iter().all(|e| e.text.contains("register node"));
    let last = record_times(&failed).max();
    if registering
        && logs
            .of(&[EventKind::NodeRegistered])
            .any(|e| e.time.is_some_and(|t| last.is_none_or(|l| t >= l)))
    {
        return; // registered after all
    }
    // `updateNodeStatus` tries 5 times in a row and logs each failed try, then `exceeds retry
    // count`: attempts with fewer tries (records less than ONE_ATTEMPT apart are one; folded
    // repeats counted) and no such record went through on a retry. Failures that all did are
    // intermittent (a load balancer's backend refusing now and then), not a node going NotReady.
    // Read only of answers that come back at once (the API server's refusals, a refused
    // connection): a try that times out takes its 10 s, so one attempt's tries are not one
    // attempt's by their times.
    // And they are minutes apart: a kubelet refused on every update fails every 10 s, however
    // few of its tries an excerpt shows.
    let answered_at_once = match why {
        Why::Credentials | Why::NodeDeleted => true,
        // A refused connection comes back at once too; a timeout does not.
        Why::Unreachable => errors
            .iter()
            .all(|e| super::teardown::error_text(e).contains("connection refused")),
        Why::Other => false,
    };
    let recovered = answered_at_once
        && !exhausted
        && !registering
        && !no_certificate
        && records(&errors) < NODE_STATUS_UPDATE_RETRY * attempts(&errors)
        && longest_run(&errors, UPDATING_AGAIN) == SignedDuration::ZERO;
    if recovered {
        // Not at a kubelet's start either: a control plane's boot is refused until its static
        // API server is up.
        if attempts(&errors) < 2 || starting(logs, &failed) {
            return;
        }
        let error = cause.map_or_else(String::new, |(e, _)| super::teardown::error_quote(e));
        let mut f = finding(
            FindingKind::NodeStatusUpdateFailing,
            Severity::Info,
            format!(
                "the kubelet's updates of its Node's status fail now and then ({error}; {}{}), each \
                 going through on a retry: not NotReady, but the API server (or a load balancer's \
                 backend) refuses some of its requests or connections",
                plural(attempts(&errors), "attempt", "attempts"),
                over(&failed),
            ),
            NODE_STATUS_RULE,
            "which API server answers the kubelet: the load balancer's backends (each API \
             server's certificate and its --client-ca-file, its health); the kubelet's client \
             certificate (openssl x509 -enddate -noout -in \
             /var/lib/kubelet/pki/kubelet-client-current.pem)"
                .to_string(),
        );
        f.evidence = quote(&failed);
        out.push(f);
        return;
    }
    let severity = match why {
        Why::NodeDeleted if n >= 2 || exhausted => Severity::Critical,
        // The API server taking the kubelet for `system:anonymous`: it has no credentials, which
        // no retry mends.
        Why::Credentials
            if n >= 2 || errors.iter().any(|e| e.text.contains("system:anonymous")) =>
        {
            Severity::Warning
        }
        Why::Unreachable | Why::Other if span(&failed) >= UNREACHABLE => Severity::Warning,
        // Shorter, where the log ends: the node goes NotReady after 40 s if it lasts. Not at a
        // kubelet's start: a control plane's boot fails so until its static API server is up.
        Why::Unreachable | Why::Other
            if (exhausted || span(&failed) >= NOT_READY) && !starting(logs, &failed) =>
        {
            Severity::Info
        }
        // Registration failing where the log ends, however short, and no kubelet start just
        // before (a boot, whose registration fails until the API server is up): until it goes
        // through the Node does not exist. An info: the start may be before the excerpt.
        _ if registering && !starting(logs, &failed) => Severity::Info,
        _ => return,
    };
    let short = registering && severity == Severity::Info;
    let error = match cause {
        // transport.go's record is a message, no error: its words, not the whole line.
        _ if no_certificate => {
            "no valid client certificate, the API server not answering".to_string()
        }
        Some((e, _)) => super::teardown::error_quote(e),
        None => "update node status exceeds retry count".to_string(),
    };
    let (consequence, fix) = match why {
        // transport.go: the certificate expired or was removed, and the API server it would
        // bootstrap a new one from does not answer.
        Why::Credentials if no_certificate => (
            "the kubelet has no valid client certificate (expired or removed) and cannot get a new \
             one while the API server does not answer: the node goes NotReady and its pods are \
             evicted",
            "openssl x509 -enddate -noout -in /var/lib/kubelet/pki/kubelet-client-current.pem; \
             can this node reach the API server (curl -k https://<server>:6443/healthz)? Once it \
             does, approve the node's pending CSR (kubectl get csr; kubectl certificate approve \
             <csr>) and systemctl restart kubelet; a cluster down past its certificates' life \
             (OpenShift: a day) needs each node's CSRs approved",
        ),
        Why::NodeDeleted => (
            "the Node object was deleted and the kubelet registers it only when it starts: the \
             API's pod GC deletes this node's pods while their containers run on here",
            "systemctl restart kubelet (it registers the Node again); if the node was deleted on \
             purpose (drained, scaled in), stop the kubelet and the runtime so its containers stop \
             too",
        ),
        // NodeRestriction: the credentials are another node's (`User "system:node:<other>"`).
        Why::Credentials
            if errors.iter().any(|e| {
                e.text
                    .contains("can only access node lease with the same name")
            }) =>
        {
            (
                "the API server refuses the kubelet's credentials: they are another node's \
                 (NodeRestriction lets a node reach only its own Node and Lease), so the node \
                 goes NotReady and its pods are evicted",
                "the kubelet's kubeconfig was copied from another node: openssl x509 -subject \
                 -noout -in /var/lib/kubelet/pki/kubelet-client-current.pem (its CN is \
                 system:node:<the other node>); give this node its own: kubeadm reset and \
                 kubeadm join, or a kubeconfig made for it (kubeadm kubeconfig user --org \
                 system:nodes --client-name system:node:<this node>), and check that \
                 --hostname-override matches the name the certificate carries",
            )
        }
        Why::Credentials => (
            "the API server refuses the kubelet's credentials: the node goes NotReady and its pods \
             are evicted",
            "the kubelet's credentials in /etc/kubernetes/kubelet.conf: its client certificate \
             (openssl x509 -enddate -noout -in /var/lib/kubelet/pki/kubelet-client-current.pem); \
             system:anonymous means it presented none the API server trusts (the kubeconfig's \
             certificate paths, its CA, the bootstrap token); kubeadm certs check-expiration on a \
             control plane; rotateCertificates: true, or kubeadm join the node again",
        ),
        Why::Unreachable | Why::Other => (
            "the node controller marks the node NotReady after 40 s and evicts its pods after 5 \
             minutes, while their containers run on here",
            "can this node reach the API server? curl -k https://<server>:6443/healthz from the \
             node (the address is in /etc/kubernetes/kubelet.conf); the API server's and the load \
             balancer's health; a changed node IP or server address needs the kubeconfig and \
             certificates renewed",
        ),
    };
    let leases = failed.iter().filter(|e| renews_lease(e)).count();
    let (what, consequence) = if registering {
        (
            "register its Node with the API server",
            "the node is not part of the cluster, so no pod is scheduled to it",
        )
    } else if leases == failed.len() {
        ("renew its Node's lease", consequence)
    } else if leases > 0 {
        ("update its Node's status and renew its lease", consequence)
    } else {
        ("update its Node's status", consequence)
    };
    let mut f = finding(
        FindingKind::NodeStatusUpdateFailing,
        severity,
        format!(
            "the kubelet cannot {what} ({error}; {}{}{}), and nothing after shows it \
             succeeding: {consequence}{}",
            plural(n, "failure", "failures"),
            over(&failed),
            if exhausted {
                ", its retries exhausted"
            } else {
                ""
            },
            if short {
                "; a control plane node's kubelet fails so until its static API server is up: \
                 a warning if it lasts 5 minutes"
            } else {
                ""
            },
        ),
        NODE_STATUS_RULE,
        fix.to_string(),
    );
    f.evidence = quote(&failed);
    out.push(f);
}

/// The registry's runner.
pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    node_status_update_failing(input.logs, out);
}
