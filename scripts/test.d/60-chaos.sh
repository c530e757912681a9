# The chaos suite's short form (scripts/chaos.sh --short): a multi-process cluster with its own
# Redis (AOF) and MinIO, 8 mixed jobs, 10 worker SIGKILLs, a Redis SIGKILL and restart, a 15 s
# S3 outage; fails if a job is lost, a published proof does not verify offline or an output is
# duplicated. Uses the `prover` binary the cargo step built.
bash scripts/chaos.sh --short
