//! The scaling decision for a ProverPool, as a pure function of queue counts and the pool's
//! settings (no I/O), so every rule is unit-tested.
//!
//! ```text
//! secondsPerTask(kind) = busy(kind) / completed(kind)        (default when completed = 0)
//! backlogSeconds       = Σ_kind (pending + running + delayed) × secondsPerTask(kind)
//! wanted               = ceil(backlogSeconds / targetBacklogSeconds)
//! desired              = clamp(wanted, minReplicas, maxReplicas)
//! desired              = max(desired, min(busyWorkers, max(current, maxReplicas)))
//! ```
//! where busyWorkers = the pool's running tasks (one task per worker). The last line is the
//! busy floor: a pool is never scaled below the workers that hold a task, so a scale-down
//! cannot kill workers mid-proof (the failure of scaling proof workers on queue length alone,
//! where an HPA/KEDA scale-down terminated busy provers). The floor is capped at
//! max(current, maxReplicas) so that stale leases (tasks of dead workers not yet redelivered)
//! cannot push the pool above its maximum; they never lower it either.
//!
//! A scale-down also waits `scaleDownDelay` after the last change (scale-ups are immediate).

use std::time::Duration;

/// Counts of one task kind (from `Queue::stats`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KindLoad {
    pub pending: u64,
    pub running: u64,
    pub delayed: u64,
    pub completed: u64,
    pub busy: Duration,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PoolSettings {
    pub min_replicas: u32,
    pub max_replicas: u32,
    pub target_backlog_seconds: f64,
    pub default_seconds_per_task: f64,
    pub scale_down_delay: Duration,
}

impl Default for PoolSettings {
    fn default() -> Self {
        Self {
            min_replicas: 0,
            max_replicas: 1,
            target_backlog_seconds: DEFAULT_TARGET_BACKLOG_SECONDS,
            default_seconds_per_task: DEFAULT_SECONDS_PER_TASK,
            scale_down_delay: Duration::from_secs(DEFAULT_SCALE_DOWN_DELAY_SECONDS),
        }
    }
}

pub const DEFAULT_TARGET_BACKLOG_SECONDS: f64 = 60.0;
pub const DEFAULT_SECONDS_PER_TASK: f64 = 10.0;
pub const DEFAULT_SCALE_DOWN_DELAY_SECONDS: u64 = 60;

#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    pub desired: u32,
    /// Running tasks over the pool's kinds.
    pub busy_workers: u64,
    pub pending: u64,
    pub running: u64,
    pub delayed: u64,
    /// Seconds per task over all kinds with data (total busy / total completed), or the default.
    pub seconds_per_task: f64,
    /// Seconds of work in the queues.
    pub backlog_seconds: f64,
    /// Human-readable reason (status.message).
    pub reason: String,
}

fn seconds_per_task(load: &KindLoad, default: f64) -> f64 {
    if load.completed == 0 {
        default
    } else {
        load.busy.as_secs_f64() / load.completed as f64
    }
}

/// Decides the replicas of a pool now running `current` replicas. `since_last_scale` is the
/// time since the operator last changed them (None: never, or unknown).
pub fn decide(loads: &[KindLoad], settings: &PoolSettings, current: u32, since_last_scale: Option<Duration>) -> Decision {
    let min = settings.min_replicas;
    let max = settings.max_replicas.max(min);
    let default_spt = if settings.default_seconds_per_task.is_finite() && settings.default_seconds_per_task > 0.0 {
        settings.default_seconds_per_task
    } else {
        DEFAULT_SECONDS_PER_TASK
    };
    let target = if settings.target_backlog_seconds.is_finite() && settings.target_backlog_seconds > 0.0 {
        settings.target_backlog_seconds
    } else {
        DEFAULT_TARGET_BACKLOG_SECONDS
    };

    let (mut pending, mut running, mut delayed, mut completed) = (0u64, 0u64, 0u64, 0u64);
    let mut busy = Duration::ZERO;
    let mut backlog_seconds = 0.0;
    for l in loads {
        pending += l.pending;
        running += l.running;
        delayed += l.delayed;
        completed += l.completed;
        busy += l.busy;
        backlog_seconds += (l.pending + l.running + l.delayed) as f64 * seconds_per_task(l, default_spt);
    }
    let seconds_per_task = if completed == 0 { default_spt } else { busy.as_secs_f64() / completed as f64 };

    let wanted_f = (backlog_seconds / target).ceil();
    let wanted = if wanted_f >= u32::MAX as f64 { u32::MAX } else { wanted_f as u32 };
    let mut desired = wanted.clamp(min, max);
    let mut reason = format!(
        "{pending} pending + {running} running + {delayed} delayed tasks × {seconds_per_task:.2} s/task = {backlog_seconds:.0} s of work; {target} s per worker wants {wanted}, within [{min}, {max}]: {desired}"
    );

    let busy_workers = running;
    let floor = u32::try_from(busy_workers).unwrap_or(u32::MAX).min(current.max(max));
    if desired < floor {
        desired = floor;
        reason.push_str(&format!("; kept at {floor}: {busy_workers} workers are busy"));
    }

    if desired < current {
        if let Some(since) = since_last_scale {
            if since < settings.scale_down_delay {
                reason.push_str(&format!(
                    "; scale-down to {desired} waits {}s after the last change",
                    (settings.scale_down_delay - since).as_secs()
                ));
                desired = current;
            }
        }
    }

    Decision { desired, busy_workers, pending, running, delayed, seconds_per_task, backlog_seconds, reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(pending: u64, running: u64, completed: u64, busy_secs: u64) -> KindLoad {
        KindLoad { pending, running, delayed: 0, completed, busy: Duration::from_secs(busy_secs) }
    }

    fn settings(min: u32, max: u32, target: f64) -> PoolSettings {
        PoolSettings {
            min_replicas: min,
            max_replicas: max,
            target_backlog_seconds: target,
            default_seconds_per_task: 10.0,
            scale_down_delay: Duration::ZERO,
        }
    }

    #[test]
    fn backlog_over_target_gives_replicas() {
        // 30 tasks × 4 s = 120 s of work, 30 s per worker → 4 workers.
        let d = decide(&[load(30, 0, 10, 40)], &settings(0, 10, 30.0), 0, None);
        assert_eq!(d.desired, 4);
        assert_eq!(d.seconds_per_task, 4.0);
        assert_eq!(d.backlog_seconds, 120.0);
        // One more task rounds up.
        let d = decide(&[load(31, 0, 10, 40)], &settings(0, 10, 30.0), 0, None);
        assert_eq!(d.desired, 5);
    }

    #[test]
    fn clamped_to_min_and_max() {
        let d = decide(&[load(1000, 0, 1, 10)], &settings(1, 6, 60.0), 2, None);
        assert_eq!(d.desired, 6);
        let d = decide(&[load(1, 0, 1, 1)], &settings(3, 6, 60.0), 5, None);
        assert_eq!(d.desired, 3);
    }

    #[test]
    fn zero_backlog_goes_to_min() {
        let d = decide(&[load(0, 0, 50, 500)], &settings(0, 8, 60.0), 8, None);
        assert_eq!(d.desired, 0);
        let d = decide(&[load(0, 0, 50, 500), KindLoad::default()], &settings(2, 8, 60.0), 8, None);
        assert_eq!(d.desired, 2);
    }

    #[test]
    fn no_throughput_data_uses_the_default() {
        // No completions yet: 10 s per task (the default), 12 tasks = 120 s, 60 s per worker.
        let d = decide(&[load(12, 0, 0, 0)], &settings(0, 10, 60.0), 0, None);
        assert_eq!(d.seconds_per_task, 10.0);
        assert_eq!(d.desired, 2);
        let mut s = settings(0, 10, 60.0);
        s.default_seconds_per_task = 30.0;
        assert_eq!(decide(&[load(12, 0, 0, 0)], &s, 0, None).desired, 6);
        // A nonsensical default falls back to 10 s.
        s.default_seconds_per_task = 0.0;
        assert_eq!(decide(&[load(12, 0, 0, 0)], &s, 0, None).desired, 2);
    }

    #[test]
    fn never_below_busy_workers() {
        // 5 tasks running, nothing waiting, fast tasks: the backlog alone would want 1 worker,
        // but 5 are busy, so the pool of 7 shrinks to 5, not 1.
        let d = decide(&[load(0, 5, 100, 100)], &settings(0, 10, 60.0), 7, None);
        assert_eq!(d.busy_workers, 5);
        assert_eq!(d.desired, 5);
        assert!(d.reason.contains("5 workers are busy"), "{}", d.reason);
        // The busy floor wins over minReplicas and over a lowered maxReplicas while the
        // pool still runs that many workers.
        let d = decide(&[load(0, 6, 100, 100)], &settings(0, 3, 60.0), 6, None);
        assert_eq!(d.desired, 6);
        // Once they finish, the pool goes down to max.
        let d = decide(&[load(0, 0, 100, 100)], &settings(0, 3, 60.0), 6, None);
        assert_eq!(d.desired, 0);
    }

    #[test]
    fn stale_leases_do_not_push_above_max() {
        // 9 leases held (e.g. of workers that died) on a pool of 2 with max 4.
        let d = decide(&[load(0, 9, 100, 100)], &settings(0, 4, 60.0), 2, None);
        assert_eq!(d.desired, 4);
    }

    #[test]
    fn kinds_weighted_by_their_own_speed() {
        // 10 slow tasks (60 s) and 100 fast ones (0.6 s): 600 + 60 = 660 s → 11 at 60 s each.
        let slow = load(10, 0, 10, 600);
        let fast = KindLoad { pending: 100, running: 0, delayed: 0, completed: 10, busy: Duration::from_secs(6) };
        let d = decide(&[slow, fast], &settings(0, 50, 60.0), 0, None);
        assert!((d.backlog_seconds - 660.0).abs() < 1e-6, "{}", d.backlog_seconds);
        assert_eq!(d.desired, 11);
        assert_eq!(d.pending, 110);
    }

    #[test]
    fn delayed_retries_count_as_work() {
        let l = KindLoad { pending: 0, running: 0, delayed: 7, completed: 0, busy: Duration::ZERO };
        let d = decide(&[l], &settings(0, 10, 10.0), 0, None);
        assert_eq!(d.desired, 7);
        assert_eq!(d.delayed, 7);
    }

    #[test]
    fn scale_down_waits_for_the_delay_scale_up_does_not() {
        let mut s = settings(0, 10, 60.0);
        s.scale_down_delay = Duration::from_secs(60);
        // Down: held at current within the delay, allowed after it or with no record.
        let idle = [load(0, 0, 1, 1)];
        assert_eq!(decide(&idle, &s, 4, Some(Duration::from_secs(10))).desired, 4);
        assert_eq!(decide(&idle, &s, 4, Some(Duration::from_secs(61))).desired, 0);
        assert_eq!(decide(&idle, &s, 4, None).desired, 0);
        // Up: immediate.
        let busy = [load(600, 0, 1, 1)];
        assert_eq!(decide(&busy, &s, 4, Some(Duration::from_secs(1))).desired, 10);
    }

    #[test]
    fn min_above_max_is_min() {
        let d = decide(&[load(0, 0, 0, 0)], &settings(5, 2, 60.0), 0, None);
        assert_eq!(d.desired, 5);
    }

    #[test]
    fn huge_backlog_saturates() {
        let d = decide(&[load(u64::MAX / 4, 0, 1, 1_000_000)], &settings(0, u32::MAX, 1.0), 0, None);
        assert_eq!(d.desired, u32::MAX);
    }
}
