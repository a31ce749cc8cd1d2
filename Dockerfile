# syntax=docker/dockerfile:1
# podcoroner's image: distroless (no shell, no package manager), its files from Debian 12 packages.
# The build stage runs the same code as `cargo xtask image` (crates/image), which builds the same
# tree without any Docker engine and packs it as an OCI archive:
#   docker build -t ghcr.io/podcoroner/podcoroner:0.1.0 .
#   cargo xtask image        # → target/image/podcoroner-0.1.0-amd64.oci.tar (docker/podman load, skopeo copy)
# The final stage's settings are checked against the OCI archive's by crates/image/tests/dockerfile.rs.

FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# Protos compile with protox (no protoc). `apt-get download` fetches the image's Debian packages:
# podcoroner_image::PACKAGES, journalctl and the libraries it and podcoroner link.
RUN apt-get update \
 && cargo xtask image --rootfs-dir /rootfs

FROM scratch
COPY --from=build /rootfs/ /
ENV PATH=/usr/local/bin:/usr/bin:/bin
# The CRI socket is root:root 0660 on containerd and CRI-O nodes, so the agent runs as uid 0 with
# every capability dropped and a read-only root filesystem (deploy/base/daemonset.yaml). Where the
# socket has a group, run as `nonroot` (65532) with that group: docs/install.md.
USER 0
EXPOSE 9657/tcp
STOPSIGNAL SIGTERM
LABEL org.opencontainers.image.title="podcoroner" \
      org.opencontainers.image.licenses="Apache-2.0"
ENTRYPOINT ["/usr/local/bin/podcoroner"]
CMD ["daemon", "--config", "/etc/podcoroner/config.yaml"]
