# circom circuits compiled by circom2 and witnesses computed by snarkjs (npm), for the tests of
# registered circuits (PROVER_TEST_CIRCOM_DIR; see scripts/circom-fixtures.sh). Installs node
# and npm with apt when missing.
if ! command -v npm >/dev/null 2>&1; then
  echo "installing node and npm (apt)"
  (apt-get update -qq && apt-get install -y -qq nodejs npm) >/dev/null
fi
export PROVER_TEST_CIRCOM_DIR="$PROVER_TEST_TMP/circom"
bash scripts/circom-fixtures.sh "$PROVER_TEST_CIRCOM_DIR" 2>&1 | grep -v "npm warn Unknown user config"
