# syntax=docker/dockerfile:1.7
# Edge messaging gateway: a FROM-scratch image holding only the compiled binary (also on PATH as
# privitty-edged, the daemon, and privitty-edge, the CLI), the glibc libraries and loader it
# links against, a writable /tmp and the data directory (UID 1000).
#   docker build -t privitty/edge:latest .    (amd64 or arm64, from BuildKit's TARGETARCH)
#   docker run -d --name privitty-edged -e PRIVITTY_PROFILE=gateway01 -e PRIVITTY_LICENSE_URL=… \
#     -p 127.0.0.1:7200:7200 -v /etc/machine-id:/etc/machine-id:ro \
#     -v privitty-data:/var/lib/privitty privitty/edge:latest
#   (the host's machine id, read-only: the license and received files' keys bind to it, docs/identity.md)
#   compose: command: ["--listen", "0.0.0.0:7200", "--accounts", "/var/lib/privitty", "--cors"]
#   docker exec privitty-edged privitty-edge invite

FROM debian:bookworm-slim AS build
ARG TARGETARCH
ENV DENO_NO_UPDATE_CHECK=1 DENO_NO_PROMPT=1
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs npm ca-certificates curl \
 && rm -rf /var/lib/apt/lists/*
# Deno from npm, pinned to a version published for linux x64 and arm64.
RUN npm install -g deno@2.9.5 && deno --version
WORKDIR /src
COPY deno.json deno.lock ./
RUN deno install --frozen
COPY . .
# The build stage runs on the target platform, so the libraries copied below match the binary.
RUN set -eu; \
    case "$TARGETARCH" in \
      amd64) target=x86_64-unknown-linux-gnu ;; \
      arm64) target=aarch64-unknown-linux-gnu ;; \
      *) echo "unsupported TARGETARCH $TARGETARCH" >&2; exit 1 ;; \
    esac; \
    ./compile.sh --target "$target"; \
    mkdir -p /rootfs/tmp /rootfs/var/lib/privitty /rootfs/etc /rootfs/usr/local/bin; \
    cp "dist/edge-gateway-$target" /rootfs/edge-gateway; \
    for name in edge-gateway privitty-edged privitty-edge; do \
      ln -s /edge-gateway "/rootfs/usr/local/bin/$name"; \
    done; \
    ldd /rootfs/edge-gateway | grep -o '/[^ ]*' | sort -u | while read -r lib; do \
      mkdir -p "/rootfs$(dirname "$lib")"; cp -L "$lib" "/rootfs$lib"; \
    done; \
    chmod 1777 /rootfs/tmp; \
    chown 1000:1000 /rootfs/var/lib/privitty; chmod 0700 /rootfs/var/lib/privitty; \
    echo 'gateway:x:1000:1000:edge gateway:/tmp:/edge-gateway' > /rootfs/etc/passwd; \
    echo 'gateway:x:1000:' > /rootfs/etc/group

FROM scratch
COPY --from=build /rootfs/ /
# No EDGE_DATA_DIR here: /var/lib/privitty is the default, and an image-set EDGE_ variable would
# shadow the PRIVITTY_ twin a user sets.
ENV PATH=/usr/local/bin HOME=/tmp DENO_DIR=/tmp/deno TMPDIR=/tmp DENO_NO_UPDATE_CHECK=1
# All interfaces inside the container (docs/access.md; the daemon's own default is 127.0.0.1): the
# PRIVITTY_ twin, so a user's EDGE_HOST or PRIVITTY_HOST (or --host/--listen) still wins. Publish
# the port on the host's loopback (-p 127.0.0.1:7200:7200) unless API tokens are on.
ENV PRIVITTY_HOST=0.0.0.0
# The direct file path over QUIC (docs/p2p.md) on a fixed UDP port the run line can publish
# (-p 7200:7200/udp); the daemon's own default is an ephemeral port. PRIVITTY_ twin, as above.
ENV PRIVITTY_P2P_LISTEN=0.0.0.0:7200
# glibc maps allocations of 4 MiB and more on their own, always (scripts/start.sh says why).
ENV MALLOC_MMAP_THRESHOLD_=4194304
USER 1000:1000
EXPOSE 7200
EXPOSE 7200/udp
VOLUME ["/var/lib/privitty"]
HEALTHCHECK --start-period=90s --interval=30s --timeout=5s --retries=3 CMD ["/edge-gateway", "health"]
# A new named volume takes this directory's owner (1000); a root-owned one stops the start with
# the exact chown to run (the daemon cannot drop root privileges to chown it itself).
# The entry point serves when the command is empty or only daemon flags (compose's
# ["--listen", …, "--accounts", …]), and runs the CLI for a command word (`license status`).
ENTRYPOINT ["/edge-gateway"]
CMD ["serve"]
