#!/bin/sh
# Gives the prover services an S3 identity of their own on MinIO, limited to one bucket (the
# chart runs this in a post-install/post-upgrade Job against the bundled MinIO; the tests run
# it against theirs). Idempotent: a rerun keeps the bucket, updates the policy and the user.
#
# Env: S3_ENDPOINT, ROOT_USER, ROOT_PASSWORD (MinIO's root credentials, used only here),
#      BUCKET, SERVICES_ACCESS_KEY, SERVICES_SECRET_KEY, and MC (the mc binary, default mc).
set -eu
MC="${MC:-mc}"
: "${S3_ENDPOINT:?}" "${ROOT_USER:?}" "${ROOT_PASSWORD:?}" "${BUCKET:?}" "${SERVICES_ACCESS_KEY:?}" "${SERVICES_SECRET_KEY:?}"
export MC_CONFIG_DIR="${MC_CONFIG_DIR:-$(mktemp -d)}"
policy="prover-services-$BUCKET"
i=0
until "$MC" alias set prover "$S3_ENDPOINT" "$ROOT_USER" "$ROOT_PASSWORD" >/dev/null 2>&1; do
  i=$((i + 1))
  [ "$i" -lt 60 ] || { echo "MinIO at $S3_ENDPOINT did not answer" >&2; exit 1; }
  sleep 2
done
"$MC" mb --ignore-existing "prover/$BUCKET" >/dev/null
# Objects of this bucket only: no other bucket, no bucket creation or deletion, no admin.
cat >"$MC_CONFIG_DIR/policy.json" <<JSON
{
  "Version": "2012-10-17",
  "Statement": [
    {"Effect": "Allow", "Action": ["s3:GetBucketLocation", "s3:ListBucket"], "Resource": ["arn:aws:s3:::$BUCKET"]},
    {"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"], "Resource": ["arn:aws:s3:::$BUCKET/*"]}
  ]
}
JSON
"$MC" admin policy create prover "$policy" "$MC_CONFIG_DIR/policy.json" >/dev/null
"$MC" admin user add prover "$SERVICES_ACCESS_KEY" "$SERVICES_SECRET_KEY" >/dev/null
# Attaching a policy the user already has is an error in mc; the state is what counts.
"$MC" admin policy attach prover "$policy" --user "$SERVICES_ACCESS_KEY" >/dev/null 2>&1 || true
"$MC" admin user info prover "$SERVICES_ACCESS_KEY" | grep -q "$policy" || { echo "policy $policy not attached to the services user" >&2; exit 1; }
echo "services user ready: objects of bucket $BUCKET only (policy $policy)"
