//! The batch structure `Λ_I` (Fig. 1, Fig. 3, §3.4): aggregate a batch into a root proof,
//! verify it against `(C, {(i, a_i)}_{i∈I})`, and update it in `O(ℓ)` node proofs.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use crate::circuits::{Circuits, RootKey};
use crate::hash::{canonical_digest, limbs, Digest};
use crate::node::{prove_bucket, prove_node, Child, NodeId, NodeProof};
use crate::tree::Tree;
use crate::{Error, Params};

/// Every node that needs a proof for batch `I`: the nodes of `T'_I` at levels `q ..= ℓ`,
/// children before parents (level ascending, then index).
pub fn plan_batch(params: Params, batch: &[u64]) -> Result<Vec<NodeId>, Error> {
    params.check()?;
    let set = check_batch(params, batch)?;
    Ok(plan_set(params, &set).into_iter().collect())
}

fn check_batch(params: Params, batch: &[u64]) -> Result<BTreeSet<u64>, Error> {
    if batch.is_empty() {
        return Err(Error::input("batch: must contain at least one index"));
    }
    let mut set = BTreeSet::new();
    for &i in batch {
        if i >= params.num_leaves() {
            return Err(Error::input(format!(
                "batch: index {i} is outside the tree of {} leaves",
                params.num_leaves()
            )));
        }
        if !set.insert(i) {
            return Err(Error::input(format!("batch: index {i} appears twice")));
        }
    }
    Ok(set)
}

/// Positions within bucket `bucket` (`0 .. 2^q`) of the batch indices that fall in it: the
/// `selected` argument of [`prove_bucket`].
pub fn selected_in_bucket<'a>(params: Params, batch: impl IntoIterator<Item = &'a u64>, bucket: u64) -> Vec<u64> {
    let start = bucket << params.log_bucket;
    let end = start + params.bucket_size();
    let mut out: Vec<u64> = batch.into_iter().filter(|&&i| i >= start && i < end).map(|i| i - start).collect();
    out.sort_unstable();
    out
}

/// Merkle hashes `C_v` of nodes at levels `≥ q`, from wherever they are kept: the full
/// [`Tree`], or only the nodes a step needs ([`hashes_needed`]) read from the stored pieces
/// ([`crate::stored`]).
pub trait NodeHashes {
    fn node_hash(&self, id: NodeId) -> Result<Digest, Error>;
}

impl<T: NodeHashes + ?Sized> NodeHashes for &T {
    fn node_hash(&self, id: NodeId) -> Result<Digest, Error> {
        (**self).node_hash(id)
    }
}

impl<T: NodeHashes + ?Sized> NodeHashes for std::sync::Arc<T> {
    fn node_hash(&self, id: NodeId) -> Result<Digest, Error> {
        (**self).node_hash(id)
    }
}

impl NodeHashes for Tree {
    fn node_hash(&self, id: NodeId) -> Result<Digest, Error> {
        self.hash(id.level, id.index)
    }
}

impl NodeHashes for BTreeMap<NodeId, Digest> {
    fn node_hash(&self, id: NodeId) -> Result<Digest, Error> {
        self.get(&id).copied().ok_or_else(|| Error::input(format!("no hash of node {id} given")))
    }
}

/// The nodes whose hashes [`BatchProof::from_node_proofs`] reads for `batch`: `T'_I` and the
/// siblings of its nodes below the root.
pub fn hashes_needed(params: Params, batch: &[u64]) -> Result<BTreeSet<NodeId>, Error> {
    let plan = plan_set(params, &check_batch(params, batch)?);
    let siblings: Vec<NodeId> = plan.iter().filter(|id| id.level < params.log_n).map(|id| id.sibling()).collect();
    Ok(plan.into_iter().chain(siblings).collect())
}

fn plan_set(params: Params, batch: &BTreeSet<u64>) -> BTreeSet<NodeId> {
    let mut nodes = BTreeSet::new();
    for &i in batch {
        for level in params.log_bucket..=params.log_n {
            nodes.insert(NodeId::new(level, i >> level));
        }
    }
    nodes
}

/// What a verifier is given: the commitment `C`, the batch leaves, and the claimed canonical
/// digest and map/reduce results (sum and count of the batch values).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Statement {
    pub version: u32,
    pub log_n: u32,
    pub log_bucket: u32,
    /// `C`, 64 hex digits.
    pub root: String,
    /// `d = d(root, I)`, 64 hex digits.
    pub digest: String,
    /// The batch `I` with the values, sorted by index.
    pub batch: Vec<BatchLeaf>,
    /// Σ of the batch values (decimal; exact, up to 94 bits).
    pub sum: String,
    pub count: u64,
    /// Digest of the root circuit's key the proof was made with (hex).
    pub root_circuit_digest: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BatchLeaf {
    pub index: u64,
    pub value: u64,
}

impl Statement {
    /// Builds the statement for `batch` of `tree`, computing `d` natively.
    pub fn new(circuits: &Circuits, root: Digest, batch: &[(u64, u64)]) -> Result<Self, Error> {
        let params = circuits.params();
        let d = canonical_digest(params.log_n, batch)?;
        let mut leaves: Vec<BatchLeaf> = batch.iter().map(|&(index, value)| BatchLeaf { index, value }).collect();
        leaves.sort_by_key(|l| l.index);
        let sum: u128 = batch.iter().map(|&(_, v)| v as u128).sum();
        Ok(Self {
            version: 1,
            log_n: params.log_n,
            log_bucket: params.log_bucket,
            root: root.to_hex(),
            digest: d.to_hex(),
            batch: leaves,
            sum: sum.to_string(),
            count: batch.len() as u64,
            root_circuit_digest: circuits.root_circuit_digest(),
        })
    }

    pub fn params(&self) -> Result<Params, Error> {
        Params::new(self.log_n, self.log_bucket)
    }

    /// `Ver_pp(C, (a_i)_{i∈I}, π_I)` of Fig. 3 with `C` **taken from the statement itself**.
    ///
    /// This only shows that *some* tree with root `self.root` holds these leaves, which anyone
    /// can make true by committing to them; a verifier that knows which commitment it cares
    /// about must use [`Statement::verify_for`].
    pub fn verify(&self, circuits: &Circuits, root_proof: &NodeProof) -> Result<(), Error> {
        self.verify_with_key(circuits.root_key(), root_proof)
    }

    /// [`Statement::verify`] with only the root key (again against the statement's own `C`).
    pub fn verify_with_key(&self, key: &RootKey, root_proof: &NodeProof) -> Result<(), Error> {
        let root = Digest::from_hex(&self.root).map_err(|e| Error::input(format!("statement: root: {e}")))?;
        self.verify_for(&root, key, root_proof)
    }

    /// `Ver_pp(expected_c, (a_i)_{i∈I}, π_I)` of Fig. 3, plus the Reckle+ results: the statement
    /// must be about the commitment `expected_c` the verifier already holds; `d`, the sum and
    /// the count are recomputed from the batch leaves and must be exactly what the statement
    /// claims; and the root proof must verify under `key` with those public values and with
    /// `idx = 0` (it is the proof of the root's position).
    pub fn verify_for(&self, expected_c: &Digest, key: &RootKey, root_proof: &NodeProof) -> Result<(), Error> {
        let claims = self.check_claims()?;
        if claims.root != *expected_c {
            return Err(Error::Verification(format!(
                "statement is about C = {}, not the expected C = {expected_c}",
                claims.root
            )));
        }
        let params = claims.params;
        if params != key.params() {
            return Err(Error::input("statement: log_n/log_bucket differ from the root key's"));
        }
        if self.root_circuit_digest != key.circuit_digest() {
            return Err(Error::Verification(
                "statement: root circuit digest differs from the key derived for (log_n, log_bucket)".into(),
            ));
        }
        if root_proof.id != NodeId::new(params.log_n, 0) {
            return Err(Error::Verification(format!("proof is for node {}, not the root", root_proof.id)));
        }
        let pv = root_proof.public_values();
        if pv.c != *expected_c {
            return Err(Error::Verification("proof is for another commitment C".into()));
        }
        if pv.d != claims.d {
            return Err(Error::Verification("proof is for another batch (canonical digest differs)".into()));
        }
        if (pv.sum_lo, pv.sum_hi, pv.count) != claims.out {
            return Err(Error::Verification("proof's sum/count differ from the batch's".into()));
        }
        if pv.index != 0 {
            return Err(Error::Verification(format!("proof is for position {} of the root level, not 0", pv.index)));
        }
        key.data
            .verify(root_proof.proof.clone())
            .map_err(|e| Error::Verification(format!("root proof does not verify: {e}")))
    }

    /// Everything a verifier can check before it holds a key or builds any circuit, cheaply:
    /// the parameters are supported, the statement's claims (`d`, sum, count) follow from its
    /// leaves, its `C` is `expected_c` (when given), its root-circuit digest is the pinned one
    /// for `(ℓ, q)` (when pinned), and `proof_bytes` start with the header of a root proof of
    /// a plausible size. Returns the parameters, to derive or load the key with.
    pub fn precheck(&self, expected_c: Option<&Digest>, proof_bytes: &[u8]) -> Result<Params, Error> {
        let claims = self.check_claims()?;
        if let Some(c) = expected_c {
            if claims.root != *c {
                return Err(Error::Verification(format!(
                    "statement is about C = {}, not the expected C = {c}",
                    claims.root
                )));
            }
        }
        let params = claims.params;
        if let Some(pin) = crate::circuits::pinned_root_key(params) {
            if self.root_circuit_digest != pin.circuit_digest {
                return Err(Error::Verification(format!(
                    "statement: root circuit digest {} is not the pinned digest for log_n = {}, log_bucket = {}",
                    self.root_circuit_digest, params.log_n, params.log_bucket
                )));
            }
        }
        let id = crate::codec::peek_node_id(proof_bytes)?;
        if id != NodeId::new(params.log_n, 0) {
            return Err(Error::Verification(format!("proof is for node {id}, not the root of a tree with log_n = {}", params.log_n)));
        }
        Ok(params)
    }

    /// The statement's claims, checked against its own leaves (no key needed).
    fn check_claims(&self) -> Result<Claims, Error> {
        if self.version != 1 {
            return Err(Error::input(format!("statement: unsupported version {}", self.version)));
        }
        let params = self.params().map_err(|e| Error::input(format!("statement: {e}")))?;
        if self.batch.is_empty() {
            return Err(Error::input("statement: batch is empty"));
        }
        if self.batch.len() as u64 > params.num_leaves() {
            return Err(Error::input("statement: batch is larger than the tree"));
        }
        let root = Digest::from_hex(&self.root).map_err(|e| Error::input(format!("statement: root: {e}")))?;
        let claimed_d = Digest::from_hex(&self.digest).map_err(|e| Error::input(format!("statement: digest: {e}")))?;
        let pairs: Vec<(u64, u64)> = self.batch.iter().map(|l| (l.index, l.value)).collect();
        let d = canonical_digest(params.log_n, &pairs).map_err(|e| Error::input(format!("statement: batch: {e}")))?;
        if claimed_d != d {
            return Err(Error::Verification(
                "statement: digest is not the canonical digest of the batch leaves".into(),
            ));
        }
        // At most 2^24 leaves of 32-bit limbs: the sums fit a u64.
        let (mut sum_lo, mut sum_hi) = (0u64, 0u64);
        for &(_, v) in &pairs {
            let (lo, hi) = limbs(v);
            sum_lo += lo;
            sum_hi += hi;
        }
        let sum = ((sum_hi as u128) << 32) + sum_lo as u128;
        if self.sum != sum.to_string() {
            return Err(Error::Verification(format!(
                "statement: sum {} is not the sum of the batch values ({sum})",
                self.sum
            )));
        }
        if self.count != pairs.len() as u64 {
            return Err(Error::Verification("statement: count is not the batch size".into()));
        }
        Ok(Claims { params, root, d, out: (sum_lo, sum_hi, pairs.len() as u64) })
    }
}

/// A statement's claims after [`Statement::check_claims`].
struct Claims {
    params: Params,
    root: Digest,
    d: Digest,
    /// `(Σlo, Σhi, count)`.
    out: (u64, u64, u64),
}

/// One change applied by [`BatchProof::update`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// `a_index := value` (inside or outside the batch).
    Set { index: u64, value: u64 },
    /// Add `index` to the batch.
    Add(u64),
    /// Remove `index` from the batch.
    Remove(u64),
}

impl Change {
    /// The leaf index the change is about.
    pub fn index(&self) -> u64 {
        match *self {
            Change::Set { index, .. } | Change::Add(index) | Change::Remove(index) => index,
        }
    }
}

/// What an update will do, computed without proving anything (for planners).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpdatePlan {
    /// The batch after the update, ascending.
    pub batch: Vec<u64>,
    /// Nodes to re-prove, children before parents: every node of the new `T'_I` on the path
    /// from a changed leaf to the root (its bucket and `ℓ − q` ancestors at most).
    pub reprove: Vec<NodeId>,
    /// Nodes of the old `T'_I` that leave the structure.
    pub dropped: Vec<NodeId>,
}

/// Validates `changes` against the batch `old_batch` and plans the update (§3.4). Pure.
pub fn plan_update(params: Params, old_batch: &[u64], changes: &[Change]) -> Result<UpdatePlan, Error> {
    params.check()?;
    let old = check_batch(params, old_batch)?;
    if changes.is_empty() {
        return Err(Error::input("update: no changes given"));
    }
    let mut batch = old.clone();
    for c in changes {
        let index = c.index();
        if index >= params.num_leaves() {
            return Err(Error::input(format!(
                "update: index {index} is outside the tree of {} leaves",
                params.num_leaves()
            )));
        }
        match *c {
            Change::Add(i) if !batch.insert(i) => {
                return Err(Error::input(format!("update: index {i} is already in the batch")))
            }
            Change::Remove(i) if !batch.remove(&i) => {
                return Err(Error::input(format!("update: index {i} is not in the batch")))
            }
            _ => {}
        }
    }
    if batch.is_empty() {
        return Err(Error::input("update: the batch would become empty"));
    }
    let old_nodes = plan_set(params, &old);
    let new_nodes = plan_set(params, &batch);
    let dropped = old_nodes.difference(&new_nodes).copied().collect();
    let mut reprove = BTreeSet::new();
    for c in changes {
        for level in params.log_bucket..=params.log_n {
            let id = NodeId::new(level, c.index() >> level);
            if new_nodes.contains(&id) {
                reprove.insert(id);
            }
        }
    }
    Ok(UpdatePlan { batch: batch.into_iter().collect(), reprove: reprove.into_iter().collect(), dropped })
}

/// What an update did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UpdateReport {
    /// Nodes re-proved, children before parents.
    pub reproved: Vec<NodeId>,
    /// Nodes dropped from `Λ_I` (no batch leaf below them any more).
    pub dropped: Vec<NodeId>,
}

/// `Λ_I`: for every node of `T'_I` at level `≥ q` its proof (which carries `C_v`, `d_v`,
/// `out_v`), and the Merkle hash of every sibling of such a node that has no batch leaf.
#[derive(Clone, Debug)]
pub struct BatchProof {
    pub(crate) params: Params,
    pub(crate) batch: BTreeSet<u64>,
    pub(crate) nodes: BTreeMap<NodeId, NodeProof>,
    pub(crate) siblings: BTreeMap<NodeId, Digest>,
}

impl BatchProof {
    /// `Agg_pp`: proves every node of `T'_I` level by level (nodes of a level in parallel).
    pub fn aggregate(circuits: &Circuits, tree: &Tree, batch: &[u64]) -> Result<Self, Error> {
        Self::aggregate_with_progress(circuits, tree, batch, |_| {})
    }

    /// Like [`BatchProof::aggregate`], calling `progress(node)` after each node is proved.
    pub fn aggregate_with_progress(
        circuits: &Circuits,
        tree: &Tree,
        batch: &[u64],
        progress: impl Fn(NodeId) + Sync,
    ) -> Result<Self, Error> {
        let params = circuits.params();
        if tree.params() != params {
            return Err(Error::input("tree and circuits have different parameters"));
        }
        let batch = check_batch(params, batch)?;
        let mut this = Self { params, batch, nodes: BTreeMap::new(), siblings: BTreeMap::new() };
        let plan = plan_set(params, &this.batch);
        this.prove_nodes(circuits, tree, plan.into_iter().collect(), progress)?;
        Ok(this)
    }

    /// Assembles `Λ_I` from node proofs made elsewhere (by workers): they must be exactly the
    /// nodes of `T'_I` for `batch`, each must verify and carry `tree`'s Merkle hash.
    pub fn from_node_proofs(circuits: &Circuits, tree: &impl NodeHashes, batch: &[u64], proofs: Vec<NodeProof>) -> Result<Self, Error> {
        let params = circuits.params();
        let batch = check_batch(params, batch)?;
        let plan = plan_set(params, &batch);
        let mut nodes = BTreeMap::new();
        for p in proofs {
            if !plan.contains(&p.id) {
                return Err(Error::input(format!("node {} is not in T'_I of the batch", p.id)));
            }
            nodes.insert(p.id, p);
        }
        if nodes.len() != plan.len() {
            return Err(Error::input(format!("{} of {} node proofs given", nodes.len(), plan.len())));
        }
        let mut this = Self { params, batch, nodes, siblings: BTreeMap::new() };
        this.refresh_siblings(tree)?;
        this.check_against(circuits, tree)?;
        Ok(this)
    }

    /// Proves `ids` (sorted by level) using `tree` for sibling hashes, storing proofs and
    /// refreshing the sibling hashes of the structure.
    fn prove_nodes(
        &mut self,
        circuits: &Circuits,
        tree: &Tree,
        ids: Vec<NodeId>,
        progress: impl Fn(NodeId) + Sync,
    ) -> Result<(), Error> {
        let q = self.params.log_bucket;
        let mut by_level: BTreeMap<u32, Vec<NodeId>> = BTreeMap::new();
        for id in ids {
            by_level.entry(id.level).or_default().push(id);
        }
        for (level, ids) in by_level {
            let proved: Vec<NodeProof> = ids
                .par_iter()
                .map(|&id| {
                    let p = if level == q {
                        let selected = selected_in_bucket(self.params, &self.batch, id.index);
                        prove_bucket(circuits, id.index, tree.bucket_values(id.index)?, &selected)?
                    } else {
                        let [l, r] = id.children();
                        prove_node(circuits, id, &self.child(tree, l)?, &self.child(tree, r)?)?
                    };
                    progress(id);
                    Ok(p)
                })
                .collect::<Result<_, Error>>()?;
            for p in proved {
                self.nodes.insert(p.id, p);
            }
        }
        self.refresh_siblings(tree)
    }

    fn child(&self, tree: &Tree, id: NodeId) -> Result<Child, Error> {
        match self.nodes.get(&id) {
            Some(p) => Ok(Child::Proven(p.clone())),
            None => Ok(Child::Hash(tree.hash(id.level, id.index)?)),
        }
    }

    fn refresh_siblings(&mut self, tree: &impl NodeHashes) -> Result<(), Error> {
        self.siblings.clear();
        for id in self.nodes.keys() {
            if id.level < self.params.log_n {
                let s = id.sibling();
                if !self.nodes.contains_key(&s) {
                    self.siblings.insert(s, tree.node_hash(s)?);
                }
            }
        }
        Ok(())
    }

    /// The batch proof `π_I`: the root node's proof.
    pub fn root_proof(&self) -> &NodeProof {
        self.nodes.get(&NodeId::new(self.params.log_n, 0)).expect("a non-empty batch has a root proof")
    }

    /// The batch `I`, ascending.
    pub fn batch(&self) -> Vec<u64> {
        self.batch.iter().copied().collect()
    }

    /// The proof of node `id`, if it is in `T'_I`.
    pub fn node(&self, id: NodeId) -> Option<&NodeProof> {
        self.nodes.get(&id)
    }

    /// Number of node proofs held (`|T'_I|` above the buckets).
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// The statement `(C, {(i, a_i)}, d, sum, count)` this structure proves for `tree`.
    pub fn statement(&self, circuits: &Circuits, tree: &Tree) -> Result<Statement, Error> {
        let pairs: Vec<(u64, u64)> =
            self.batch.iter().map(|&i| Ok((i, tree.value(i)?))).collect::<Result<_, Error>>()?;
        Statement::new(circuits, tree.root(), &pairs)
    }

    /// `UpdBatchProof_pp` (§3.4): applies `changes` to `tree` and the batch, then re-proves
    /// only the buckets and ancestors of the changed leaves that are in the new `T'_I`.
    /// All changes are validated before anything is modified, and the update is all or
    /// nothing: if proving fails half-way, `self` and `tree` are left as they were.
    pub fn update(&mut self, circuits: &Circuits, tree: &mut Tree, changes: &[Change]) -> Result<UpdateReport, Error> {
        let params = self.params;
        if tree.params() != params || circuits.params() != params {
            return Err(Error::input("tree, circuits and batch structure have different parameters"));
        }
        let old: Vec<u64> = self.batch.iter().copied().collect();
        let plan = plan_update(params, &old, changes)?;
        // Validated: apply to a scratch copy of Λ_I, and to the tree with an undo log (the tree
        // can be large, so it is not copied).
        let mut undo: Vec<(u64, u64)> = Vec::new();
        let result = (|| {
            for c in changes {
                if let Change::Set { index, value } = *c {
                    undo.push((index, tree.value(index)?));
                    tree.set(index, value)?;
                }
            }
            let mut next = self.clone();
            next.batch = plan.batch.iter().copied().collect();
            for id in &plan.dropped {
                next.nodes.remove(id);
            }
            next.prove_nodes(circuits, tree, plan.reprove.clone(), |_| {})?;
            Ok(next)
        })();
        match result {
            Ok(next) => {
                *self = next;
                Ok(UpdateReport { reproved: plan.reprove, dropped: plan.dropped })
            }
            Err(e) => {
                for &(index, value) in undo.iter().rev() {
                    // The index was set a moment ago, so it is in range.
                    let _ = tree.set(index, value);
                }
                Err(e)
            }
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        crate::codec::encode_lambda(self)
    }

    /// Decodes `Λ_I`, checking every node proof's shape against `circuits` and that the nodes
    /// are exactly `T'_I` for the stored batch.
    pub fn from_bytes(circuits: &Circuits, bytes: &[u8]) -> Result<Self, Error> {
        let this = crate::codec::decode_lambda(circuits, bytes)?;
        if this.batch.is_empty() {
            return Err(Error::Malformed("batch structure: empty batch".into()));
        }
        let plan = plan_set(this.params, &this.batch);
        if this.nodes.keys().copied().collect::<BTreeSet<_>>() != plan {
            return Err(Error::Malformed("batch structure: nodes do not match the batch".into()));
        }
        let siblings: BTreeSet<NodeId> = plan
            .iter()
            .filter(|id| id.level < this.params.log_n && !plan.contains(&id.sibling()))
            .map(|id| id.sibling())
            .collect();
        if this.siblings.keys().copied().collect::<BTreeSet<_>>() != siblings {
            return Err(Error::Malformed("batch structure: sibling hashes do not match the batch".into()));
        }
        Ok(this)
    }

    /// Checks `Λ_I` against `tree`: every node proof verifies and carries the tree's Merkle
    /// hash, and every sibling hash matches. Use after loading a stored structure.
    pub fn check_against(&self, circuits: &Circuits, tree: &impl NodeHashes) -> Result<(), Error> {
        for (id, p) in &self.nodes {
            p.verify(circuits)?;
            if p.public_values().c != tree.node_hash(*id)? {
                return Err(Error::Verification(format!("batch structure: node {id} is for other leaves")));
            }
        }
        for (id, c) in &self.siblings {
            if *c != tree.node_hash(*id)? {
                return Err(Error::Verification(format!("batch structure: sibling {id} hash is stale")));
            }
        }
        Ok(())
    }
}

/// `Λ_I` written node by node, in the encoding of [`BatchProof::to_bytes`], each node checked
/// as [`BatchProof::from_node_proofs`] checks it (it verifies and carries the tree's hash), so
/// that the process assembling it holds one node proof at a time whatever `|I|` (the
/// distributed prover's finish step: thousands of ~130 KB proofs for a batch of 1,024).
pub struct LambdaStream {
    params: Params,
    nodes: Vec<NodeId>,
    next: usize,
}

impl LambdaStream {
    /// The stream for `batch`, and the encoding's first bytes.
    pub fn new(params: Params, batch: &[u64]) -> Result<(Self, Vec<u8>), Error> {
        let batch = check_batch(params, batch)?;
        let nodes: Vec<NodeId> = plan_set(params, &batch).into_iter().collect();
        let head = crate::codec::encode_lambda_head(params, &batch, nodes.len());
        Ok((Self { params, nodes, next: 0 }, head))
    }

    /// The nodes of `T'_I`, in the order [`LambdaStream::push`] takes them.
    pub fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }

    /// The next node's proof: it must be the next node of [`LambdaStream::nodes`], verify, and
    /// carry `hashes`' `C_v`. Returns its bytes of the encoding.
    pub fn push(&mut self, circuits: &Circuits, hashes: &impl NodeHashes, proof: &NodeProof) -> Result<Vec<u8>, Error> {
        let Some(&want) = self.nodes.get(self.next) else {
            return Err(Error::input(format!("node {}: T'_I has only {} nodes", proof.id, self.nodes.len())));
        };
        if proof.id != want {
            return Err(Error::input(format!("node {} given where node {want} is next", proof.id)));
        }
        if circuits.params() != self.params {
            return Err(Error::input("circuits and batch structure have different parameters"));
        }
        proof.verify(circuits)?;
        if proof.public_values().c != hashes.node_hash(want)? {
            return Err(Error::Verification(format!("batch structure: node {want} is for other leaves")));
        }
        self.next += 1;
        Ok(crate::codec::encode_lambda_node(proof))
    }

    /// The encoding's last bytes (the sibling hashes), once every node was pushed.
    pub fn finish(self, hashes: &impl NodeHashes) -> Result<Vec<u8>, Error> {
        if self.next != self.nodes.len() {
            return Err(Error::input(format!("{} of {} node proofs given", self.next, self.nodes.len())));
        }
        let plan: BTreeSet<NodeId> = self.nodes.iter().copied().collect();
        let mut siblings = BTreeMap::new();
        for id in &self.nodes {
            if id.level < self.params.log_n && !plan.contains(&id.sibling()) {
                siblings.insert(id.sibling(), hashes.node_hash(id.sibling())?);
            }
        }
        Ok(crate::codec::encode_lambda_tail(&siblings))
    }
}

/// File names of a Reckle proof directory, as written by `prover reckle prove` and
/// `prover fetch`, and read by `prover reckle verify` / `update`.
pub mod files {
    /// [`super::Statement`] as JSON.
    pub const STATEMENT: &str = "statement.json";
    /// The root [`crate::NodeProof`] (binary).
    pub const PROOF: &str = "proof.bin";
    /// `Λ_I` ([`super::BatchProof`], binary); needed only to update.
    pub const LAMBDA: &str = "lambda.bin";
    /// Every leaf value, `u64` little-endian ([`super::encode_values`]); needed only to update.
    pub const LEAVES: &str = "leaves.bin";
}

/// Encodes leaf values as consecutive little-endian `u64`.
pub fn encode_values(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Decodes [`encode_values`]; the length must be a multiple of 8.
pub fn decode_values(bytes: &[u8]) -> Result<Vec<u64>, Error> {
    if !bytes.len().is_multiple_of(8) {
        return Err(Error::Malformed(format!("leaf values: {} bytes is not a multiple of 8", bytes.len())));
    }
    Ok(bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
}
