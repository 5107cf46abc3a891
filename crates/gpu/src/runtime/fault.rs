//! Sticky device errors: which driver errors lose a context, the per-context "lost" record shared by every handle on it, primary-context reset, and poison-free locking.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use cudarc::driver::{result as driver_result, sys as driver_sys, DriverError};

/// Lock `mutex`, recovering the guard if another thread panicked while holding it. Every value
/// the crate keeps behind a mutex (caches, scratch buffers) is valid at every await-free step, so
/// a panic elsewhere never leaves it half-updated in a way that matters: a lock is never poisoned
/// for good.
pub(crate) fn lock_recover<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The driver errors after which a context can run nothing more ("sticky" errors: the CUDA
/// documentation says the process must terminate, or the primary context be reset).
const STICKY_ERRORS: [driver_sys::CUresult; 12] = {
    use driver_sys::CUresult::*;
    [
        CUDA_ERROR_ECC_UNCORRECTABLE,
        CUDA_ERROR_ILLEGAL_ADDRESS,
        CUDA_ERROR_LAUNCH_TIMEOUT,
        CUDA_ERROR_CONTEXT_IS_DESTROYED,
        CUDA_ERROR_ASSERT,
        CUDA_ERROR_HARDWARE_STACK_ERROR,
        CUDA_ERROR_ILLEGAL_INSTRUCTION,
        CUDA_ERROR_MISALIGNED_ADDRESS,
        CUDA_ERROR_INVALID_ADDRESS_SPACE,
        CUDA_ERROR_INVALID_PC,
        CUDA_ERROR_LAUNCH_FAILED,
        CUDA_ERROR_EXTERNAL_DEVICE,
    ]
};

/// Whether `error` leaves its context unusable.
pub fn is_sticky(error: DriverError) -> bool {
    STICKY_ERRORS.contains(&error.0)
}

/// What lost a context: the call that saw the sticky error first, and that error.
#[derive(Clone, Debug)]
pub(crate) struct Loss {
    pub(crate) call: String,
    pub(crate) cause: DriverError,
}

/// The health of one CUDA context, shared by every handle running on it: once a sticky error is
/// seen through any of them, all of them report it.
#[derive(Debug, Default)]
pub(crate) struct ContextHealth {
    loss: OnceLock<Loss>,
}

impl ContextHealth {
    /// Record that `call` lost the context to `cause` (the first record wins) and return the
    /// record in force.
    pub(crate) fn mark_lost(&self, call: String, cause: DriverError) -> &Loss {
        self.loss.get_or_init(|| Loss { call, cause })
    }

    /// The loss, if the context is lost.
    pub(crate) fn loss(&self) -> Option<&Loss> {
        self.loss.get()
    }
}

/// The health of each device's primary context in this process, by ordinal: the current record,
/// replaced by a fresh one when a lost primary context is reset.
static PRIMARY_HEALTH: Mutex<Vec<(usize, Arc<ContextHealth>)>> = Mutex::new(Vec::new());

/// The health record of device `ordinal`'s primary context, for a handle about to be opened on
/// it. When a handle of this process saw that context lost, the context is reset first (so that
/// the new handle works) and a fresh record replaces the lost one; the handles of the lost context
/// keep reporting the loss, and leak (never free) what they held in it, since its driver handles
/// are invalid after the reset.
pub(crate) fn open_primary_health(ordinal: usize) -> Result<Arc<ContextHealth>, DriverError> {
    let mut records = lock_recover(&PRIMARY_HEALTH);
    let Some(index) = records.iter().position(|(o, _)| *o == ordinal) else {
        let health = Arc::new(ContextHealth::default());
        records.push((ordinal, health.clone()));
        return Ok(health);
    };
    if records[index].1.loss().is_some() {
        driver_result::init()?;
        let ordinal_i32 = i32::try_from(ordinal)
            .map_err(|_| DriverError(driver_sys::CUresult::CUDA_ERROR_INVALID_DEVICE))?;
        let device = driver_result::device::get(ordinal_i32)?;
        // SAFETY: the primary context of `device` is lost (a sticky error was seen on it), so
        // nothing can run on it any more. Every twophase handle on it shares the lost record,
        // so they touch the device no more and leak rather than free their buffers, streams and
        // modules when dropped. The driver allows retained references to be released after a
        // reset (it does not release them itself).
        // A reset may first answer with the sticky error it clears; a second one then succeeds.
        let reset = || unsafe { driver_sys::cuDevicePrimaryCtxReset_v2(device) }.result();
        reset().or_else(|error| {
            if is_sticky(error) {
                reset()
            } else {
                Err(error)
            }
        })?;
        if let Some(loss) = records[index].1.loss() {
            remember_reset(ordinal, loss.clone());
        }
        records[index].1 = Arc::new(ContextHealth::default());
    }
    Ok(records[index].1.clone())
}

/// The loss behind the last reset of each device's primary context in this process, by ordinal.
static RESET_LOSSES: Mutex<Vec<(usize, Loss)>> = Mutex::new(Vec::new());

fn remember_reset(ordinal: usize, loss: Loss) {
    let mut losses = lock_recover(&RESET_LOSSES);
    losses.retain(|(o, _)| *o != ordinal);
    losses.push((ordinal, loss));
}

/// The loss that made this process reset device `ordinal`'s primary context last, if any.
pub(crate) fn last_reset_loss(ordinal: usize) -> Option<Loss> {
    lock_recover(&RESET_LOSSES)
        .iter()
        .find(|(o, _)| *o == ordinal)
        .map(|(_, loss)| loss.clone())
}

/// The health record of device `ordinal`'s primary context as it stands (no reset), for a handle
/// made on a stream of that context.
pub(crate) fn primary_health(ordinal: usize) -> Arc<ContextHealth> {
    let mut records = lock_recover(&PRIMARY_HEALTH);
    if let Some((_, health)) = records.iter().find(|(o, _)| *o == ordinal) {
        return health.clone();
    }
    let health = Arc::new(ContextHealth::default());
    records.push((ordinal, health.clone()));
    health
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_is_recovered() {
        let mutex = Arc::new(Mutex::new(41));
        let poisoner = mutex.clone();
        let joined = std::thread::spawn(move || {
            let _guard = poisoner.lock().expect("first lock");
            panic!("poison the lock on purpose");
        })
        .join();
        assert!(joined.is_err());
        assert!(mutex.is_poisoned());
        *lock_recover(&mutex) += 1;
        assert_eq!(*lock_recover(&mutex), 42);
    }

    #[test]
    fn sticky_errors_are_told_from_recoverable_ones() {
        let sticky = DriverError(driver_sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
        let recoverable = DriverError(driver_sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        assert!(is_sticky(sticky));
        assert!(!is_sticky(recoverable));
    }

    #[test]
    fn the_first_loss_is_kept() {
        let health = ContextHealth::default();
        assert!(health.loss().is_none());
        let illegal = DriverError(driver_sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
        let failed = DriverError(driver_sys::CUresult::CUDA_ERROR_LAUNCH_FAILED);
        health.mark_lost("first".into(), illegal);
        health.mark_lost("second".into(), failed);
        let loss = health.loss().expect("lost");
        assert_eq!(loss.call, "first");
        assert_eq!(loss.cause.0, illegal.0);
    }
}
