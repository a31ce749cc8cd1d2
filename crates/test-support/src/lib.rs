//! podcoroner-test-support: helpers for podcoroner's tests. Only ever a `[dev-dependencies]`
//! entry.
//!
//! [`ContainerdLab`] starts a private containerd (own root, state, socket, CNI network, pause
//! image built with gcc) and creates pod sandboxes and containers through CRI the way the
//! kubelet does, so the real runtime judges podcoroner's CRI code. It needs containerd, runc,
//! ctr, the CNI plugins and gcc, and root; without them [`ContainerdLab::start`] fails with an
//! error that says how to install them (`cargo xtask test` does it), so a lab test never passes
//! silently.
//!
//! This crate drives the runtime with the generated `podcoroner-cri-api` client directly, not
//! with `podcoroner-cri`, so that the client under test is not also the judge.

mod fault;
mod lab;
mod pause;
pub mod real_node;

pub use fault::{BrokenCni, CniFault, MISSING_CNI_PLUGIN};

pub use lab::{
    ANNOTATION_CONFIG_HASH, ANNOTATION_CONFIG_SEEN, ANNOTATION_CONFIG_SOURCE, ContainerdLab,
    LABEL_CONTAINER_NAME, LABEL_POD_NAME, LABEL_POD_NAMESPACE, LABEL_POD_UID, Lab, LabError,
    PodSpec, check_prerequisites,
};
pub use pause::{PAUSE_C, PauseImage, pause_image};
