#!/usr/bin/env bash
# A real Kubernetes control plane on 127.0.0.1 for the scheduler extender's tests (issue 22):
# kube-apiserver, kube-scheduler and kubelet 1.20.2 built from Debian 12's `kubernetes` source
# package with Debian's Go 1.19, and Debian's etcd. Nothing here is part of the product.
#
#   scripts/k8s-control-plane.sh build             download and build once; prints the bin dir
#   scripts/k8s-control-plane.sh source            download the source tarball only; prints it
#   scripts/k8s-control-plane.sh proto FILE        extract kubelet's device-plugin API
#                                                   (deviceplugin/v1beta1/api.proto) to FILE
#   scripts/k8s-control-plane.sh bin               the bin dir if built (exit 1 if not)
#   scripts/k8s-control-plane.sh start DIR [SCHEDULER_CONFIG]
#                                                   etcd + kube-apiserver (+ kube-scheduler with
#                                                   the given KubeSchedulerConfiguration) with
#                                                   state, logs, PIDs and a kubeconfig in DIR
#   scripts/k8s-control-plane.sh stop DIR          stops what `start` started, by its PIDs
#
# The binaries are cached outside the repository in $SEEDANCE_K8S_CACHE (default
# ~/.cache/seedance/k8s-1.20.2). Building needs golang-1.19-go and rsync (apt); it took about 12
# minutes on 2 cores here, with other builds running. On Debian 13 the bookworm source comes from the same private apt
# list this script writes (it never touches the system's sources).
set -euo pipefail

VERSION="1.20.2"
CACHE="${SEEDANCE_K8S_CACHE:-$HOME/.cache/seedance/k8s-$VERSION}"
BIN="$CACHE/bin"

die() { echo "k8s-control-plane: $*" >&2; exit 1; }

# Downloads Debian's source package once (into $CACHE/src) and prints the upstream tarball.
source_tarball() {
  local tarball
  tarball=$(ls "$CACHE"/src/kubernetes_*really${VERSION}.orig.tar.gz 2>/dev/null | head -1 || true)
  if [[ -f "$tarball" ]]; then echo "$tarball"; return; fi
  mkdir -p "$CACHE/apt/lists/partial" "$CACHE/src"
  # A private apt list with bookworm's sources, so the system's configuration stays as it is.
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
       "http://deb.debian.org/debian bookworm main" >"$CACHE/apt/sources.list"
  local apt=(apt-get -q -o "Dir::Etc::SourceList=$CACHE/apt/sources.list"
             -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$CACHE/apt/lists")
  "${apt[@]}" update >&2
  (cd "$CACHE/src" && "${apt[@]}" source --download-only kubernetes >&2)
  tarball=$(ls "$CACHE"/src/kubernetes_*really${VERSION}.orig.tar.gz | head -1)
  [[ -f "$tarball" ]] || die "no kubernetes $VERSION source tarball in $CACHE/src"
  echo "$tarball"
}

# kubelet's device-plugin API as kubelet 1.20.2 compiles it, for the kubelet stand-in.
extract_proto() {
  local out="$1" tarball member
  tarball=$(source_tarball)
  member=$(tar -tzf "$tarball" | grep 'staging/src/k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/api.proto$' | head -1)
  [[ -n "$member" ]] || die "no deviceplugin/v1beta1/api.proto in $tarball"
  tar -xzOf "$tarball" "$member" >"$out.tmp" && mv "$out.tmp" "$out"
}

build() {
  if [[ -x "$BIN/kube-apiserver" && -x "$BIN/kube-scheduler" && -x "$BIN/kubelet" ]]; then
    echo "$BIN"; return
  fi
  [[ -x /usr/lib/go-1.19/bin/go ]] || die "needs golang-1.19-go (apt-get install golang-1.19-go)"
  command -v rsync >/dev/null || die "needs rsync (apt-get install rsync)"
  local tarball
  tarball=$(source_tarball)
  local gopath="$CACHE/gopath"
  rm -rf "$gopath" && mkdir -p "$gopath/src/k8s.io"
  tar -xzf "$tarball" -C "$CACHE/src"
  local tree
  tree=$(find "$CACHE/src" -maxdepth 1 -mindepth 1 -type d -name 'kubernetes*' | head -1)
  ln -s "$tree" "$gopath/src/k8s.io/kubernetes"
  (cd "$gopath/src/k8s.io/kubernetes" &&
     PATH="/usr/lib/go-1.19/bin:$PATH" GOPATH="$gopath" GO111MODULE=off GOFLAGS=-mod=vendor \
     KUBE_GIT_VERSION="v$VERSION" KUBE_GIT_TREE_STATE=clean \
     make WHAT="cmd/kube-apiserver cmd/kube-scheduler cmd/kubelet" >&2)
  mkdir -p "$BIN"
  cp "$tree/_output/bin/kube-apiserver" "$tree/_output/bin/kube-scheduler" "$tree/_output/bin/kubelet" "$BIN/"
  rm -rf "$tree" "$gopath"  # the built tree is large; the binaries are what is kept
  echo "$BIN"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  local dir="$1" config="${2:-}"
  [[ -x "$BIN/kube-apiserver" ]] || die "not built: run '$0 build' first"
  command -v etcd >/dev/null || die "needs etcd (apt-get install etcd-server)"
  mkdir -p "$dir"
  local etcd_port peer_port api_port
  etcd_port=$(free_port); peer_port=$(free_port); api_port=$(free_port)
  etcd --data-dir "$dir/etcd" --listen-client-urls "http://127.0.0.1:$etcd_port" \
       --advertise-client-urls "http://127.0.0.1:$etcd_port" \
       --listen-peer-urls "http://127.0.0.1:$peer_port" \
       --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
       --initial-cluster "default=http://127.0.0.1:$peer_port" >"$dir/etcd.log" 2>&1 &
  echo $! >"$dir/etcd.pid"
  # TLS with a CA of our own, a static bearer token, and a service-account key: the API
  # server requires the issuer flags even with the ServiceAccount admission plugin off (there
  # is no controller manager to mint tokens). 1.20 serves only its secure port.
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=seedance-test-ca" \
      -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$dir/apiserver.key" \
      -out "$dir/apiserver.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$dir/san.ext"
  openssl x509 -req -in "$dir/apiserver.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
      -CAcreateserial -days 2 -extfile "$dir/san.ext" -out "$dir/apiserver.crt" 2>/dev/null
  openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
  local token
  token=$(openssl rand -hex 16)
  echo "$token,seedance-test,seedance-test,system:masters" >"$dir/tokens.csv"
  "$BIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
      --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
      --tls-cert-file "$dir/apiserver.crt" --tls-private-key-file "$dir/apiserver.key" \
      --token-auth-file "$dir/tokens.csv" --anonymous-auth=false \
      --service-account-issuer https://kubernetes.default.svc \
      --service-account-key-file "$dir/sa.key" --service-account-signing-key-file "$dir/sa.key" \
      --api-audiences https://kubernetes.default.svc \
      --disable-admission-plugins ServiceAccount --authorization-mode AlwaysAllow \
      --service-cluster-ip-range 10.0.0.0/24 --cert-dir "$dir/certs" >"$dir/apiserver.log" 2>&1 &
  echo $! >"$dir/apiserver.pid"
  local i
  for ((i = 0; i < 600; i++)); do
    curl -sf --cacert "$dir/ca.crt" -H "Authorization: Bearer $token" \
        "https://127.0.0.1:$api_port/readyz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  ((i < 600)) || { tail -20 "$dir/apiserver.log" >&2; die "kube-apiserver did not come up"; }
  cat >"$dir/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: "https://127.0.0.1:$api_port"
    certificate-authority: "$dir/ca.crt"
contexts:
- name: local
  context: {cluster: local, user: local}
current-context: local
users:
- name: local
  user: {token: "$token"}
KUBECONFIG
  echo "https://127.0.0.1:$api_port" >"$dir/server"
  if [[ -n "$config" ]]; then
    "$BIN/kube-scheduler" --config "$config" --kubeconfig "$dir/kubeconfig" \
        --bind-address 127.0.0.1 --secure-port 0 --port 0 >"$dir/scheduler.log" 2>&1 &
    echo $! >"$dir/scheduler.pid"
  fi
  echo "https://127.0.0.1:$api_port"
}

stop() {
  local dir="$1" name
  for name in scheduler apiserver etcd; do
    if [[ -f "$dir/$name.pid" ]]; then
      kill "$(cat "$dir/$name.pid")" 2>/dev/null || true
      rm -f "$dir/$name.pid"
    fi
  done
}

case "${1:-}" in
  build) build ;;
  source) source_tarball ;;
  proto) [[ $# -ge 2 ]] || die "usage: $0 proto FILE"; extract_proto "$2" ;;
  bin) [[ -x "$BIN/kube-apiserver" ]] && echo "$BIN" || exit 1 ;;
  start) [[ $# -ge 2 ]] || die "usage: $0 start DIR [SCHEDULER_CONFIG]"; start "$2" "${3:-}" ;;
  stop) [[ $# -ge 2 ]] || die "usage: $0 stop DIR"; stop "$2" ;;
  *) die "usage: $0 build | source | proto FILE | bin | start DIR [SCHEDULER_CONFIG] | stop DIR" ;;
esac
