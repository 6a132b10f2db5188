#!/usr/bin/env bash
# Make a private CA and certificates for a Dask cluster's scheduler, workers and client.
#
#   deploy/tls/make-certs.sh OUT_DIR [HOST ...]
#
# HOSTs (names or IP addresses, default: localhost 127.0.0.1) go into the
# certificates' subjectAltName; list every name the scheduler is reached by.
# OUT_DIR gets ca.pem (share it), ca-key.pem (keep it off the cluster: it signs new
# certificates), and for each role a certificate ROLE.pem and its key ROLE-key.pem.
# Existing files are never overwritten: pick a new OUT_DIR to rotate.
set -euo pipefail

[[ $# -ge 1 ]] || { echo "usage: $0 OUT_DIR [HOST ...]" >&2; exit 2; }
out=$1; shift
hosts=("$@"); [[ ${#hosts[@]} -gt 0 ]] || hosts=(localhost 127.0.0.1)
days=${ENSSTAB_CERT_DAYS:-365}
command -v openssl >/dev/null || { echo "$0: openssl is needed" >&2; exit 2; }
for f in ca ca-key scheduler scheduler-key worker worker-key client client-key; do
  if [[ -e $out/$f.pem ]]; then
    echo "$0: $out/$f.pem exists; not overwriting certificates (pick a new OUT_DIR)" >&2; exit 2
  fi
done
mkdir -p "$out"
umask 077  # private keys readable by their owner only

san=
for h in "${hosts[@]}"; do
  if [[ $h =~ ^[0-9.]+$ || $h == *:* ]]; then san+="IP:$h,"; else san+="DNS:$h,"; fi
done
san=${san%,}

openssl req -x509 -new -newkey rsa:3072 -nodes -days "$days" -subj "/CN=ensstab-dask-ca" \
  -keyout "$out/ca-key.pem" -out "$out/ca.pem" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null

for role in scheduler worker client; do
  openssl req -new -newkey rsa:3072 -nodes -subj "/CN=ensstab-dask-$role" \
    -keyout "$out/$role-key.pem" -out "$out/$role.csr" 2>/dev/null
  # Dask peers are both TLS clients and servers (workers accept connections too).
  printf '%s\n' "subjectAltName=$san" "basicConstraints=CA:FALSE" \
    "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth,clientAuth" > "$out/$role.ext"
  openssl x509 -req -in "$out/$role.csr" -CA "$out/ca.pem" -CAkey "$out/ca-key.pem" -CAcreateserial \
    -days "$days" -sha256 -extfile "$out/$role.ext" -out "$out/$role.pem" 2>/dev/null
  rm -f "$out/$role.csr" "$out/$role.ext"
done
rm -f "$out/ca.srl"
chmod 644 "$out"/ca.pem "$out"/scheduler.pem "$out"/worker.pem "$out"/client.pem
echo "certificates for ${hosts[*]} in $out"
