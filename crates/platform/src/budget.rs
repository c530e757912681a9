//! The planner's request budget (issue 32 item 4): a bound on the memory that requests being
//! received and decoded hold at once, whatever the number of callers.
//!
//! A gRPC message arrives as a 5-byte prefix (a compression flag and the length) and then its
//! bytes; tonic buffers the bytes and prost decodes them, which may take up to
//! [`api::MAX_DECODED_PER_ENCODED_BYTE`] bytes per byte received. [`Metered`] reads the prefix
//! as it passes and reserves `length × (1 +` that factor`)` of the [`RequestBudget`] before
//! the message's bytes are read. The reservation is held until the call has answered (the
//! decoded request lives that long), or, on a stream, until the next message's prefix arrives
//! (the handler has taken the previous one by then). A call therefore holds at most one
//! message's reservation, and never waits while holding one: there is no deadlock.
//!
//! When the budget cannot cover a message the call is answered `UNAVAILABLE` (retry later;
//! gRPC clients with a retry policy do) and its bytes are never read. A message that could
//! never fit is refused with `RESOURCE_EXHAUSTED`. An `UploadInput` also holds a part of the
//! object store's multipart upload while it runs ([`RequestBudget::reserve`] from the handler).
//!
//! Only calls that passed authentication reach [`Metered`] ([`crate::grpc_auth`]): an
//! unauthenticated body is dropped unread and costs nothing.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http_body::{Body as HttpBody, Frame, SizeHint};
use tonic::Status;

/// The flag that sets the budget, named in refusals.
pub const FLAG: &str = "--request-budget-bytes";

/// Bytes of the budget a message of `len` bytes takes: the bytes and their decoded form.
pub fn message_cost(len: u64) -> u64 {
    len.saturating_mul(1 + api::MAX_DECODED_PER_ENCODED_BYTE as u64)
}

/// The largest message a budget of `total` bytes can take at all.
pub fn largest_message(total: u64) -> u64 {
    total / (1 + api::MAX_DECODED_PER_ENCODED_BYTE as u64)
}

/// Bytes shared by every call in flight (see the module doc).
#[derive(Debug)]
pub struct RequestBudget {
    total: u64,
    used: Mutex<u64>,
}

impl RequestBudget {
    pub fn new(total: u64) -> Arc<Self> {
        metrics::gauge!("prover_request_budget_bytes").set(total as f64);
        metrics::gauge!("prover_request_budget_used_bytes").set(0.0);
        Arc::new(Self { total, used: Mutex::new(0) })
    }

    /// The budget's size.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes reserved now.
    pub fn used(&self) -> u64 {
        *self.used.lock().expect("budget")
    }

    /// Reserves `bytes` for `what` (named in the refusal), or refuses: `RESOURCE_EXHAUSTED`
    /// when it is more than the whole budget, `UNAVAILABLE` when other calls hold too much.
    pub fn reserve(self: &Arc<Self>, bytes: u64, what: &str) -> Result<Reservation, Status> {
        if bytes > self.total {
            metrics::counter!("prover_request_budget_refusals_total", "reason" => "too_large").increment(1);
            return Err(Status::resource_exhausted(format!(
                "{what} needs {bytes} bytes of the planner's request budget, which is {} bytes in all ({FLAG}): \
                 send at most {} bytes per message, or put the input in an upload",
                self.total,
                largest_message(self.total)
            )));
        }
        let mut used = self.used.lock().expect("budget");
        if *used + bytes > self.total {
            let held = *used;
            drop(used);
            metrics::counter!("prover_request_budget_refusals_total", "reason" => "busy").increment(1);
            return Err(Status::unavailable(format!(
                "the planner is busy: {what} needs {bytes} bytes of its request budget and other calls hold {held} of its {} \
                 ({FLAG}); retry shortly",
                self.total
            )));
        }
        *used += bytes;
        metrics::gauge!("prover_request_budget_used_bytes").set(*used as f64);
        Ok(Reservation { budget: self.clone(), bytes })
    }
}

/// Bytes of a [`RequestBudget`] held until dropped.
#[derive(Debug)]
pub struct Reservation {
    budget: Arc<RequestBudget>,
    bytes: u64,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut used = self.budget.used.lock().expect("budget");
        *used -= self.bytes;
        metrics::gauge!("prover_request_budget_used_bytes").set(*used as f64);
    }
}

/// The reservation of a call's current message, shared by its body and its answer: the call
/// holds it until both are gone.
pub type Held = Arc<Mutex<Option<Reservation>>>;

/// A request body that reserves each gRPC message's cost before its bytes are read.
pub struct Metered<B> {
    inner: B,
    budget: Arc<RequestBudget>,
    held: Held,
    /// The method, named in refusals.
    method: String,
    /// Bytes of the current message's prefix seen so far.
    prefix: [u8; 5],
    prefix_len: usize,
    /// Bytes of the current message's body still to pass.
    remaining: u64,
    /// Set once a message was refused: the body ends there.
    failed: bool,
}

impl<B> Metered<B> {
    pub fn new(inner: B, budget: Arc<RequestBudget>, held: Held, method: String) -> Self {
        Self { inner, budget, held, method, prefix: [0; 5], prefix_len: 0, remaining: 0, failed: false }
    }

    /// Walks `data` through the message framing, reserving each message whose prefix completes.
    fn account(&mut self, data: &Bytes) -> Result<(), Status> {
        let mut rest = data.clone();
        while rest.has_remaining() {
            if self.remaining > 0 {
                let n = self.remaining.min(rest.remaining() as u64);
                rest.advance(n as usize);
                self.remaining -= n;
                continue;
            }
            let take = (5 - self.prefix_len).min(rest.remaining());
            self.prefix[self.prefix_len..self.prefix_len + take].copy_from_slice(&rest[..take]);
            rest.advance(take);
            self.prefix_len += take;
            if self.prefix_len < 5 {
                break;
            }
            self.prefix_len = 0;
            let len = u32::from_be_bytes([self.prefix[1], self.prefix[2], self.prefix[3], self.prefix[4]]) as u64;
            // The previous message has been handed on: its reservation goes first, so that a
            // call never waits while holding one.
            let mut held = self.held.lock().expect("held");
            *held = None;
            if len > 0 {
                let what = format!("a {len}-byte message to {}", self.method);
                *held = Some(self.budget.reserve(message_cost(len), &what)?);
            }
            self.remaining = len;
        }
        Ok(())
    }
}

impl<B> HttpBody for Metered<B>
where
    B: HttpBody<Data = Bytes, Error = Status> + Unpin,
{
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        if self.failed {
            return Poll::Ready(None);
        }
        let frame = match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => frame,
            other => return other,
        };
        if let Some(data) = frame.data_ref() {
            let data = data.clone();
            if let Err(status) = self.account(&data) {
                self.failed = true;
                tracing::warn!(method = %self.method, "{}", status.message());
                return Poll::Ready(Some(Err(status)));
            }
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.failed || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(messages: &[usize]) -> Vec<u8> {
        let mut out = Vec::new();
        for &n in messages {
            out.push(0);
            out.extend_from_slice(&(n as u32).to_be_bytes());
            out.extend(std::iter::repeat_n(7u8, n));
        }
        out
    }

    /// Feeds `bytes` to `account` in pieces of `step`, recording the bytes held after each.
    fn feed(m: &mut Metered<tonic::body::Body>, bytes: &[u8], step: usize) -> Result<Vec<u64>, Status> {
        let mut seen = Vec::new();
        for piece in bytes.chunks(step) {
            m.account(&Bytes::copy_from_slice(piece))?;
            seen.push(m.budget.used());
        }
        Ok(seen)
    }

    fn metered(total: u64) -> Metered<tonic::body::Body> {
        Metered::new(tonic::body::Body::empty(), RequestBudget::new(total), Held::default(), "/t/M".into())
    }

    #[test]
    fn each_message_is_reserved_when_its_prefix_completes_and_released_at_the_next() {
        for step in [1, 2, 3, 5, 7, 1000] {
            let mut m = metered(message_cost(100));
            let seen = feed(&mut m, &framed(&[100, 40, 0, 60]), step).unwrap();
            // Never more than one message's cost at once; the largest is seen whole when the
            // pieces are smaller than it.
            let max = *seen.iter().max().unwrap();
            assert!(max <= message_cost(100), "step {step}");
            if step < 100 {
                assert_eq!(max, message_cost(100), "step {step}");
            }
            // The last message's reservation is held until the call drops it.
            assert_eq!(m.budget.used(), message_cost(60), "step {step}");
            *m.held.lock().unwrap() = None;
            assert_eq!(m.budget.used(), 0);
        }
    }

    #[test]
    fn a_message_over_what_is_free_is_unavailable_and_over_the_whole_budget_exhausted() {
        let budget = RequestBudget::new(message_cost(100));
        let _other = budget.reserve(message_cost(50), "another call").unwrap();
        let mut m = Metered::new(tonic::body::Body::empty(), budget.clone(), Held::default(), "/t/M".into());
        let e = feed(&mut m, &framed(&[60]), 1000).unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unavailable);
        assert!(e.message().contains(FLAG), "{}", e.message());
        let mut m = Metered::new(tonic::body::Body::empty(), budget.clone(), Held::default(), "/t/M".into());
        let e = feed(&mut m, &framed(&[101]), 1000).unwrap_err();
        assert_eq!(e.code(), tonic::Code::ResourceExhausted);
        assert!(e.message().contains(FLAG) && e.message().contains("upload"), "{}", e.message());
        drop(_other);
        assert_eq!(budget.used(), 0);
    }
}
