//! The runtime under every primitive: device handle, NVRTC, module cache, the one typed launch, staging, scratch.
//!
//! Nothing here names a primitive: primitives sit above and import from here.

pub mod device;
pub mod diagnose;
pub mod fault;
pub mod launch;
pub mod module_cache;
pub mod nvrtc;
pub mod phases;
pub mod program;
pub mod scratch;
pub mod shape;
pub mod staging;
pub mod status;
