//! Batch verification across jobs (issue 14): the aggregator's bundle tasks of registered
//! circuits hand their proofs to the process's [`VerifyBatcher`], which verifies the proofs
//! under one verifying key that arrive within the batch window (`--batch-window-ms`) as one
//! batch: one random linear combination, one set of pairings, however many jobs they come from.
//! Each task then gets the verdict on its own proofs: a bad proof is located by bisection and
//! named to its own task only, so it fails its own job and no other; a batch is keyed by the
//! curve and the key's digest, so proofs are only ever checked under their own job's key.
//!
//! Measured (`cargo run -p platform --example batcher_bench`, BN254, 2 cores): 100 jobs' bundles
//! of 1 proof verified in 12 ms shared against 223 ms one batch per bundle (18×); 10 jobs of 4
//! proofs, 11 ms against 24 ms (2.2×, the 5 ms window included).
//!
//! The batch runs in a task of its own (not in any caller's), so a caller abandoned half-way
//! (deadline, lost lease) cannot strand the others; a caller that is gone simply misses its
//! verdict. A window of 0 verifies every call on its own.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ::pari::bundle::Bundle;
use ::pari::{PreparedVerifyingKey, Proof, VerifyingKey};
use ark_ec::pairing::Pairing;
use rand::SeedableRng;
use tokio::sync::oneshot;

use crate::error::corrupt;
use crate::kinds::pari::pari_err;
use crate::PlatformError;

/// Proofs in one batch at most: a batch that reaches it is verified at once and later arrivals
/// start the next one.
pub const MAX_BATCH_PROOFS: usize = 1 << 16;

type Items<E> = Vec<(Vec<<E as Pairing>::ScalarField>, Proof<E>)>;
type Verdict = Result<Vec<usize>, String>;

/// Proofs waiting for one batch under one key.
struct Pending<E: Pairing> {
    /// Which batch (a window's task takes only its own).
    id: u64,
    vk: VerifyingKey<E>,
    items: Items<E>,
    /// Each caller's share of `items` (start, length) and where its verdict goes.
    callers: Vec<(usize, usize, oneshot::Sender<Verdict>)>,
}

/// Batches so far, and the calls they served (for metrics and tests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchStats {
    pub batches: u64,
    pub calls: u64,
    /// The most calls one batch served.
    pub widest: u64,
}

type Key = (TypeId, Vec<u8>);
/// Open batches by (curve, key digest): `Pending<E>` behind `Any`.
type Open = Arc<Mutex<HashMap<Key, Box<dyn Any + Send>>>>;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Takes batch `id` under `key` out of `open`, if it is still there.
fn take<E: Pairing>(open: &Open, key: &Key, id: Option<u64>) -> Option<Pending<E>> {
    let mut open = lock(open);
    let mine = open.get(key).and_then(|b| b.downcast_ref::<Pending<E>>()).is_some_and(|p| id.is_none_or(|id| p.id == id));
    if !mine {
        return None;
    }
    open.remove(key).and_then(|b| b.downcast::<Pending<E>>().ok()).map(|b| *b)
}

pub struct VerifyBatcher {
    window: Duration,
    open: Open,
    next_id: std::sync::atomic::AtomicU64,
    stats: Arc<Mutex<BatchStats>>,
}

impl VerifyBatcher {
    pub fn new(window: Duration) -> Self {
        Self { window, open: Arc::default(), next_id: Default::default(), stats: Arc::default() }
    }

    pub fn stats(&self) -> BatchStats {
        *lock(&self.stats)
    }

    /// Verifies `items` under `vk`, with whatever other calls under the same key arrive within
    /// the window: the positions (in `items`) of the proofs that do not verify, empty if all do.
    pub async fn verify<E: Pairing>(&self, vk: VerifyingKey<E>, items: Items<E>) -> Result<Vec<usize>, PlatformError> {
        let (tx, rx) = oneshot::channel();
        let key: Key = (TypeId::of::<E>(), vk.digest().0.to_vec());
        let full = {
            let mut open = lock(&self.open);
            let fresh = !open.contains_key(&key);
            let id = self.next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let entry = open.entry(key.clone()).or_insert_with(|| Box::new(Pending::<E> { id, vk, items: Vec::new(), callers: Vec::new() }));
            let pending = entry.downcast_mut::<Pending<E>>().ok_or_else(|| corrupt("batcher: a batch of another curve under this key"))?;
            pending.callers.push((pending.items.len(), items.len(), tx));
            pending.items.extend(items);
            if fresh && !self.window.is_zero() {
                // The first call of a batch closes it after the window, in a task of its own.
                let (window, open, stats, key, id) = (self.window, self.open.clone(), self.stats.clone(), key.clone(), pending.id);
                tokio::spawn(async move {
                    tokio::time::sleep(window).await;
                    if let Some(p) = take::<E>(&open, &key, Some(id)) {
                        run(p, stats).await;
                    }
                });
            }
            self.window.is_zero() || pending.items.len() >= MAX_BATCH_PROOFS
        };
        if full {
            if let Some(p) = take::<E>(&self.open, &key, None) {
                tokio::spawn(run(p, self.stats.clone()));
            }
        }
        match rx.await {
            Ok(Ok(bad)) => Ok(bad),
            Ok(Err(e)) => Err(corrupt(format!("batch verification: {e}"))),
            Err(_) => Err(corrupt("batch verification: the batch ended without a verdict")),
        }
    }
}

/// Verifies one batch and hands each caller the verdict on its own proofs.
async fn run<E: Pairing>(p: Pending<E>, stats: Arc<Mutex<BatchStats>>) {
    let Pending { vk, items, callers, .. } = p;
    let calls = callers.len() as u64;
    let verdict = tokio::task::spawn_blocking(move || -> Result<Vec<usize>, String> {
        let pvk: PreparedVerifyingKey<E> = vk.prepare().map_err(|e| e.to_string())?;
        Bundle::new(&vk, items).locate_invalid(&pvk, &mut rand_chacha::ChaCha20Rng::from_entropy()).map_err(|e| pari_err(e).to_string())
    })
    .await
    .map_err(|e| e.to_string())
    .and_then(|r| r);
    {
        let mut s = stats.lock().unwrap_or_else(|p| p.into_inner());
        s.batches += 1;
        s.calls += calls;
        s.widest = s.widest.max(calls);
    }
    ::metrics::counter!("prover_verify_batches_total").increment(1);
    ::metrics::histogram!("prover_verify_batch_calls").record(calls as f64);
    for (start, len, tx) in callers {
        let mine = verdict.as_ref().map(|bad| bad.iter().filter(|i| (start..start + len).contains(i)).map(|i| i - start).collect()).map_err(Clone::clone);
        let _ = tx.send(mine);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::pari::circuits::CircuitFamily;
    use ark_bn254::{Bn254, Fr};
    use rand::SeedableRng;

    type Keys = (::pari::ProvingKey<Bn254>, VerifyingKey<Bn254>);

    fn keys(seed: u64) -> Keys {
        let family = CircuitFamily::Chain { steps: 8 };
        ::pari::setup::<Bn254, _, _>(family.blank::<Fr>(), &mut rand_chacha::ChaCha20Rng::seed_from_u64(seed)).unwrap()
    }

    fn proofs(pk: &::pari::ProvingKey<Bn254>, seeds: std::ops::Range<u64>) -> Items<Bn254> {
        let family = CircuitFamily::Chain { steps: 8 };
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seeds.start);
        seeds
            .map(|s| {
                let (c, x) = family.instance::<Fr>(s);
                (x, ::pari::prove(pk, c, &mut rng).unwrap())
            })
            .collect()
    }

    /// Three jobs' bundles under one key arriving within the window: one batch; the one with a
    /// tampered statement learns which of its proofs fail, at its own positions, and the other
    /// two get a clean verdict.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn bundles_under_one_key_share_a_batch_and_keep_their_own_verdicts() {
        let (pk, vk) = keys(1);
        let b = Arc::new(VerifyBatcher::new(Duration::from_millis(500)));
        let mut bad = proofs(&pk, 10..13);
        bad[1].0[0] += Fr::from(1u64);
        let (good, late) = (proofs(&pk, 0..4), proofs(&pk, 20..22));
        // Joined: the three calls join the batch on their first poll, one after the other,
        // whatever the machine's load (spawned tasks could start a window apart).
        let (v0, v1, v2) = tokio::join!(b.verify(vk.clone(), good), b.verify(vk.clone(), bad), b.verify(vk.clone(), late));
        let verdicts = vec![v0.unwrap(), v1.unwrap(), v2.unwrap()];
        assert_eq!(verdicts, vec![vec![], vec![1], vec![]]);
        assert_eq!(b.stats(), BatchStats { batches: 1, calls: 3, widest: 3 });
    }

    /// Bundles under different keys are never verified together: a proof made under key A and
    /// presented under key B fails, even when a batch of A's proofs is open at the same time.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn keys_are_never_mixed() {
        let ((pk_a, vk_a), (_, vk_b)) = (keys(1), keys(2));
        let b = Arc::new(VerifyBatcher::new(Duration::from_millis(300)));
        let (a, b2) = (b.clone(), b.clone());
        let (va, vb) = (vk_a.clone(), vk_b.clone());
        let under_a = tokio::spawn(async move { a.verify(va, proofs(&pk_a, 0..2)).await.unwrap() });
        let (pk_a2, _) = keys(1);
        let under_b = tokio::spawn(async move { b2.verify(vb, proofs(&pk_a2, 5..7)).await.unwrap() });
        assert_eq!(under_a.await.unwrap(), Vec::<usize>::new());
        assert_eq!(under_b.await.unwrap(), vec![0, 1], "A's proofs passed under B's key");
        assert_eq!(b.stats().batches, 2);
    }

    /// A window of zero verifies each call on its own; a call whose caller is gone does not
    /// strand the others in its batch.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_window_and_abandoned_callers() {
        let (pk, vk) = keys(3);
        let b = VerifyBatcher::new(Duration::ZERO);
        assert_eq!(b.verify(vk.clone(), proofs(&pk, 0..2)).await.unwrap(), Vec::<usize>::new());
        assert_eq!(b.verify(vk.clone(), proofs(&pk, 2..3)).await.unwrap(), Vec::<usize>::new());
        assert_eq!(b.stats(), BatchStats { batches: 2, calls: 2, widest: 1 });

        let b = VerifyBatcher::new(Duration::from_secs(2));
        let (first_items, second_items) = (proofs(&pk, 0..2), proofs(&pk, 4..6));
        {
            // Polled once, the first call opens the batch; then its caller is gone.
            let mut first = std::pin::pin!(b.verify(vk.clone(), first_items));
            tokio::select! {
                biased;
                _ = &mut first => panic!("the batch closed before its window"),
                _ = std::future::ready(()) => {}
            }
        }
        assert_eq!(b.verify(vk.clone(), second_items).await.unwrap(), Vec::<usize>::new());
        assert_eq!(b.stats(), BatchStats { batches: 1, calls: 2, widest: 2 });
    }
}
