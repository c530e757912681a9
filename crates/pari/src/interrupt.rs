//! Stopping a proof part-way: the caller's [`Interrupt`], which the prover reads between its
//! steps.
//!
//! A proof is one long computation: minutes for the wraps (1.6M SR1CS rows on BW6-767). A
//! service that gives up on a task (its deadline passed, its lease was lost) cannot stop a
//! thread from outside; what it can do is raise a flag that the computation reads. The prover
//! reads it after synthesis, between the FFTs, before each MSM and before each window of an
//! MSM, and returns [`Error::Interrupted`](crate::Error::Interrupted) at the first read that finds it
//! raised; the longest stretch without a read is one MSM window (a few percent of a prove).
//! [`Interrupt::NEVER`] (what [`prove`](crate::prove) passes) is never raised.

use crate::Error;

/// The caller's "stop now" flag, read between the prover's steps. It may be read from several
/// threads at once (an MSM's windows run in parallel), so the closure is `Sync`.
#[derive(Clone, Copy)]
pub struct Interrupt<'a>(Option<&'a (dyn Fn() -> bool + Sync)>);

impl<'a> Interrupt<'a> {
    /// Never raised: the proof runs to its end.
    pub const NEVER: Interrupt<'static> = Interrupt(None);

    /// Raised whenever `raised()` returns true (an atomic flag's load, typically).
    pub fn new(raised: &'a (dyn Fn() -> bool + Sync)) -> Self {
        Interrupt(Some(raised))
    }

    /// Whether the caller wants the proof stopped.
    pub fn is_raised(&self) -> bool {
        self.0.is_some_and(|f| f())
    }

    /// `Err(Error::Interrupted)` once raised.
    pub fn check(&self) -> Result<(), Error> {
        if self.is_raised() {
            Err(Error::Interrupted)
        } else {
            Ok(())
        }
    }
}

impl std::fmt::Debug for Interrupt<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Interrupt(caller's flag)" } else { "Interrupt::NEVER" })
    }
}
