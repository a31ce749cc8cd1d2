# podcoroner image: build with the Rust toolchain, run on a slim Debian that has journalctl
# (reading the kubelet's and containerd's journal needs it; a distroless image has none).
#   docker build -t ghcr.io/podcoroner/podcoroner:0.1.0 .

FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# protos compile with protox: no protoc needed.
RUN cargo build --release --locked -p podcoroner && strip target/release/podcoroner

FROM debian:bookworm-slim
# journalctl (systemd's package), CA certificates for the API server; nothing else.
RUN apt-get update \
 && apt-get install -y --no-install-recommends systemd ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/podcoroner /usr/local/bin/podcoroner
# The CRI socket is root:root 0660 on containerd and CRI-O nodes, so the DaemonSet runs as uid 0
# with every capability dropped and a read-only root filesystem
# (deploy/base/daemonset.yaml). On a node whose socket has a group, run as that group instead.
USER 0
ENTRYPOINT ["/usr/local/bin/podcoroner"]
CMD ["daemon", "--config", "/etc/podcoroner/config.yaml"]
