//! Generates the CRI RuntimeService client (and, with the `server` feature, server) code from
//! `proto/runtime/{v1,v1alpha2}/api.proto` with `protox`, so no system `protoc` is needed.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let proto_root = manifest_dir.join("../../proto");
    let files = ["runtime/v1/api.proto", "runtime/v1alpha2/api.proto"];
    for file in files {
        println!("cargo:rerun-if-changed={}", proto_root.join(file).display());
    }
    let server = std::env::var_os("CARGO_FEATURE_SERVER").is_some();

    let fds = protox::compile(files, [&proto_root])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(server)
        // Labels, annotations and the other maps keep a stable (sorted) order.
        .btree_map(".")
        .compile_fds(fds)?;
    Ok(())
}
