//! What the calls that read and decode published proofs may take at once (N5 of the platform
//! review): `VerifyProof` (a Pari or circom job's bundles, up to 65,536 proofs with a pairing
//! check each, a Hekaton aggregate, a Reckle root or wrap) and `GetBundle` (up to 65,536 proofs
//! of 64 jobs decoded and merged into one message). They are the planner's only proof work;
//! unbounded, one tenant's concurrent calls took every core of the 1 GiB planner and held
//! every decoded bundle in memory at once. Two bounds:
//!
//! - **per tenant**: at most [`MAX_VERIFIES_PER_TENANT`] such calls in flight (of both RPCs
//!   together); the next is refused with RESOURCE_EXHAUSTED naming the limit (a tenant's burst
//!   cannot queue ahead of others);
//! - **in all**: the checks themselves run [`VerifyGate::cpu_slots`] at a time (one per core
//!   by default), the rest waiting in arrival order.
//!
//! A call holds its places until it answers or its client goes away. Pari's `VerifyProof`
//! checks one bundle (one file) at a time, so its memory is one bundle's, not the job's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::Status;

/// Most `VerifyProof` and `GetBundle` calls one tenant has in flight at once (together).
pub const MAX_VERIFIES_PER_TENANT: usize = 2;

/// The bounds of the calls that read published proofs (see the module doc); shared by a
/// service's calls.
pub struct VerifyGate {
    per_tenant: Mutex<HashMap<String, usize>>,
    max_per_tenant: usize,
    cpu: Arc<Semaphore>,
    cpu_slots: usize,
}

/// A call's places, given back when dropped.
pub struct VerifyPass {
    _tenant: Counted,
    _cpu: OwnedSemaphorePermit,
}

impl VerifyGate {
    /// [`MAX_VERIFIES_PER_TENANT`] per tenant, one check per core in all.
    pub fn new() -> Arc<Self> {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        Self::with_limits(MAX_VERIFIES_PER_TENANT, cores)
    }

    /// `per_tenant` calls in flight per tenant, `cpu_slots` checks at once (0: none runs until
    /// [`VerifyGate::open_cpu_slots`] adds some; tests hold calls in flight so).
    pub fn with_limits(per_tenant: usize, cpu_slots: usize) -> Arc<Self> {
        Arc::new(Self { per_tenant: Mutex::new(HashMap::new()), max_per_tenant: per_tenant, cpu: Arc::new(Semaphore::new(cpu_slots)), cpu_slots })
    }

    /// Checks that may run at once (as configured; [`VerifyGate::open_cpu_slots`] adds more).
    pub fn cpu_slots(&self) -> usize {
        self.cpu_slots
    }

    /// Adds `n` places for checks.
    pub fn open_cpu_slots(&self, n: usize) {
        self.cpu.add_permits(n);
    }

    /// Calls of `tenant` in flight now (waiting for a check's place or checking).
    pub fn in_flight(&self, tenant: &str) -> usize {
        self.per_tenant.lock().expect("verify gate").get(tenant).copied().unwrap_or(0)
    }

    /// A place for one of `tenant`'s calls (of `rpc`, named in a refusal): refused at once when
    /// the tenant has [`MAX_VERIFIES_PER_TENANT`] in flight, else waits for a check's place.
    pub async fn enter(self: &Arc<Self>, tenant: &str, rpc: &str) -> Result<VerifyPass, Status> {
        {
            let mut counts = self.per_tenant.lock().expect("verify gate");
            let n = counts.entry(tenant.to_string()).or_default();
            if *n >= self.max_per_tenant {
                let max = self.max_per_tenant;
                return Err(Status::resource_exhausted(format!(
                    "tenant limit reached: {rpc} refused: VerifyProof and GetBundle calls in flight at once (at most {max}): wait for one to answer"
                )));
            }
            *n += 1;
        }
        // Counted from here: a call dropped while it waits gives its tenant's place back.
        let counted = Counted { gate: self.clone(), tenant: tenant.to_string() };
        let cpu = self.cpu.clone().acquire_owned().await.map_err(|_| Status::unavailable("the service is stopping"))?;
        Ok(VerifyPass { _tenant: counted, _cpu: cpu })
    }

    fn leave(&self, tenant: &str) {
        let mut counts = self.per_tenant.lock().expect("verify gate");
        if let Some(n) = counts.get_mut(tenant) {
            *n -= 1;
            if *n == 0 {
                counts.remove(tenant);
            }
        }
    }
}

/// A tenant's place taken by a call, given back when dropped.
struct Counted {
    gate: Arc<VerifyGate>,
    tenant: String,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.gate.leave(&self.tenant);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With no check's place free, a tenant's calls wait holding their tenant's places; the
    /// next is refused naming the limit while another tenant's call still waits its turn; a
    /// call dropped while waiting gives its place back; opened places let the waiters through.
    #[tokio::test]
    async fn a_tenant_holds_at_most_its_places() {
        let gate = VerifyGate::with_limits(2, 0);
        let (g1, g2, g3) = (gate.clone(), gate.clone(), gate.clone());
        let a1 = tokio::spawn(async move { g1.enter("a", "VerifyProof").await.map(|_| ()) });
        let a2 = tokio::spawn(async move { g2.enter("a", "VerifyProof").await.map(|_| ()) });
        while gate.in_flight("a") < 2 {
            tokio::task::yield_now().await;
        }
        let e = gate.enter("a", "VerifyProof").await.err().expect("a third call of a's is refused");
        assert_eq!(e.code(), tonic::Code::ResourceExhausted);
        assert!(e.message().contains("VerifyProof") && e.message().contains("at most 2"), "{e:?}");
        let b = tokio::spawn(async move { g3.enter("b", "GetBundle").await.map(|_| ()) });
        while gate.in_flight("b") < 1 {
            tokio::task::yield_now().await;
        }
        a1.abort();
        assert!(a1.await.unwrap_err().is_cancelled());
        while gate.in_flight("a") > 1 {
            tokio::task::yield_now().await;
        }
        gate.open_cpu_slots(1);
        a2.await.unwrap().unwrap();
        b.await.unwrap().unwrap();
        assert_eq!((gate.in_flight("a"), gate.in_flight("b")), (0, 0));
        let pass = gate.enter("a", "VerifyProof").await.unwrap();
        drop(pass);
        assert_eq!(gate.in_flight("a"), 0);
    }
}
